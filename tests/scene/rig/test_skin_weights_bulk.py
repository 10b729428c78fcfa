"""Vertex groups written in batches of equal weights hold exactly the float32 weights."""

from __future__ import annotations

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene.rig.skin_weights import GroupWeights, SkinPlan  # noqa: E402
from xof.addon.scene.rig.skinning import write_vertex_groups  # noqa: E402

pytestmark = pytest.mark.blender


def test_many_distinct_weights_are_stored_exactly_as_float32():
    bpy.ops.wm.read_homefile(use_empty=True)
    n = 2000
    mesh = bpy.data.meshes.new("grid")
    mesh.vertices.add(n)
    obj = bpy.data.objects.new("grid", mesh)
    rng = np.random.default_rng(11)
    a = rng.random(n) * 0.98 + 0.01  # every weight different
    tiny = np.arange(0, n, 97)
    a[tiny] = 2e-9  # tiny weights stay weights
    plan = SkinPlan(groups=[
        GroupWeights("A", np.arange(n), a),
        GroupWeights("B", np.arange(0, n, 2), 1.0 - a[::2]),
    ])  # fmt: skip
    write_vertex_groups(obj, plan, {"A": "Bone A"})
    got = {"Bone A": np.zeros(n, np.float32), "B": np.zeros(n, np.float32)}
    for v in mesh.vertices:
        for g in v.groups:
            got[obj.vertex_groups[g.group].name][v.index] = g.weight
    assert np.array_equal(got["Bone A"], a.astype(np.float32))
    want_b = np.zeros(n, np.float32)
    want_b[::2] = (1.0 - a[::2]).astype(np.float32)
    assert np.array_equal(got["B"], want_b)
    assert sum(len(v.groups) for v in mesh.vertices) == n + n // 2
