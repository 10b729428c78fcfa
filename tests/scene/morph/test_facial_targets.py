"""Facial targets (same-sized meshes, no morph set) as one mesh with shape keys (option)."""

from __future__ import annotations

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene import importer  # noqa: E402

from ..morph_fixtures import MorphFixture, grid_positions  # noqa: E402

pytestmark = pytest.mark.blender

NAMES = ["neutral", "aaa", "eee", "blink"]


def faces_fixture() -> MorphFixture:
    meshes = {name: grid_positions(k + 1) for k, name in enumerate(NAMES)}
    meshes["neutral_again"] = meshes["neutral"].copy()  # a target equal to the Basis
    meshes["Hat"] = grid_positions(9, count=9)  # another vertex count: stays a mesh
    return MorphFixture(meshes=meshes, sets=[])


@pytest.fixture(autouse=True)
def clean():
    bpy.ops.wm.read_homefile(use_empty=True)


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
