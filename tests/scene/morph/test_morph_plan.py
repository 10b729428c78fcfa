"""The morph plan without Blender: grouping, skipped keys, key-block curves."""

from __future__ import annotations

import numpy as np
import pytest
from xof.addon.scene.morph.plan import (
    STEP_EPSILON_FRAMES,
    meshes_by_name,
    plan_morphs,
    set_curves,
)
from xof.addon.xfile.views.model import FrameData, MeshData, MorphKeyData, MorphSetData, SceneData

from ..morph_fixtures import dance, four_keys, mismatched, shared_sets


def _plan(fixture):
    data = fixture.scene_data()
    return plan_morphs(data.morph_sets, meshes_by_name(data))


def test_dance_basis_and_curves_at_24fps():
    plan = _plan(dance())
    assert plan.warnings == []
    (group,) = plan.groups
    assert group.basis == "Figure1" and group.targets == ["Figure2"]
    curves = set_curves(group.sets[0], group.targets, fps=24.0, frame_start=1.0)
    # 0, 500, 1000 ms at 24 fps from frame 1: 1, 13, 25.
    np.testing.assert_allclose(curves.frames, [1.0, 13.0, 25.0])
    np.testing.assert_array_equal(curves.values["Figure2"], [0.0, 1.0, 0.0])
    assert list(curves.values) == ["Figure2"]  # the Basis is never animated


def test_late_first_key_holds_from_zero_and_repeats_keep_their_block():
    (group,) = _plan(four_keys()).groups
    assert group.basis == "Pose0" and group.targets == ["Pose1", "Pose2", "Pose3"]
    curves = set_curves(group.sets[0], group.targets, fps=25.0, frame_start=0.0)
    # 0 (hold), 125, 375, 1000, 1250, 2000 ms at 25 fps.
    np.testing.assert_allclose(curves.frames, [0.0, 3.125, 9.375, 25.0, 31.25, 50.0])
    np.testing.assert_array_equal(curves.values["Pose1"], [0, 0, 1, 0, 1, 0])
    np.testing.assert_array_equal(curves.values["Pose2"], [0, 0, 0, 1, 0, 0])
    np.testing.assert_array_equal(curves.values["Pose3"], [0, 0, 0, 0, 0, 1])


def test_sets_sharing_meshes_share_one_group():
    plan = _plan(shared_sets())
    assert [g.basis for g in plan.groups] == ["Rest", "Other"]
    happy_sad, lone = plan.groups
    assert happy_sad.targets == ["Smile", "Frown"]
    assert [s.name for s in happy_sad.sets] == ["Happy", "Sad"]
    assert [s.loop for s in happy_sad.sets] == [False, True]
    assert lone.targets == ["OtherB"]
    sad = set_curves(happy_sad.sets[1], happy_sad.targets, fps=30.0, frame_start=1.0)
    assert sad.loop
    np.testing.assert_allclose(sad.frames, [1.0, 10.0, 28.0])
    np.testing.assert_array_equal(sad.values["Smile"], [1, 0, 0])
    np.testing.assert_array_equal(sad.values["Frown"], [0, 1, 0])


def test_mismatched_target_is_skipped_with_a_warning_naming_both():
    plan = _plan(mismatched())
    (group,) = plan.groups
    assert group.targets == ["Good"]
    assert [k.mesh_name for k in group.sets[0].keys] == ["Base", "Good"]
    assert len(plan.warnings) == 1
    assert "'Bad'" in plan.warnings[0] and "'Base'" in plan.warnings[0]
    assert "9" in plan.warnings[0] and "12" in plan.warnings[0]


def test_missing_mesh_and_unordered_keys_warn():
    mesh = MeshData("A", np.zeros((3, 3)), np.array([3]), np.array([0, 1, 2]))
    other = MeshData("B", np.ones((3, 3)), np.array([3]), np.array([0, 1, 2]))
    morph = MorphSetData(
        "S",
        False,
        [
            MorphKeyData(800, "B"),
            MorphKeyData(0, "A"),
            MorphKeyData(400, "Ghost"),
        ],
    )
    plan = plan_morphs([morph], {"A": mesh, "B": other})
    assert any("Ghost" in w for w in plan.warnings)
    assert any("out of order" in w for w in plan.warnings)
    (group,) = plan.groups
    assert group.basis == "A" and [k.time_ms for k in group.sets[0].keys] == [0, 800]


def test_same_time_keys_make_a_step():
    mesh = MeshData("A", np.zeros((3, 3)), np.array([3]), np.array([0, 1, 2]))
    morph = MorphSetData(
        "S",
        False,
        [
            MorphKeyData(0, "A"),
            MorphKeyData(1000, "B"),
            MorphKeyData(1000, "C"),
            MorphKeyData(2000, "A"),
        ],
    )
    curves = set_curves(morph, ["B", "C"], fps=10.0, frame_start=0.0)
    np.testing.assert_allclose(curves.frames, [0.0, 10.0 - STEP_EPSILON_FRAMES, 10.0, 20.0])
    np.testing.assert_array_equal(curves.values["B"], [0, 1, 0, 0])
    np.testing.assert_array_equal(curves.values["C"], [0, 0, 1, 0])
    assert mesh.name == "A"


def test_meshes_in_named_frames_resolve_by_frame_name():
    mesh = MeshData(None, np.zeros((3, 3)), np.array([3]), np.array([0, 1, 2]))
    frame = FrameData("Head", np.eye(4), meshes=[mesh])
    assert meshes_by_name(SceneData(frames=[frame]))["Head"] is mesh


@pytest.mark.parametrize("loop_variant", [False, True])
def test_fixture_text_declares_the_variant(loop_variant):
    text = dance(loop_variant=loop_variant, loop=True).text()
    assert ("DWORD Loop;" in text) == loop_variant
    assert "MorphAnimationSet Dance {" in text
