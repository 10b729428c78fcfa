"""Materials (Principled values from the file's numbers) and texture lookup."""

from __future__ import annotations

import math
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene.imp.materials import phong_power_to_roughness  # noqa: E402
from xof.addon.scene.imp.textures import find_texture  # noqa: E402
from xof.addon.scene.importer import build_scene  # noqa: E402
from xof.addon.xfile.views.model import MaterialData, MeshData, SceneData  # noqa: E402

pytestmark = [pytest.mark.blender, pytest.mark.usefixtures("empty_scene")]


def png_1x1() -> bytes:
    """A valid 1x1 RGB PNG, written with the stdlib."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x80\x00")
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


PNG_1X1 = png_1x1()


@pytest.mark.parametrize(
    ("power", "expected"),
    [(0.0, 1.0), (2.0, math.sqrt(math.sqrt(0.5))), (98.0, math.sqrt(math.sqrt(0.02)))],
)
def test_power_to_roughness(power, expected):
    assert phong_power_to_roughness(power) == pytest.approx(expected)


def one_tri(*materials: MaterialData) -> MeshData:
    return MeshData(
        "T", np.eye(3), np.array([3]), np.array([0, 1, 2]),
        materials=list(materials), material_indices=np.zeros(1, np.int64),
    )  # fmt: skip


def principled(mat):
    return next(n for n in mat.node_tree.nodes if n.type == "BSDF_PRINCIPLED")


def test_principled_values():
    data = MaterialData(
        "Shiny", np.array([0.8, 0.4, 0.2, 0.25]), 18.0, np.array([0.5, 0.5, 0.5]),
        np.array([0.1, 0.2, 0.3]), None,
    )  # fmt: skip
    build_scene(SceneData(meshes=[one_tri(data)]))
    mat = bpy.data.materials["Shiny"]
    bsdf = principled(mat)
    assert tuple(bsdf.inputs["Base Color"].default_value) == pytest.approx((0.8, 0.4, 0.2, 1.0))
    assert bsdf.inputs["Alpha"].default_value == pytest.approx(0.25)
    assert bsdf.inputs["Roughness"].default_value == pytest.approx((2 / 20) ** 0.25, rel=1e-6)
    assert tuple(bsdf.inputs["Specular Tint"].default_value)[:3] == pytest.approx((0.5,) * 3)
    assert bsdf.inputs["Specular IOR Level"].default_value == pytest.approx(0.5)
    assert tuple(bsdf.inputs["Emission Color"].default_value)[:3] == pytest.approx((0.1, 0.2, 0.3))
    assert bsdf.inputs["Emission Strength"].default_value == pytest.approx(1.0)
    assert tuple(mat.diffuse_color) == pytest.approx((0.8, 0.4, 0.2, 0.25))
    assert mat["xof_power"] == pytest.approx(18.0)


def test_black_specular_and_emission_are_off():
    data = MaterialData("Matte", np.ones(4), 0.0, np.zeros(3), np.zeros(3), None)
    build_scene(SceneData(meshes=[one_tri(data)]))
    bsdf = principled(bpy.data.materials["Matte"])
    assert bsdf.inputs["Specular IOR Level"].default_value == 0.0
    assert bsdf.inputs["Emission Strength"].default_value == 0.0


def test_find_texture_case_insensitive_and_subfolders(tmp_path: Path):
    (tmp_path / "Textures").mkdir()
    (tmp_path / "Textures" / "Wood.PNG").write_bytes(PNG_1X1)
    (tmp_path / "Stone.png").write_bytes(PNG_1X1)
    assert find_texture("stone.PNG", tmp_path) == tmp_path / "Stone.png"
    assert find_texture("wood.png", tmp_path) == tmp_path / "Textures" / "Wood.PNG"
    assert find_texture(r"C:\art\TEXTURES\wood.png", tmp_path) == tmp_path / "Textures" / "Wood.PNG"
    assert find_texture("maps/nothing.png", tmp_path) is None


def test_texture_loaded_once_and_missing_is_a_warning(tmp_path: Path):
    (tmp_path / "tex").mkdir()
    (tmp_path / "tex" / "skin.png").write_bytes(PNG_1X1)
    a = MaterialData("A", np.ones(4), 0, np.zeros(3), np.zeros(3), "SKIN.png")
    b = MaterialData("B", np.ones(4), 0, np.zeros(3), np.zeros(3), "skin.png")
    c = MaterialData("C", np.ones(4), 0, np.zeros(3), np.zeros(3), "gone.tga")
    ctx = build_scene(
        SceneData(meshes=[one_tri(a, b, c)]), filepath=str(tmp_path / "model.x")
    )  # fmt: skip
    assert len(bpy.data.images) == 2
    loaded = bpy.data.images["skin.png"]
    assert loaded.size[:] == (1, 1) and Path(loaded.filepath) == tmp_path / "tex" / "skin.png"
    missing = bpy.data.images["gone.tga"]
    assert missing.filepath == "//gone.tga"
    assert [w for w in ctx.result.warnings if "gone.tga" in w and "not found" in w]
    for name, image in (("A", loaded), ("B", loaded), ("C", missing)):
        node = next(n for n in bpy.data.materials[name].node_tree.nodes if n.type == "TEX_IMAGE")
        assert node.image == image
        assert node.outputs["Color"].links[0].to_socket.name == "Base Color"
