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


def _deform_verts(mesh: bpy.types.Mesh) -> list[list[tuple[int, float]]]:
    return [[(g.group, g.weight) for g in v.groups] for v in mesh.vertices]


def test_whole_groups_match_one_add_a_vertex(monkeypatch):
    """The attribute route gives the deform verts ``VertexGroup.add`` gives: the same groups,
    names, float32 weights and order of a vertex's entries; a weight zero in float32 keeps
    its entry (that group takes the add route)."""
    from xof.addon.scene.rig import skinning

    bpy.ops.wm.read_homefile(use_empty=True)
    n = 3000
    rng = np.random.default_rng(5)
    groups = []
    for k in range(6):
        idx = np.sort(rng.choice(n, 1200 if k != 4 else 40, replace=False))
        w = rng.random(len(idx)) + 0.01
        if k == 3:
            w[7] = 1e-60  # zero in float32
        groups.append(GroupWeights(f"F{k}", idx, w))
    groups.append(GroupWeights("F0", np.arange(1500, 2700), np.full(1200, 0.25)))  # same name
    plan = SkinPlan(groups=groups)
    got = []
    for threshold in (skinning.WHOLE_GROUP_VERTICES, 10**9):
        monkeypatch.setattr(skinning, "WHOLE_GROUP_VERTICES", threshold)
        mesh = bpy.data.meshes.new("m")
        mesh.vertices.add(n)
        obj = bpy.data.objects.new("m", mesh)
        write_vertex_groups(obj, plan, {"F1": "Bone.1", "F2": "UVMap"})
        assert [a.name for a in mesh.attributes if "xof" in a.name] == []
        active = mesh.attributes.active.name, obj.vertex_groups.active_index
        got.append(([g.name for g in obj.vertex_groups], _deform_verts(mesh), active))
    assert got[0] == got[1]  # the active attribute and group too
    names, verts, _ = got[0]
    assert names == ["F0", "Bone.1", "UVMap", "F3", "F4", "F5", "F0.001"]
    for k, g in enumerate(groups):  # each weight where the plan puts it, as float32
        for i, w in zip(g.indices[:50].tolist(), g.weights[:50].tolist(), strict=True):
            assert (k, float(np.float32(w))) in verts[i]
    assert (3, 0.0) in verts[int(groups[3].indices[7])]
