"""A mesh without texture coordinates whose material has a texture shows its first texel,
as D3D samples texel (0, 0) when a vertex has no coordinates (not Blender's white)."""

from __future__ import annotations

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene import importer  # noqa: E402

pytestmark = pytest.mark.blender

SIZE = 4
RED, BLUE = (1.0, 0.0, 0.0, 1.0), (0.0, 0.0, 1.0, 1.0)


def write_texture(path) -> None:
    """A 4x4 PNG, blue but for its top-left texel (D3D's (0, 0)), which is red."""
    image = bpy.data.images.new("tex", SIZE, SIZE)
    px = np.tile(BLUE, SIZE * SIZE).reshape(SIZE, SIZE, 4)  # rows from the bottom
    px[SIZE - 1, 0] = RED
    image.pixels.foreach_set(px.ravel().astype(np.float32))
    image.filepath_raw = str(path)
    image.file_format = "PNG"
    image.save()
    bpy.data.images.remove(image)


def mesh_text(uvs: bool) -> str:
    coords = " MeshTextureCoords { 3; 0;0;, 1;0;, 0;1;; }\n" if uvs else ""
    return (
        "xof 0303txt 0032\nMesh Tri { 3; 0;0;0;, 1;0;0;, 0;1;0;; 1; 3;0,1,2;;\n"
        " MeshMaterialList { 1; 1; 0;;\n"
        '  Material Skin { 1;1;1;1;; 5.0; 0;0;0;; 0;0;0;; TextureFilename { "tex.png"; } }\n'
        f" }}\n{coords}}}\n"
    )


@pytest.fixture
def folder(tmp_path):
    bpy.ops.wm.read_homefile(use_empty=True)
    write_texture(tmp_path / "tex.png")
    return tmp_path


def test_no_coordinates_show_the_first_texel(folder):
    path = folder / "tri.x"
    path.write_text(mesh_text(uvs=False), encoding="ascii")
    result = importer.import_files([path], importer.ImportOptions())
    mesh = bpy.data.meshes["Tri"]
    assert [uv.name for uv in mesh.uv_layers] == ["UVMap"]
    uv = np.array([d.vector for d in mesh.uv_layers[0].uv])
    image = mesh.materials[0].node_tree.nodes["Image Texture"].image
    px = np.array(image.pixels[:]).reshape(image.size[1], image.size[0], 4)
    x, y = (uv * [image.size[0], image.size[1]]).astype(int).T
    np.testing.assert_allclose(px[y, x], [RED] * 3, atol=1e-6)  # every corner on the red texel
    assert any("no texture coordinates" in w and "'Skin'" in w for w in result.warnings)


def test_meshes_with_coordinates_keep_theirs(folder):
    path = folder / "tri.x"
    path.write_text(mesh_text(uvs=True), encoding="ascii")
    result = importer.import_files([path], importer.ImportOptions())
    uv = np.array([d.vector for d in bpy.data.meshes["Tri"].uv_layers[0].uv])
    assert sorted(map(tuple, np.round(uv, 6))) == [(0, 0), (0, 1), (1, 1)]
    assert not any("no texture coordinates" in w for w in result.warnings)
