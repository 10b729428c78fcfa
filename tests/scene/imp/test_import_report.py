"""What the report says, and what is built once, when several files are imported together."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene.importer import import_files  # noqa: E402

from ..scene_fixtures import material_text, mesh_text, write_x  # noqa: E402
from .test_materials_textures import PNG_1X1  # noqa: E402

pytestmark = [pytest.mark.blender, pytest.mark.usefixtures("empty_scene")]

TRI = np.array([[0, 0, 0], [1, 0, 0], [0, 0, 1]], dtype=np.float64)
NOTE = "template Note { <A1B2C3D4-0000-0000-0000-000000000001> STRING text; }"


def file_with(path: Path, *, texture: str | None = None, note: bool = False) -> Path:
    mat = material_text("Skin" if texture else None, (1, 1, 1, 1), 5, (0, 0, 0), (0, 0, 0), texture)
    parts = [NOTE, 'Note { "hello"; }'] if note else []
    parts.append(mesh_text("T", TRI, [[0, 1, 2]], materials=[mat]))
    return write_x(path, parts)


def test_an_uninterpreted_template_is_named_once_for_several_files(tmp_path: Path) -> None:
    """Three files with a Note each said "Note x1 (...), Note x1 (...), Note x1 (...)"."""
    files = [file_with(tmp_path / f"n{i}.x", note=True) for i in range(3)]
    result = import_files(files)
    assert [e for e in result.extras if e.startswith("Note")] == [
        "Note x3 (kept as custom property xof_extras)"
    ]
    assert result.summary().count("Note x") == 1


def test_an_image_two_files_use_loads_once(tmp_path: Path) -> None:
    (tmp_path / "skin.png").write_bytes(PNG_1X1)
    files = [file_with(tmp_path / f"t{i}.x", texture="skin.png") for i in range(2)]
    result = import_files(files)
    assert len(result.images) == 1
    assert [i.name for i in bpy.data.images if i.source == "FILE"] == ["skin.png"]


def test_a_nameless_textured_material_is_called_unnamed(tmp_path: Path) -> None:
    """A mesh without UVs whose material has no name was reported as "material None"."""
    (tmp_path / "a.png").write_bytes(PNG_1X1)
    mat = material_text(None, (1, 1, 1, 1), 5, (0, 0, 0), (0, 0, 0), "a.png")
    path = write_x(tmp_path / "u.x", [mesh_text("T", TRI, [[0, 1, 2]], materials=[mat])])
    result = import_files([path])
    said = [w for w in result.warnings if "texture coordinates" in w]
    assert len(said) == 1 and "an unnamed material" in said[0] and "None" not in said[0]
