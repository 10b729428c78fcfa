"""Every target format, the textures each one copies or embeds, and --bake-cloth."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from addon.batch import cli
from addon.xfile import read, scene_of

from .batch_fixtures import glb_json, validate, write_library

pytestmark = [pytest.mark.blender, pytest.mark.slow]


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("library")
    write_library(folder)
    return folder


def _convert(library: Path, out: Path, to: str, rels: list[str], *extra: str) -> dict[str, dict]:
    report = out.with_suffix(".json")
    inputs = [str(library / rel) for rel in rels]
    code = cli.main(["convert", *inputs, "--to", to, "--out", str(out), "--workers", "2",
                     "--report", str(report), *extra])  # fmt: skip
    files = {f["relative"]: f for f in json.loads(report.read_text())["files"]}
    assert code == 0, files
    return files


@pytest.fixture
def bpy_empty():
    import bpy

    bpy.ops.wm.read_homefile(use_empty=True)
    return bpy


def test_gltf_copies_the_texture_and_validates(library: Path, tmp_path: Path) -> None:
    _convert(library, tmp_path / "out", "gltf", ["props/crate.x", "chars/character.x"])
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == [
        "character.bin", "character.gltf", "crate.bin", "crate.gltf", "crate.png"
    ]  # fmt: skip
    assert (out / "crate.png").read_bytes() == (library / "props" / "crate.png").read_bytes()
    doc = json.loads((out / "crate.gltf").read_text())
    assert [i["uri"] for i in doc["images"]] == ["crate.png"]
    for verdict in validate([out / "crate.gltf", out / "character.gltf"]):
        assert verdict["errors"] == 0, verdict


def test_blend_packs_the_texture(library: Path, tmp_path: Path, bpy_empty) -> None:
    _convert(library, tmp_path / "out", "blend", ["props/crate.x"])
    bpy = bpy_empty
    bpy.ops.wm.open_mainfile(filepath=str(tmp_path / "out" / "crate.blend"))
    (image,) = bpy.data.images
    assert image.packed_file is not None
    assert [len(o.data.vertices) for o in bpy.data.objects if o.type == "MESH"] == [4]
    bpy.ops.wm.read_homefile(use_empty=True)


def test_fbx_reimports_with_its_skeleton_and_texture(library, tmp_path, bpy_empty) -> None:
    files = _convert(library, tmp_path / "out", "fbx", ["props/crate.x", "chars/character.x"])
    assert (tmp_path / "out" / "crate.fbm" / "crate.png").is_file()
    bpy = bpy_empty
    bpy.ops.import_scene.fbx(filepath=str(tmp_path / "out" / "character.fbx"))
    meshes = sorted(len(o.data.vertices) for o in bpy.data.objects if o.type == "MESH")
    assert meshes == [3, 3, 52]
    bones = {b.name for a in bpy.data.armatures for b in a.bones}
    assert {"Hip", "Spine", "Head"} <= bones
    assert files["character.x"]["counts"]["bones"] == 3
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.import_scene.fbx(filepath=str(tmp_path / "out" / "crate.fbx"))
    (image,) = bpy.data.images
    assert image.has_data or Path(bpy.path.abspath(image.filepath)).is_file()


def test_x_writes_text_with_the_texture_beside_it(library: Path, tmp_path: Path) -> None:
    _convert(library, tmp_path / "out", "x", ["props/crate.x", "chars/character.x"])
    out = tmp_path / "out"
    assert (out / "crate.png").is_file()
    assert (out / "character.x").read_bytes().startswith(b"xof 0303txt")
    scene = scene_of(read(out / "character.x"))
    assert sorted(len(m.positions) for m in scene.all_meshes()) == [3, 3, 52]
    assert sorted(a.name for a in scene.animation_sets) == ["Walk", "Wave"]
    assert 'TextureFilename {\n"crate.png";' in (out / "crate.x").read_text()


def test_bake_cloth_gives_shape_key_animation_in_the_glb(library: Path, tmp_path: Path) -> None:
    files = _convert(library, tmp_path / "out", "glb", ["flag.x"], "--bake-cloth", "12")
    entry = files["flag.x"]
    assert entry["baked"] == ["Flag"]
    assert entry["counts"]["shape_keys"] == 12  # one per simulated frame
    doc = glb_json(tmp_path / "out" / "flag.glb")
    (mesh,) = doc["meshes"]
    assert len(mesh["primitives"][0]["targets"]) == 12
    paths = {c["target"]["path"] for a in doc["animations"] for c in a["channels"]}
    assert "weights" in paths
    (verdict,) = validate([tmp_path / "out" / "flag.glb"])
    assert verdict["errors"] == 0, verdict


def test_x_in_compressed_binary_with_64_bit_floats(library: Path, tmp_path: Path) -> None:
    _convert(library, tmp_path / "out", "x", ["chars/character.x"],
             "--x-format", "bzip", "--x-float-bits", "64")  # fmt: skip
    path = tmp_path / "out" / "character.x"
    assert path.read_bytes()[:16] == b"xof 0303bzip0064"
    scene = scene_of(read(path))
    assert sorted(len(m.positions) for m in scene.all_meshes()) == [3, 3, 52]
    assert sorted(a.name for a in scene.animation_sets) == ["Walk", "Wave"]
