"""Pure maths of the rig: quaternions, key sampling, bone axes, skin weight cleaning.

Expected values are worked out by hand (angles, known matrices), not by the code under test.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from xof.addon.scene.anim import key_sampling as ks
from xof.addon.scene.imp.convert import Conversion
from xof.addon.scene.rig import rig_math as rm
from xof.addon.scene.rig import skin_weights as ssw
from xof.addon.scene.rig.skeleton import plan_skeleton
from xof.addon.scene.rig.skin_weights import plan_skin
from xof.addon.xfile.views.model import (
    AnimationData,
    AnimationSetData,
    FrameData,
    KeyTrack,
    MeshData,
    SceneData,
    SkinData,
    SkinWeightsData,
)


def test_quaternion_of_a_quarter_turn_about_z():
    q = [math.cos(math.pi / 4), 0, 0, math.sin(math.pi / 4)]
    want = np.array([[0, -1, 0], [1, 0, 0], [0, 0, 1]], float)  # x -> y
    assert np.allclose(rm.quat_to_mat3(q), want, atol=1e-12)
    assert np.allclose(rm.mat3_to_quat(want), q, atol=1e-12)


def test_slerp_halfway_and_quarter_way_by_angle():
    q0 = np.array([1.0, 0, 0, 0])
    q1 = np.array([math.cos(0.6), math.sin(0.6), 0, 0])  # 1.2 rad about x
    for t in (0.25, 0.5):
        got = rm.slerp(q0, q1, np.array(t))
        assert np.allclose(got, [math.cos(0.6 * t), math.sin(0.6 * t), 0, 0], atol=1e-12)
    # the short way round: -q1 is the same rotation
    assert np.allclose(rm.slerp(q0, -q1, np.array(0.5)), [math.cos(0.3), math.sin(0.3), 0, 0])


def test_decompose_a_known_matrix():
    m = np.eye(4)
    m[:3, :3] = np.array([[0, -2, 0], [1, 0, 0], [0, 0, 3]], float)  # R_z(90) @ diag(1, 2, 3)
    m[:3, 3] = [4, 5, 6]
    loc, quat, scale = rm.decompose(m)
    assert np.allclose(loc, [4, 5, 6])
    assert np.allclose(scale, [1, 2, 3])
    assert np.allclose(quat, [math.cos(math.pi / 4), 0, 0, math.sin(math.pi / 4)])


def test_row_matrix_of_a_rotation_key_is_the_d3dx_matrix_of_its_conjugate():
    # key (w, x, y, z) = (cos 15deg, 0, 0, -sin 15deg): the file's frame turns +30 deg about z
    # in row-vector form: [c s; -s c]
    key = np.array([math.cos(math.radians(15)), 0, 0, -math.sin(math.radians(15))])
    m = rm.row_compose(np.zeros(3), key, np.ones(3))
    c, s = math.cos(math.radians(30)), math.sin(math.radians(30))
    assert np.allclose(m[:2, :2], [[c, -s], [s, c]]) or np.allclose(m[:2, :2], [[c, s], [-s, c]])
    # anim_test.x: joint2's frame matrix and its first rotation key describe the same turn
    key = np.array([-0.999483, 0.0, 0.0, 0.032145])
    frame = np.array([[0.997933, 0.064257, 0], [-0.064257, 0.997933, 0], [0, 0, 1]])
    assert np.allclose(rm.row_compose(np.zeros(3), key, np.ones(3))[:3, :3], frame, atol=2e-4)


def test_blender_quaternion_is_w_x_z_y_after_the_mirror():
    key = np.array([0.9, 0.1, -0.3, 0.2])
    key /= np.linalg.norm(key)
    file_row = rm.row_compose(np.zeros(3), key, np.ones(3))
    blender = Conversion.from_options().matrix(file_row)
    _, quat, _ = rm.decompose(blender)
    want = key[[0, 1, 3, 2]]
    assert np.allclose(quat, want * np.sign(want[0]), atol=1e-12)


def test_sampling_lerps_positions_slerps_rotations_and_keeps_the_frame_for_missing_parts():
    anim = AnimationData(
        "bone",
        [
            KeyTrack(2, np.array([0.0, 100.0]), np.array([[0, 0, 0], [10, 0, 0]], float)),
            KeyTrack(0, np.array([0.0, 100.0]), np.array([[1, 0, 0, 0], [0, 0, 1, 0]], float)),
        ],
    )
    frame = np.diag([2.0, 2.0, 2.0, 1.0])  # scale 2 (not keyed) must survive
    parts = ks.split_keys(anim)
    m = ks.sample_local(parts, frame, np.array([25.0]))[0]
    assert np.allclose(m[3, :3], [2.5, 0, 0])
    # 180 deg about y at t=1, so 45 deg at t=0.25: row form of R_y(45) (conjugate key) * 2
    assert np.allclose(np.linalg.norm(m[:3, :3], axis=1), 2.0)
    c = math.cos(math.radians(45))
    assert np.isclose(abs(m[0, 0]), 2 * c) and np.isclose(abs(m[0, 2]), 2 * c)


def test_refine_adds_samples_inside_wide_rotation_spans():
    anim = AnimationData(
        "b", [KeyTrack(0, np.array([0.0, 10.0]), np.array([[1, 0, 0, 0], [0, 1, 0, 0]], float))]
    )
    times = ks.refine_times(ks.split_keys(anim), max_step=math.radians(10))
    assert len(times) == 19 and times[0] == 0 and times[-1] == 10  # 180 deg in 10 deg steps


def test_bad_keys_are_dropped_and_reported():
    values = np.array([[0, 0, 0], [np.nan, 0, 0], [1, 1, 1]], float)
    parts = ks.split_keys(AnimationData("b", [KeyTrack(2, np.array([0.0, 1.0, 2.0]), values)]))
    assert parts.pos is not None and list(parts.pos[0]) == [0.0, 2.0]
    assert any("1 unusable" in w for w in parts.warnings)


def test_matrix_keys_past_32_bit_floats_are_dropped_quietly_and_reported():
    """A 1e308 in a matrix key overflowed the split into scale and rotation (a numpy
    warning, and a scale of inf); such a key is dropped like a non-finite one."""
    good = np.eye(4).reshape(-1)
    moved = np.eye(4)
    moved[3, :3] = [1.0, 2.0, 3.0]  # row-vector translation
    huge = np.eye(4).reshape(-1).copy()
    huge[0] = 1e308
    values = np.stack([good, huge, moved.reshape(-1)])
    anim = AnimationData("b", [KeyTrack(4, np.array([0.0, 1.0, 2.0]), values)])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        parts = ks.split_keys(anim)
    assert parts.pos is not None and list(parts.pos[0]) == [0.0, 2.0]
    assert np.allclose(parts.pos[1], [[0, 0, 0], [1, 2, 3]])
    assert parts.scale is not None and np.allclose(parts.scale[1], 1.0)
    assert any("1 matrix key(s) past 32-bit floats" in w for w in parts.warnings)


@pytest.mark.parametrize(
    ("times", "tps", "rate"),
    [
        ([0, 160, 320], 4800, 30.0),
        ([0, 200, 400], 4800, 24.0),
        ([0, 4800], 4800, None),
        ([1, 2, 3], 24, 24.0),
    ],
)
def test_frame_rate_guess(times, tps, rate):
    assert ks.guess_frame_rate([np.array(times, float)], tps) == rate


def chain_scene(offset_z: float = -2.0) -> SceneData:
    t = np.eye(4)
    t[3, :3] = [0, 0, 2]  # child 2 units along file +z (Blender +y after the mirror)
    offset = np.eye(4)
    offset[3, 2] = offset_z  # inverse of the child's bind (the frame's own when -2)
    child = FrameData("child", t)
    root = FrameData("root", np.eye(4), [child])
    mesh = MeshData("m", np.zeros((3, 3)), np.array([3]), np.array([0, 1, 2]))
    weights = SkinWeightsData("child", np.array([0]), np.array([1.0]), offset)
    mesh.skin = SkinData(1, 1, 1, [weights])
    aset = AnimationSetData("a", [AnimationData("root", [])])
    return SceneData([root, FrameData("prop", np.eye(4))], [mesh], [aset])


def test_bones_are_skinned_frames_and_ancestors_with_tails_toward_the_child():
    plan = plan_skeleton(chain_scene(), Conversion.from_options())
    assert [b.name for b in plan.bones] == ["root", "child"]  # 'prop' stays an object
    root = plan.bones[0]
    # file +z is Blender +y: the root's own +y axis already points at the child
    assert np.allclose(root.rest[:3, :3], np.eye(3)) and np.isclose(root.length, 2.0)
    # the bind comes from inverse(matrixOffset), not from the frame (which says 2)
    posed = plan_skeleton(chain_scene(offset_z=-5.0), Conversion.from_options())
    assert np.allclose(posed.bones[1].bind[:3, 3], [0, 5, 0]) and posed.bones[1].from_offset
    every = plan_skeleton(chain_scene(), Conversion.from_options(), every_frame=True)
    assert [b.name for b in every.bones] == ["root", "child", "prop"]


def test_rest_axes_are_a_signed_permutation_of_the_bind_axes():
    t = np.eye(4)
    t[3, :3] = [-3, 0, 0]  # child along file -x = Blender -x
    scene = chain_scene()
    scene.frames[0].children[0].matrix = t
    scene.meshes[0].skin.weights[0].offset = np.linalg.inv(t)  # consistent bind
    root = plan_skeleton(scene, Conversion.from_options()).bones[0]
    assert np.allclose(root.rest[:3, 1], [-1, 0, 0]) and np.isclose(root.length, 3.0)
    assert np.allclose(np.abs(root.rest[:3, :3]).sum(axis=0), 1.0)  # still axis-aligned
    assert np.isclose(np.linalg.det(root.rest[:3, :3]), 1.0)


def test_skin_plan_merges_drops_and_normalises():
    mesh = MeshData("m", np.zeros((4, 3)), np.array([4]), np.array([0, 1, 2, 3]))
    mesh.skin = SkinData(1, 2, 3, [
        SkinWeightsData("a", np.array([0, 1, 9]), np.array([0.5, 1.0, 1.0]), np.eye(4)),
        SkinWeightsData("b", np.array([0, 2]), np.array([0.25, np.nan]), np.eye(4)),
        SkinWeightsData("a", np.array([2]), np.array([0.2]), np.eye(4)),  # same bone again
    ])  # fmt: skip
    plan = plan_skin(mesh, 4)
    groups = {g.frame_name: dict(zip(g.indices.tolist(), g.weights.tolist(), strict=True))
              for g in plan.groups}  # fmt: skip
    # vertex 0: 0.5 + 0.25 -> 2/3, 1/3; vertex 1: 1.0; vertex 2: 0.2 -> 1.0
    assert groups["a"] == pytest.approx({0: 2 / 3, 1: 1.0, 2: 1.0})
    assert groups["b"] == pytest.approx({0: 1 / 3})
    text = " ".join(plan.warnings)
    assert "1 skin weight(s) with vertex index out of range" in text
    assert "1 skin weight(s) not finite" in text
    assert "2 vertices' skin weights did not sum to 1" in text
    assert "header allows 1 weights per vertex" in text.replace("XSkinMeshHeader", "header")
    assert "says 3 bones, the mesh has 3" not in text


def test_closest_rotation_skips_rotations_and_fixes_shear_and_mirrors():
    c, s = math.cos(0.3), math.sin(0.3)
    rot = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]])
    assert np.array_equal(rm.closest_rotation(rot), rot)
    # a shear: polar factor of [[1, k], [0, 1]] is the rotation by atan(k / 2)
    k = 0.5
    sheared = np.array([[1, k, 0], [0, 1, 0], [0, 0, 1.0]])
    a = math.atan(k / 2)
    want = np.array([[math.cos(a), math.sin(a), 0], [-math.sin(a), math.cos(a), 0], [0, 0, 1]])
    stack = rm.closest_rotation(np.stack([rot, sheared, np.diag([1.0, 1.0, -1.0])]))
    assert np.allclose(stack[0], rot) and np.allclose(stack[1], want, atol=1e-12)
    # a mirror has no unique nearest rotation: any proper one will do
    assert np.allclose(stack[2].T @ stack[2], np.eye(3), atol=1e-12)
    assert rm.det3(stack).tolist() == pytest.approx([1.0, 1.0, 1.0])


def test_weight_batches_store_the_float32_weights_one_call_per_value():
    rng = np.random.default_rng(3)
    weights = rng.choice([0.25, 0.5, 1.0, 0.1, 0.1 + 1e-12], 300)  # the last two: one float32
    indices = rng.permutation(300)
    batches = ssw.weight_batches(indices, weights)
    assert len(batches) == 4 and all(mode == "REPLACE" for _, _, mode in batches)
    got = np.zeros(300, np.float32)
    for idx, value, _ in batches:
        got[idx] = value
    assert np.array_equal(got[indices], weights.astype(np.float32))
