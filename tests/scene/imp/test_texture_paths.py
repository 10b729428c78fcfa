"""Texture paths a file names are looked for only inside the model's folder tree and the
user's texture folders, and only image files are taken; each refusal is reported."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")
from xof.addon.scene.imp.textures import is_image_file, locate_texture  # noqa: E402
from xof.addon.scene.importer import build_scene  # noqa: E402
from xof.addon.xfile.views.model import MaterialData, SceneData  # noqa: E402

from ..scene_fixtures import reset_blender  # noqa: E402
from .test_materials_textures import PNG_1X1, one_tri  # noqa: E402

pytestmark = pytest.mark.blender

TGA_2X1 = bytes([0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1, 0, 24, 0]) + b"\x00\x00\xff" * 2


@pytest.fixture(autouse=True)
def clean():
    reset_blender()


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Path]:
    """model/ holds the .x file; secret/ lies beside it, outside the model's tree."""
    model, secret, library = tmp_path / "model", tmp_path / "secret", tmp_path / "library"
    for folder in (model, model / "textures", secret, library):
        folder.mkdir()
    (secret / "key.png").write_bytes(PNG_1X1)
    (secret / "notes.txt").write_text("secret")
    (model / "fake.png").write_text("not an image at all")
    (model / "textures" / "ok.png").write_bytes(PNG_1X1)
    (model / "skin.tga").write_bytes(TGA_2X1)
    (library / "shared.png").write_bytes(PNG_1X1)
    os.symlink(secret / "key.png", model / "linked.png")
    return {"model": model, "secret": secret, "library": library}


def test_paths_that_leave_the_model_folder_are_not_followed(layout):
    model, secret = layout["model"], layout["secret"]
    for written in ("../secret/key.png", "../../../../../../../../etc/passwd",
                    str(secret / "key.png"), "/proc/self/environ", "/etc/passwd"):  # fmt: skip
        path, _ = locate_texture(written, model)
        assert path is None, written
    path, refusal = locate_texture(str(secret / "key.png"), model)
    assert refusal is not None and "outside" in refusal and str(secret / "key.png") in refusal


def test_a_bare_name_inside_the_tree_is_still_found(layout):
    model = layout["model"]
    # an absolute path from the exporter's machine: its tail is found in the model's tree
    ok = model / "textures" / "ok.png"
    assert locate_texture(r"C:\art\textures\ok.png", model) == (ok, None)
    assert locate_texture("../../elsewhere/textures/ok.png", model)[0] == ok
    assert locate_texture("skin.tga", model) == (model / "skin.tga", None)


def test_non_images_and_links_outside_are_refused(layout):
    model = layout["model"]
    path, refusal = locate_texture("fake.png", model)
    assert path is None and refusal is not None and "not an image" in refusal
    path, refusal = locate_texture("linked.png", model)
    assert path is None and refusal is not None and "outside" in refusal


def test_the_users_texture_folders_are_searched(layout):
    model, library = layout["model"], layout["library"]
    assert locate_texture("shared.png", model)[0] is None
    assert locate_texture("shared.png", model, (library,)) == (library / "shared.png", None)


def test_image_sniffing_by_content(tmp_path: Path):
    # the formats' published first bytes, whatever the name says
    samples = {
        "a.png": (PNG_1X1, True),
        "b.jpg": (b"\xff\xd8\xff\xe0\x00\x10JFIF\x00", True),
        "c.bmp": (b"BM" + bytes(60), True),
        "d.dds": (b"DDS " + bytes(124), True),
        "e.tga": (TGA_2X1, True),
        "f.png": (b"root:x:0:0:root:/root:/bin/bash\n", False),
        "g.tga": (b"HOME=/root\x00PATH=/usr/bin\x00", False),
        "h.jpg": (b"", False),
    }
    for name, (data, expected) in samples.items():
        (tmp_path / name).write_bytes(data)
        assert is_image_file(tmp_path / name) is expected, name
    assert is_image_file(tmp_path / "missing.png") is False


def test_import_reports_each_refusal_and_packs_nothing_from_outside(layout):
    model, secret = layout["model"], layout["secret"]
    written = [str(secret / "key.png"), "../secret/key.png", "fake.png", "linked.png",
               "/proc/self/environ", "textures/ok.png"]  # fmt: skip
    mats = [MaterialData(f"M{i}", np.ones(4), 0, np.zeros(3), np.zeros(3), w)
            for i, w in enumerate(written)]  # fmt: skip
    ctx = build_scene(SceneData(meshes=[one_tri(*mats)]), filepath=str(model / "model.x"))
    warnings = ctx.result.warnings
    assert any(str(secret / "key.png") in w and "outside" in w for w in warnings)
    assert any("fake.png" in w and "not an image" in w for w in warnings)
    assert any("linked.png" in w and "outside" in w for w in warnings)
    loaded = [img for img in bpy.data.images if img.has_data or os.path.isfile(
        bpy.path.abspath(img.filepath))]  # fmt: skip
    real = {Path(bpy.path.abspath(img.filepath)).resolve() for img in loaded}
    assert real == {(model / "textures" / "ok.png").resolve()}
    for img in bpy.data.images:  # no image points outside the model's folder
        target = Path(bpy.path.abspath(img.filepath))
        if target.is_absolute():
            assert model.resolve() in target.resolve().parents or not target.exists()
    with pytest.raises(RuntimeError, match="not found"):  # the placeholders have no file
        bpy.ops.file.pack_all()
    packed = [img.name for img in bpy.data.images if img.packed_file is not None]
    assert packed == [next(i.name for i in loaded)]


def test_names_the_file_system_cannot_take_are_just_not_found(tmp_path: Path):
    # found by the import fuzz: a 300-character name raised ENAMETOOLONG from the search
    for written in ("x" * 300 + ".png", "a\x00b.png", "dir/" + "y" * 5000):
        assert locate_texture(written, tmp_path) == (None, None)
