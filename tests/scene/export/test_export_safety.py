"""Exports that fail or have nothing to write say so: a failed export through the operator
keeps the previous file and its error names the path and the cause; an empty scene writes
a header-only file with a warning (issue 16)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")
from xof.addon.scene.export.exporter import export_scene  # noqa: E402
from xof.addon.scene.export.plan.options import ExportOptions  # noqa: E402

from ..scene_fixtures import reset_blender  # noqa: E402

pytestmark = pytest.mark.blender


@pytest.fixture
def addon(empty_scene: None, xof_enabled: None) -> None:
    """An empty file with xof enabled."""


def test_a_failed_export_keeps_the_previous_file(
    addon: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bpy.ops.mesh.primitive_cube_add()
    target = tmp_path / "model.x"
    assert bpy.ops.export_scene.x(filepath=str(target)) == {"FINISHED"}
    before = target.read_bytes()
    bpy.ops.mesh.primitive_uv_sphere_add()
    real_fdopen = os.fdopen

    def failing(fd: int, mode: str):  # the disk fills up half-way
        handle = real_fdopen(fd, mode)
        handle.write(b"xof 0303txt 0032 half")
        handle.close()
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fdopen", failing)
    with pytest.raises(RuntimeError) as caught:  # the operator's error report
        bpy.ops.export_scene.x(filepath=str(target))
    assert str(target) in str(caught.value)
    assert os.strerror(errno.ENOSPC) in str(caught.value)
    assert target.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.x"]


def test_a_read_only_file_is_refused_and_a_symlink_written_through(
    addon: None, tmp_path: Path
) -> None:
    """Issue 34 item 5: File > Export over a read-only file replaced it, and over a symlink
    replaced the link with a file and left the linked asset old; Blender's OBJ exporter
    refuses the one and writes through the other."""
    bpy.ops.mesh.primitive_cube_add()
    locked = tmp_path / "locked.x"
    locked.write_bytes(b"read-only asset")
    locked.chmod(0o444)
    with pytest.raises(RuntimeError, match=r"locked\.x: cannot write: the file is read-only"):
        bpy.ops.export_scene.x(filepath=str(locked))
    assert locked.read_bytes() == b"read-only asset"
    asset = tmp_path / "assets" / "cube.x"
    asset.parent.mkdir()
    asset.write_bytes(b"old asset")
    link = tmp_path / "cube.x"
    link.symlink_to(asset)
    assert bpy.ops.export_scene.x(filepath=str(link)) == {"FINISHED"}
    assert link.is_symlink()
    assert asset.read_bytes().startswith(b"xof 0303txt 0032")
    assert b"Mesh" in asset.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["assets", "cube.x", "locked.x"]
    assert sorted(p.name for p in asset.parent.iterdir()) == ["cube.x"]


def test_an_empty_scene_warns(tmp_path: Path) -> None:
    reset_blender()
    for obj in list(bpy.data.objects):
        bpy.data.objects.remove(obj)
    result = export_scene(str(tmp_path / "empty.x"))
    assert (tmp_path / "empty.x").read_bytes() == b"xof 0303txt 0032\n"
    assert result.warnings and "nothing to export" in result.warnings[0]
    assert "warnings" in result.summary()
    bpy.ops.mesh.primitive_cube_add()
    bpy.ops.object.select_all(action="DESELECT")
    selected = export_scene(str(tmp_path / "none.x"), ExportOptions(use_selection=True))
    assert "is selected" in selected.warnings[0]


def test_non_finite_values_are_written_with_a_warning(tmp_path: Path) -> None:
    """Issue 34 item 16: the exporter never writes NaN or inf without a warning. A cube with
    one vertex at NaN and one at inf; then one past float32's range once scaled."""
    reset_blender()
    bpy.ops.mesh.primitive_cube_add()
    cube = bpy.context.active_object
    cube.name = "Cube"
    co = np.array([v.co for v in cube.data.vertices], dtype=np.float32)
    co[0, 0] = np.nan
    co[1, 2] = np.inf
    cube.data.vertices.foreach_set("co", co.ravel())
    target = tmp_path / "bad.x"
    plain = {"use_normals": False, "use_uvs": False}  # the 8 positions only, none split
    result = export_scene(str(target), ExportOptions(**plain))
    bad = [w for w in result.warnings if "not finite" in w]
    assert bad == [
        "Mesh 'Cube': 2 value(s) not finite (NaN or infinite, or past 32-bit floats), written "
        "as 1.#QNAN0 / 1.#INF00 as D3DX does: many readers refuse them"
    ]
    text = target.read_text(encoding="ascii")
    assert text.count("1.#QNAN0") == 1 and text.count("1.#INF00") == 1
    co[0, 0], co[1, 2] = 1.0, 1e37  # finite, but past float32 once divided by the scale 0.01
    cube.data.vertices.foreach_set("co", co.ravel())
    assert not any(
        "not finite" in w for w in export_scene(str(target), ExportOptions(**plain)).warnings
    )
    scaled = export_scene(str(target), ExportOptions(global_scale=0.01, **plain))
    assert next(w for w in scaled.warnings if "not finite" in w).startswith(
        "Mesh 'Cube': 1 value(s) not finite (NaN or infinite, or past 32-bit floats)"
    )
    wide = export_scene(str(target), ExportOptions(global_scale=0.01, float_bits=64, **plain))
    assert not any("not finite" in w for w in wide.warnings)
