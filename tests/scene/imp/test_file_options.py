"""The import's file options: the names' encoding (reported), texture folders, and paths
that are not valid UTF-8."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

bpy = pytest.importorskip("bpy")
from xof.addon.scene.importer import ImportOptions, import_files  # noqa: E402

from ..scene_fixtures import CUBE_FACES, CUBE_VERTS, material_text, mesh_text, reset_blender  # noqa: E402
from .test_materials_textures import PNG_1X1  # noqa: E402

pytestmark = [pytest.mark.blender, pytest.mark.usefixtures("xof_enabled", "empty_scene")]

HAIR = "髪の毛"  # "hair": its Shift-JIS bytes are not UTF-8


def shift_jis_file(path: Path) -> Path:
    text = "xof 0303txt 0032\n" + mesh_text(HAIR, CUBE_VERTS, CUBE_FACES)
    path.write_bytes(text.encode("cp932"))
    return path


def test_shift_jis_names_import_and_the_report_says_so(tmp_path: Path):
    path = shift_jis_file(tmp_path / "hair.x")
    assert bpy.ops.import_scene.x(filepath=str(path)) == {"FINISHED"}
    assert HAIR in bpy.data.meshes
    reset_blender()
    result = import_files([path])
    assert any("shift_jis" in note for note in result.notes)
    assert "names read as shift_jis" in result.summary()


def test_the_encoding_can_be_forced(tmp_path: Path):
    path = shift_jis_file(tmp_path / "hair.x")
    bpy.ops.import_scene.x(filepath=str(path), names_encoding="cp1252")
    # the garbling a CP1252 reading gives, computed here from the bytes
    assert HAIR.encode("cp932").decode("cp1252", errors="replace") in bpy.data.meshes
    assert HAIR not in bpy.data.meshes


def test_utf8_files_have_no_encoding_note(tmp_path: Path):
    path = tmp_path / "plain.x"
    path.write_text("xof 0303txt 0032\n" + mesh_text("Plain", CUBE_VERTS, CUBE_FACES))
    assert import_files([path]).notes == []


def test_texture_folders_option(tmp_path: Path):
    model, library = tmp_path / "model", tmp_path / "library"
    model.mkdir()
    library.mkdir()
    (library / "wood.png").write_bytes(PNG_1X1)
    mat = material_text("M", (1, 1, 1, 1), 0, (0, 0, 0), (0, 0, 0), texture="wood.png")
    path = model / "box.x"
    box = mesh_text("Box", CUBE_VERTS, CUBE_FACES, materials=[mat])
    path.write_text("xof 0303txt 0032\n" + box)
    result = import_files([path])
    assert any("wood.png" in w and "not found" in w for w in result.warnings)
    reset_blender()
    bpy.ops.import_scene.x(filepath=str(path), texture_folders=f" {library} ;")
    images = [i for i in bpy.data.images if i.has_data or os.path.isfile(i.filepath)]
    assert [Path(i.filepath) for i in images] == [library / "wood.png"]
    reset_blender()
    result = import_files([path], ImportOptions(texture_folders=(str(library),)))
    assert not any("wood.png" in w for w in result.warnings)


def test_a_file_name_that_is_not_utf8_imports(tmp_path: Path):
    name = os.fsencode(tmp_path) + b"/caf\xe9.x"  # Latin-1 bytes: not UTF-8
    with open(name, "w") as f:
        f.write("xof 0303txt 0032\n" + mesh_text("Cafe", CUBE_VERTS, CUBE_FACES))
    result = import_files([name])
    assert "Cafe" in bpy.data.meshes and len(result.files) == 1
    result.summary().encode("utf-8")  # what the report shows can be shown
    broken = os.fsencode(tmp_path) + b"/bro\xffken.x"
    with open(broken, "w") as f:
        f.write("xof 0303txt 0032\nMesh M { 3; 0;0;")
    with pytest.raises(Exception) as raised:
        import_files([broken])
    assert "bro\\xffken.x" in str(raised.value)  # the message names it, printable
