"""Frames -> objects: world-space vertices equal the file's, computed independently."""

from __future__ import annotations

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene.importer import ImportOptions, build_scene  # noqa: E402
from xof.addon.xfile.views.model import FrameData, MeshData, SceneData  # noqa: E402

from ..scene_fixtures import P3, trs, world_positions  # noqa: E402

pytestmark = [pytest.mark.blender, pytest.mark.usefixtures("empty_scene")]


def tri(name: str, offset: float) -> MeshData:
    verts = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0.3, 0.2, 0.9]]) + offset
    return MeshData(name, verts, np.array([3, 3]), np.array([0, 1, 2, 0, 2, 3]))


def file_world(mesh: MeshData, chain: list[np.ndarray]) -> np.ndarray:
    """File positions times local * parent * ... (row vectors), then mirrored to Blender."""
    combined = np.eye(4)
    for m in chain:  # innermost first
        combined = combined @ m
    homo = np.c_[mesh.positions, np.ones(len(mesh.positions))] @ combined
    return homo[:, :3] @ P3.T


def build_tree():
    a = trs((1, 2, 3), 30, (2, 1, 0.5))
    b = trs((-4, 0.5, 1), -75, (1, 3, 1))
    c = trs((0, 0, 2), 10, (0.5, 0.5, 0.5))
    mirror = trs((0, 1, 0), 0, (-1, 1, 1))  # a mirrored frame (negative determinant)
    m_leaf, m_two1, m_two2, m_root, m_mir = (tri(n, i) for i, n in enumerate("LXYRM"))
    leaf = FrameData("Leaf", c, meshes=[m_leaf])
    two = FrameData("Two", b, children=[leaf], meshes=[m_two1, m_two2])
    mirrored = FrameData("Mirrored", mirror, meshes=[m_mir])
    root = FrameData("Root", a, children=[two, mirrored, FrameData("Empty", np.eye(4))])
    scene = SceneData(frames=[root], meshes=[m_root])
    chains = {
        m_leaf: [c, b, a],
        m_two1: [b, a],
        m_two2: [b, a],
        m_mir: [mirror, a],
        m_root: [],
    }
    return scene, chains


def test_world_positions_equal_the_files():
    scene, chains = build_tree()
    ctx = build_scene(scene)
    assert not [w for w in ctx.result.warnings if "shear" in w]
    for mesh, chain in chains.items():
        obj = ctx.mesh_objects[mesh]
        np.testing.assert_allclose(world_positions(obj), file_world(mesh, chain), atol=1e-5)


def test_world_positions_with_scale_and_other_axes():
    scene, chains = build_tree()
    ctx = build_scene(scene, ImportOptions(axis_forward="-Y", axis_up="Z", global_scale=0.01))
    # forward -Y -> +Y, up Z -> +Z; X stays X so that the map is a mirror: rows of L
    mirror = np.array([[1.0, 0, 0], [0, -1, 0], [0, 0, 1]])
    assert np.linalg.det(mirror) == pytest.approx(-1)
    for mesh, chain in chains.items():
        expected = file_world(mesh, chain) @ P3.T @ mirror.T * 0.01  # undo P3, apply L
        got = world_positions(ctx.mesh_objects[mesh])
        np.testing.assert_allclose(got, expected, atol=1e-7)


def test_objects_for_frames_and_meshes():
    scene, _ = build_tree()
    ctx = build_scene(scene)
    objs = {o.name: o for o in ctx.result.objects}
    assert objs["Root"].type == "EMPTY" and objs["Root"].parent is None
    assert objs["Two"].type == "EMPTY" and objs["Two"].parent == objs["Root"]
    assert objs["Leaf"].type == "MESH" and objs["Leaf"].parent == objs["Two"]  # merged
    assert objs["Leaf"].data.name == "L"
    assert {objs["X"].parent.name, objs["Y"].parent.name} == {"Two"}
    assert objs["Empty"].type == "EMPTY"
    assert objs["R"].parent is None
    assert [o.name for o in ctx.result.roots] == ["Root", "R"]
    assert objs["Root"]["xof_frame"] == "Root"


def test_empty_frames_can_be_dropped():
    scene, _ = build_tree()
    ctx = build_scene(scene, ImportOptions(keep_empty_frames=False))
    names = {o.name for o in ctx.result.objects}
    assert "Empty" not in names and {"Root", "Two", "Leaf"} <= names


def test_sheared_matrix_is_a_warning():
    shear = np.eye(4)
    shear[1, 0] = 0.7
    ctx = build_scene(SceneData(frames=[FrameData("S", shear, meshes=[tri("T", 0)])]))
    assert any("shear" in w for w in ctx.result.warnings)
