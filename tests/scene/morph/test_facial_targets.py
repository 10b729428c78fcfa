"""Facial targets (same-sized meshes, no morph set) as one mesh with shape keys (option)."""

from __future__ import annotations

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene import importer  # noqa: E402

from ..morph_fixtures import GRID_FACES, MorphFixture, grid_positions  # noqa: E402

pytestmark = [pytest.mark.blender, pytest.mark.usefixtures("empty_scene")]

NAMES = ["neutral", "aaa", "eee", "blink"]


def faces_fixture() -> MorphFixture:
    meshes = {name: grid_positions(k + 1) for k, name in enumerate(NAMES)}
    meshes["neutral_again"] = meshes["neutral"].copy()  # a target equal to the Basis
    meshes["Hat"] = grid_positions(9, count=9)  # another vertex count: stays a mesh
    return MorphFixture(meshes=meshes, sets=[])


def key_positions(block) -> np.ndarray:
    co = np.empty(len(block.data) * 3, dtype=np.float32)
    block.data.foreach_get("co", co)
    return co.reshape(-1, 3)


def test_targets_become_shape_keys_of_the_first_mesh(tmp_path):
    fixture = faces_fixture()
    path = fixture.write(tmp_path / "face.x")
    result = importer.import_files([path], importer.ImportOptions(targets_as_shape_keys=True))
    meshes = sorted(o.data.name for o in bpy.data.objects if o.type == "MESH")
    assert meshes == ["Hat", "neutral"]
    obj = next(o for o in bpy.data.objects if o.type == "MESH" and o.data.name == "neutral")
    blocks = obj.data.shape_keys.key_blocks
    assert [b.name for b in blocks] == NAMES  # no key for the copy of the Basis
    for name in NAMES:  # file positions, (x, y, z) -> (x, z, y)
        want = fixture.meshes[name][:, [0, 2, 1]]
        np.testing.assert_allclose(key_positions(blocks[name]), want, atol=1e-6)
    note = next(n for n in result.notes if "shape keys" in n)
    assert "3 mesh(es) of 12 vertices" in note and "neutral_again" in note


def test_off_by_default_and_kept_with_keep_targets(tmp_path):
    path = faces_fixture().write(tmp_path / "face.x")
    importer.import_files([path], importer.ImportOptions())
    assert sum(o.type == "MESH" for o in bpy.data.objects) == 6
    assert all(o.data.shape_keys is None for o in bpy.data.objects if o.type == "MESH")
    bpy.ops.wm.read_homefile(use_empty=True)
    importer.import_files(
        [path], importer.ImportOptions(targets_as_shape_keys=True, keep_targets=True)
    )
    assert sum(o.type == "MESH" for o in bpy.data.objects) == 6
    neutral = next(o for o in bpy.data.objects if o.type == "MESH" and o.data.name == "neutral")
    assert len(neutral.data.shape_keys.key_blocks) == 4


def test_a_target_with_fewer_faces_is_a_key_too(tmp_path):
    """Chap11's blink closes 2 faces: grouped by vertex and face count, it stayed an object
    over the face. Shape keys need only the vertices."""
    fixture = faces_fixture()
    fixture.faces["blink"] = GRID_FACES[:-2]
    result = importer.import_files(
        [fixture.write(tmp_path / "face.x")], importer.ImportOptions(targets_as_shape_keys=True)
    )
    neutral = next(o for o in bpy.data.objects if o.type == "MESH" and o.data.name == "neutral")
    assert [b.name for b in neutral.data.shape_keys.key_blocks] == NAMES
    assert sorted(o.data.name for o in bpy.data.objects if o.type == "MESH") == ["Hat", "neutral"]
    stayed = next(n for n in result.notes if n.startswith("stayed objects"))
    assert "'Hat' (no other mesh has its 9 vertices)" in stayed
    assert result.vertex_count == 12 + 9  # the summary counts the meshes that stayed
    assert "21 vertices" in result.summary()


def test_several_files_become_keys_of_the_first_named_after_the_files(tmp_path):
    """The book's Chap10 keeps each target in a file of its own, every mesh named alike."""
    paths = []
    for k, stem in enumerate(["base", "smile", "frown"]):
        fixture = MorphFixture(meshes={"JimMesh": grid_positions(k + 20)}, sets=[])
        paths.append(fixture.write(tmp_path / f"{stem}.x"))
    result = importer.import_files(paths, importer.ImportOptions(targets_as_shape_keys=True))
    (obj,) = [o for o in bpy.data.objects if o.type == "MESH"]
    assert [b.name for b in obj.data.shape_keys.key_blocks] == ["JimMesh", "smile", "frown"]
    want = grid_positions(22)[:, [0, 2, 1]]
    np.testing.assert_allclose(
        key_positions(obj.data.shape_keys.key_blocks["frown"]), want, atol=1e-6
    )
    assert result.vertex_count == 12 and len(result.meshes) == 1
    assert any("2 mesh(es) of 12 vertices as shape keys" in n for n in result.notes)
