"""Materials a file declares but no face uses are imported too (slots), so nothing drops."""

from __future__ import annotations

import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene import importer  # noqa: E402

pytestmark = [pytest.mark.blender, pytest.mark.usefixtures("empty_scene")]

MATERIAL = "Material {name} {{ {r};{g};{b};1.0;; 5.0; 0;0;0;; 0;0;0;; }}\n"
TRIANGLES = (
    "Mesh Tris {{ 4; 0;0;0;, 1;0;0;, 0;1;0;, 1;1;0;; 2; 3;0,1,2;, 3;1,3,2;;\n"
    " MeshMaterialList {{ 2; 2; 0, 1;; {{ Red }} {inline} }}\n}}\n"
)


def file_text(with_mesh: bool = True) -> str:
    text = "xof 0303txt 0032\n"
    text += MATERIAL.format(name="Red", r=1, g=0, b=0)
    text += MATERIAL.format(name="Spare", r=0, g=1, b=0)
    if with_mesh:
        text += TRIANGLES.format(inline=MATERIAL.format(name="Blue", r=0, g=0, b=1))
    return text + MATERIAL.format(name="Other", r=1, g=1, b=0)


def test_unused_materials_become_extra_slots(tmp_path):
    path = tmp_path / "mats.x"
    path.write_text(file_text(), encoding="ascii")
    result = importer.import_files([path], importer.ImportOptions())
    mesh = bpy.data.meshes["Tris"]
    assert [m.name for m in mesh.materials] == ["Red", "Blue", "Spare", "Other"]
    assert [p.material_index for p in mesh.polygons] == [0, 1]  # the faces keep theirs
    assert any("2 material(s) the file declares but no mesh uses" in n for n in result.notes)
    assert sorted(m.name for m in result.materials) == ["Blue", "Other", "Red", "Spare"]
    assert not any(e.startswith("Material") for e in result.extras)  # built, not just kept
    green = mesh.materials["Spare"].node_tree.nodes["Principled BSDF"].inputs["Base Color"]
    assert tuple(green.default_value)[:3] == pytest.approx((0.0, 1.0, 0.0))


def test_without_a_mesh_a_fake_user_keeps_them(tmp_path):
    path = tmp_path / "only.x"
    path.write_text(file_text(with_mesh=False), encoding="ascii")
    result = importer.import_files([path], importer.ImportOptions())
    assert sorted(m.name for m in bpy.data.materials) == ["Other", "Red", "Spare"]
    assert all(m.use_fake_user for m in bpy.data.materials)
    assert any("fake user" in n for n in result.notes)


def test_materials_off_builds_none(tmp_path):
    path = tmp_path / "mats.x"
    path.write_text(file_text(), encoding="ascii")
    importer.import_files([path], importer.ImportOptions(use_materials=False))
    assert len(bpy.data.materials) == 0
