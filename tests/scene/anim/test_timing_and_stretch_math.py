"""Pure logic: the tick rate of files without one, sets that key disjoint bones, and the
stretch a skinned mesh's frame puts into its offsets. Expected values are worked by hand."""

from __future__ import annotations

import numpy as np
import pytest
from xof.addon.scene.anim.name_match import match_names
from xof.addon.scene.anim.set_groups import sets_key_disjoint_frames
from xof.addon.scene.anim.timing import AUTO, FILE, longest_span, resolve_ticks_per_second
from xof.addon.scene.morph.phonemes import (
    DEFAULT_PHONEME_TARGETS,
    PhonemeKeys,
    parse_map,
    phoneme_curves,
)
from xof.addon.scene.rig.stretch import mesh_stretch, rigid, storable
from xof.addon.xfile.views.model import AnimationData, AnimationSetData, KeyTrack, SceneData


def keyed(frame: str, times) -> AnimationData:
    return AnimationData(frame, [KeyTrack(2, np.asarray(times, float), np.zeros((len(times), 3)))])


def scene(tps, *sets) -> SceneData:
    return SceneData(
        animation_sets=[AnimationSetData(f"S{i}", list(s)) for i, s in enumerate(sets)],
        ticks_per_second=tps,
    )


def test_a_56_key_walk_without_a_tick_rate_counts_frames():
    data = scene(None, [keyed("Hips", range(56)), keyed("Leg", [0, 20, 40])])
    assert longest_span(data) == 55.0
    rate = resolve_ticks_per_second(data, 24.0)
    assert (rate.ticks_per_second, rate.source) == (24.0, "frames")
    assert "frames at 24 fps" in rate.note and "0.011 s" in rate.note  # 55 / 4800 s


def test_long_sets_without_a_tick_rate_keep_d3dx_4800():
    data = scene(None, [keyed("Hips", [0, 4960])])  # 1.03 s at 4,800 ticks/s
    rate = resolve_ticks_per_second(data, 30.0)
    assert (rate.ticks_per_second, rate.source) == (4800.0, "default")
    assert "no AnimTicksPerSecond" in rate.note


def test_the_files_value_the_file_choice_and_a_number():
    short = [keyed("Hips", range(56))]
    assert resolve_ticks_per_second(scene(60.0, short), 24.0).ticks_per_second == 60.0
    assert resolve_ticks_per_second(scene(60.0, short), 24.0).note is None
    file_only = resolve_ticks_per_second(scene(None, short), 24.0, FILE)
    assert (file_only.ticks_per_second, file_only.source) == (4800.0, "default")
    number = resolve_ticks_per_second(scene(4800.0, short), 24.0, 30.0)
    assert (number.ticks_per_second, number.source) == (30.0, "option")
    bad = resolve_ticks_per_second(scene(0.0, short), 25.0, AUTO)
    assert bad.ticks_per_second == 25.0 and "not positive" in bad.note


def test_sets_keying_disjoint_bones_play_together():
    torso = [keyed("Spine", [0, 10]), keyed("Neck", [0, 10])]
    arms = [keyed("ArmL", [0, 5]), keyed("ArmR", [0, 5])]
    assert sets_key_disjoint_frames(scene(None, torso, arms))
    assert not sets_key_disjoint_frames(scene(None, torso, [*arms, keyed("Neck", [0, 1])]))
    assert not sets_key_disjoint_frames(scene(None, torso))  # one set: nothing to combine
    assert not sets_key_disjoint_frames(scene(None, torso, []))  # an empty set


def rot_z(degrees: float) -> np.ndarray:
    a = np.radians(degrees)
    m = np.eye(4)
    m[:2, :2] = [[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]]
    return m


def offsets_for(mesh: np.ndarray, binds: list[np.ndarray]) -> np.ndarray:
    """Column-convention offsets ``B^-1 @ M``."""
    return np.stack([np.linalg.inv(b) @ mesh for b in binds])


BINDS = [
    rot_z(10),
    rot_z(-40) @ np.array([[1, 0, 0, 0], [0, 1, 0, 2], [0, 0, 1, 0], [0, 0, 0, 1.0]]),
]


def test_rigid_offsets_need_no_stretch():
    x, note = mesh_stretch(offsets_for(rot_z(30), BINDS), None)
    assert np.array_equal(x, np.eye(4)) and note is None


