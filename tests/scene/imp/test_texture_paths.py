"""Texture paths a file names are looked for only inside the model's folder tree, its sibling
folders and the user's texture folders, and only image files are taken; each refusal is
reported as a refusal, with why."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")
from xof.addon.scene.imp.textures import is_image_file, locate_texture  # noqa: E402
from xof.addon.scene.importer import build_scene  # noqa: E402
from xof.addon.xfile.views.model import MaterialData, SceneData  # noqa: E402

from .test_materials_textures import PNG_1X1, one_tri  # noqa: E402

pytestmark = [pytest.mark.blender, pytest.mark.usefixtures("empty_scene")]

TGA_2X1 = bytes([0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1, 0, 24, 0]) + b"\x00\x00\xff" * 2


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Path]:
    """game/model/ holds the .x file; secret/ lies two levels up, outside the model's tree
    and its sibling folders (game/*)."""
    model, secret = tmp_path / "game" / "model", tmp_path / "secret"
    library = tmp_path / "library"
    for folder in (model, model / "textures", secret, library):
        folder.mkdir(parents=True)
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
    for written in ("../../secret/key.png", "../../../../../../../../etc/passwd",
                    str(secret / "key.png"), "/proc/self/environ", "/etc/passwd"):  # fmt: skip
        path, refusal = locate_texture(written, model)
        assert path is None, written
        # the file exists: refused, saying which and why, never "not found" (issue 34 item 18)
        assert refusal is not None and "outside the model's folder" in refusal, written
    path, refusal = locate_texture(str(secret / "key.png"), model)
    assert refusal == (
        f"refused {secret / 'key.png'}: outside the model's folder, its sibling folders and "
        "the texture folders"
    )
    assert locate_texture("../../../../../../../../etc/passwd", model)[1] == (
        "refused /etc/passwd: outside the model's folder, its sibling folders and the texture "
        "folders"
    )


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


def test_a_sibling_texture_folder_is_searched(tmp_path: Path):
    """Issue 34 item 18: ``models/a.x`` using ``../textures/a.png`` (the usual game layout)
    was reported "not found" although the file exists."""
    models, textures, art = tmp_path / "models", tmp_path / "textures", tmp_path / "Art"
    for folder in (models, textures, art / "chars"):
        folder.mkdir(parents=True)
    (textures / "a.png").write_bytes(PNG_1X1)
    (art / "chars" / "Hero.PNG").write_bytes(PNG_1X1)
    (textures / "notes.png").write_text("not an image")
    assert locate_texture("../textures/a.png", models) == (textures / "a.png", None)
    assert locate_texture("a.png", models) == (textures / "a.png", None)  # a bare name too
    assert locate_texture(r"..\art\CHARS\hero.png", models) == (art / "chars" / "Hero.PNG", None)
    assert locate_texture(str(textures / "a.png"), models) == (textures / "a.png", None)
    path, refusal = locate_texture("../textures/notes.png", models)
    assert path is None
    assert refusal == (
        f"refused {textures / 'notes.png'}: not an image file (its first bytes are no image "
        "format Blender reads)"
    )
    (tmp_path / "loose.png").write_bytes(PNG_1X1)  # in the parent itself: no sibling folder
    path, refusal = locate_texture("../loose.png", models)
    assert path is None and refusal is not None and "outside the model's folder" in refusal


def test_siblings_are_not_taken_under_a_file_systems_root(tmp_path: Path):
    # a model in /tmp would make every top-level folder a sibling: only its own tree then
    from xof.addon.scene.imp.textures import _sibling_parent

    assert _sibling_parent(Path("/tmp")) is None
    assert _sibling_parent(Path("/")) is None
    assert _sibling_parent(tmp_path / "models") == tmp_path


def test_an_import_reports_a_refused_texture_as_refused(tmp_path: Path):
    models, textures = tmp_path / "models", tmp_path / "textures"
    models.mkdir()
    textures.mkdir()
    (textures / "a.png").write_bytes(PNG_1X1)
    (textures / "b.png").write_text("text, not an image")
    mats = [MaterialData(f"M{i}", np.ones(4), 0, np.zeros(3), np.zeros(3), w)
            for i, w in enumerate(["../textures/a.png", "../textures/b.png"])]  # fmt: skip
    ctx = build_scene(SceneData(meshes=[one_tri(*mats)]), filepath=str(models / "a.x"))
    texture_warnings = [w for w in ctx.result.warnings if w.startswith("texture")]
    assert texture_warnings == [
        f"texture '../textures/b.png': refused {textures / 'b.png'}: not an image file (its "
        "first bytes are no image format Blender reads) (placeholder image used)"
    ]
    loaded = [img for img in bpy.data.images if img.has_data]
    assert [Path(bpy.path.abspath(img.filepath)) for img in loaded] == [textures / "a.png"]
