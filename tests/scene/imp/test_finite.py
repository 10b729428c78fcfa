"""Frame matrices and bone offsets Blender cannot hold are set aside before the build."""

from __future__ import annotations

import numpy as np
from xof.addon.scene.imp.finite import finite_matrices
from xof.addon.xfile.views.model import (
    FrameData,
    MeshData,
    SceneData,
    SkinData,
    SkinWeightsData,
)


def _skinned(offsets: list[np.ndarray]) -> MeshData:
    weights = [
        SkinWeightsData(f"Bone{k}", np.array([0]), np.array([1.0]), off)
        for k, off in enumerate(offsets)
    ]
    return MeshData(
        "M", np.zeros((3, 3)), np.array([3]), np.arange(3), skin=SkinData(1, 1, 2, weights)
    )


def test_matrices_past_float32_or_not_finite_are_set_aside_with_one_warning_a_kind() -> None:
    # found by the import fuzz: a 1e308 in a frame matrix or an offset overflowed in the
    # rig's products (numpy's warnings on the console)
    good = np.diag([2.0, 2.0, 2.0, 1.0])
    huge = np.eye(4)
    huge[3, 0] = 1e300
    nan = np.eye(4)
    nan[1, 1] = np.nan
    edge = np.eye(4)
    edge[0, 0] = float(np.finfo(np.float32).max)  # the largest float32 is still held
    kept = FrameData("Kept", edge.copy())
    child = FrameData("Child", nan.copy())
    root = FrameData("Root", huge.copy(), children=[kept, child])
    mesh = _skinned([good.copy(), huge.copy(), np.full((4, 4), np.inf)])
    root.meshes.append(mesh)
    scene = SceneData(frames=[root, FrameData("Plain", good.copy())])
    said = finite_matrices(scene)
    assert said == [
        "2 frame matrix(es) not finite or past 32-bit floats: identity used ('Root', 'Child')",
        "2 bone offset(s) not finite or past 32-bit floats: those bones' binds come from "
        "their frames ('Bone1', 'Bone2')",
    ]
    np.testing.assert_array_equal(root.matrix, np.eye(4))
    np.testing.assert_array_equal(child.matrix, np.eye(4))
    np.testing.assert_array_equal(kept.matrix, edge)
    np.testing.assert_array_equal(scene.frames[1].matrix, good)
    offsets = [sw.offset for sw in mesh.skin.weights]
    np.testing.assert_array_equal(offsets[0], good)
    assert np.isnan(offsets[1]).all() and np.isnan(offsets[2]).all()


def test_a_clean_scene_says_nothing() -> None:
    scene = SceneData(frames=[FrameData("A", np.eye(4))], meshes=[_skinned([np.eye(4)])])
    assert finite_matrices(scene) == []