def test_the_mesh_frame_is_the_stretch_when_it_factors_the_offsets():
    mesh = rot_z(25) @ np.diag([1.28, 1.12, 1.47, 1.0])
    mesh[:3, 3] = [1, 2, 3]
    x, note = mesh_stretch(offsets_for(mesh, BINDS), mesh)
    np.testing.assert_allclose(x, mesh)
    assert note is None


@pytest.mark.parametrize("diag", [(1.28, 1.12, 1.47), (-1.2, 1.0, 1.3)])
@pytest.mark.parametrize("sheared", [False, True])
def test_without_the_frame_the_polar_factor_leaves_rigid_binds(diag, sheared):
    d, r = np.diag([*diag, 1.0]), rot_z(25)
    mesh = d @ r if sheared else r @ d  # a scale over a turned frame: shear
    offsets = offsets_for(mesh, BINDS)
    x, _ = mesh_stretch(offsets, np.eye(4))  # a frame that is not the bind placement
    assert np.all(rigid(offsets[:, :3, :3] @ np.linalg.inv(x[:3, :3])))
    # A^T A = M^T M: the symmetric root of R^T D^2 R is R^T |D| R (of D^2 just |D|);
    # mirrored offsets get it negated
    r3 = r[:3, :3]
    root = r3.T @ np.diag(np.abs(diag)) @ r3 if sheared else np.diag(np.abs(diag))
    want = root * (1 if np.prod(diag) > 0 else -1)
    np.testing.assert_allclose(x[:3, :3], want, atol=1e-12)
    assert storable(x) != sheared  # shear cannot be an object's location, rotation, scale


def test_mixed_mirrors_have_no_common_stretch():
    offsets = np.stack([np.diag([1.2, 1, 1, 1.0]), np.diag([-1.2, 1, 1, 1.0])])
    x, note = mesh_stretch(offsets, None)
    assert np.array_equal(x, np.eye(4)) and "mirrored" in note


def test_names_match_exactly_by_prefix_or_by_an_unambiguous_suffix():
    bones = ["Hips", "Spine", "Head", "Arm", "LeftArm"]
    got = match_names(["Hips", "Frame1_Spine", "mixamorig:Head", "X_Arm", "Y_Arm"], bones)
    assert got.bones == {"Hips": "Hips", "Frame1_Spine": "Spine", "mixamorig:Head": "Head"}
    assert got.by_suffix == ["Frame1_Spine", "mixamorig:Head"]
    assert got.ambiguous == ["X_Arm", "Y_Arm"]  # two names for one bone: neither is guessed
    assert "Frame1_Spine -> Spine" in got.notes()[0] and "several bones" in got.notes()[1]
    # "SpineX" does not end in "Spine" after a separator; "LeftArm" is not "Left_Arm"
    assert match_names(["SpineX", "Left"], bones).bones == {}
    # the armature's names may carry the prefix instead
    assert match_names(["Hips"], ["Armature_Hips"]).bones == {"Hips": "Armature_Hips"}
    prefixed = match_names(["X_Arm", "Y_Arm"], bones, strip_prefix="X_")
    assert prefixed.bones == {"X_Arm": "Arm"} and prefixed.by_prefix == ["X_Arm"]


def test_phoneme_keys_and_the_editable_map():
    keys = PhonemeKeys(np.array([0, 1, 10]), np.array([0.0, 100, 250]), np.array([100.0, 250, 400]))
    curves, missing = phoneme_curves(
        keys, DEFAULT_PHONEME_TARGETS, {"aaa"}, 24.0, 1.0, basis="neutral"
    )
    # starts and ends (100 and 250 shared), the last end held, the loop point at 401 ms
    np.testing.assert_allclose(curves.frames, 1 + np.array([0, 100, 250, 400, 401]) * 0.024)
    assert curves.values == {"aaa": pytest.approx([0, 1, 0, 0, 0])} and curves.loop
    assert missing == ["eee"]  # the Basis is not missing
    names, note = parse_map("neutral, ooo")
    assert names[:3] == ("neutral", "ooo", "aaa") and len(names) == 38 and "2 names" in note
    assert DEFAULT_PHONEME_TARGETS[13] == "fff" and DEFAULT_PHONEME_TARGETS[35] == "uuu"
