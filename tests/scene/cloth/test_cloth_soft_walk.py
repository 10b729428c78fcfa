"""A soft body on a skinned mesh jiggles on top of the animation (issue: without painted pins
it was pulled back to the rest pose, freezing the character where it stood)."""

from __future__ import annotations

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene.cloth import runtime as cloth_runtime  # noqa: E402

from ..cloth_fixtures import (  # noqa: E402
    grid_arrays,
    grid_object,
    on_screen,
    positions,
    register_physics,
    unregister_physics,
)

pytestmark = pytest.mark.blender
N = 6
STEP = 0.1  # metres the bone walks per frame, frames 1..WALK_END
WALK_END = 21


def walk_x(frame: int) -> float:
    return STEP * (min(frame, WALK_END) - 1)


@pytest.fixture
def walker():
    """A 6 x 6 grid skinned fully to one bone that walks 2 m along x, then stops."""
    bpy.ops.wm.read_homefile(use_empty=True)
    register_physics()
    arm = bpy.data.objects.new("Rig", bpy.data.armatures.new("Rig"))
    bpy.context.scene.collection.objects.link(arm)
    bpy.context.view_layer.objects.active = arm
    bpy.ops.object.mode_set(mode="EDIT")
    bone = arm.data.edit_bones.new("Hip")
    bone.head, bone.tail = (0.0, 0.0, 0.0), (0.0, 1.0, 0.0)  # local axes = world axes
    bpy.ops.object.mode_set(mode="OBJECT")
    pose = arm.pose.bones["Hip"]
    for f in range(1, WALK_END + 1):  # a key on every frame: exact positions, no easing
        pose.location = (walk_x(f), 0.0, 0.0)
        pose.keyframe_insert("location", frame=f)
    body = grid_object(bpy, "Body", N, N, size=1.0)
    group = body.vertex_groups.new(name="Hip")
    group.add(list(range(N * N)), 1.0, "REPLACE")
    body.modifiers.new("Armature", "ARMATURE").object = arm
    props = body.xof_physics
    props.enabled = True
    props.sim_type = "SOFT"
    props.frame_end = 80
    yield body
    unregister_physics()


def test_a_soft_body_follows_the_walk_and_jiggles_after_the_stop(walker) -> None:
    scene = bpy.context.scene
    rest = grid_arrays(N, N, size=1.0)[0]
    lag = {}  # shown minus skinned, along the walk (x), mean over the points
    far = {}  # the farthest point from its skinned position
    for f in range(1, 61):
        scene.frame_set(f)
        skinned = rest + np.array([walk_x(f), 0.0, 0.0])  # one bone, a pure translation
        offset = on_screen(walker) - skinned
        lag[f] = float(offset[:, 0].mean())
        far[f] = float(np.linalg.norm(offset, axis=1).max())
    np.testing.assert_allclose(positions(walker), rest, atol=1e-6)  # the mesh: rest
    assert max(far.values()) < 0.35  # it follows the 2 m walk within 35 cm
    assert far[1] < 1e-6  # the start frame is the skinned shape
    assert lag[WALK_END] < -0.03  # it trails behind while walking
    after = np.array([lag[f] for f in range(WALK_END + 1, 61)])
    assert after[0] < 0.0 and after.max() > 0.01  # after the stop it swings past the pose
    assert cloth_runtime.peek_runtime(walker).deformed
    assert abs(lag[60]) < 1e-3 and far[60] < 0.2  # settled on the skinned shape (and its sag)
