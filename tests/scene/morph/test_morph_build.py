"""Morph sets built in real Blender: the evaluated mesh equals the file's blend at every frame."""

from __future__ import annotations

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene.morph.build import MorphOptions, build_morphs  # noqa: E402

from ..morph_fixtures import MorphFixture, dance, four_keys, mismatched, shared_sets  # noqa: E402

pytestmark = pytest.mark.blender

TOL = 1e-5


@pytest.fixture
def scene():
    bpy.ops.wm.read_homefile(use_empty=True)
    sc = bpy.context.scene
    sc.render.fps, sc.render.fps_base = 24, 1.0
    sc.frame_start = 1
    return sc


def evaluated_positions(obj, frame: float) -> np.ndarray:
    """Vertex positions of the evaluated object at a (possibly fractional) frame."""
    scene = bpy.context.scene
    whole = int(np.floor(frame))
    scene.frame_set(whole, subframe=frame - whole)
    depsgraph = bpy.context.evaluated_depsgraph_get()
    mesh = obj.evaluated_get(depsgraph).data
    co = np.empty(len(mesh.vertices) * 3, dtype=np.float32)
    mesh.vertices.foreach_get("co", co)
    return co.reshape(-1, 3).astype(np.float64)


def ms_at(frame: float, scene) -> float:
    fps = scene.render.fps / scene.render.fps_base
    return (frame - scene.frame_start) * 1000.0 / fps


def assert_plays(fixture: MorphFixture, obj, set_name: str, frames, loop: bool, scene) -> None:
    for frame in frames:
        got = evaluated_positions(obj, frame)
        want = fixture.expected(set_name, ms_at(frame, scene), loop)
        err = float(np.abs(got - want).max())
        assert err < TOL, f"{set_name} at frame {frame}: max error {err}"


@pytest.mark.parametrize("loop_variant", [False, True])
def test_dance_plays_the_blend_on_and_between_keys(scene, loop_variant):
    fixture = dance(loop_variant=loop_variant, loop=False)
    result = build_morphs(fixture.scene_data(), scene)
    assert result.warnings == []
    (obj,) = result.objects
    key = obj.data.shape_keys
    assert [b.name for b in key.key_blocks] == ["Figure1", "Figure2"]
    assert key.reference_key.name == "Figure1"
    assert key.animation_data.action.name == "Dance"
    # Keys at frames 1, 13, 25; between keys; after the end (clamped, not looping).
    assert_plays(fixture, obj, "Dance", [1, 4, 7.5, 13, 16.25, 24, 25, 31, 40], False, scene)
    assert scene.frame_end >= 25


def test_looping_set_cycles(scene):
    fixture = dance(loop_variant=True, loop=True)
    (obj,) = build_morphs(fixture.scene_data(), scene).objects
    action = obj.data.shape_keys.animation_data.action
    assert action.use_cyclic
    # 1000 ms = 24 frames per cycle: frame 31 is 250 ms into the second cycle.
    assert_plays(fixture, obj, "Dance", [2, 7, 26, 31, 37, 43.5, 55, 61], True, scene)


def test_loop_option_cycles_a_set_the_file_does_not_loop(scene):
    fixture = four_keys()
    (obj,) = build_morphs(fixture.scene_data(), scene, options=MorphOptions(loop_all=True)).objects
    # 2000 ms = 48 frames; the first 125 ms of each cycle hold Pose0.
    assert_plays(fixture, obj, "Walk", [50, 51.5, 55, 70, 80, 96.9], True, scene)


def test_three_and_more_keys_late_start_and_repeats(scene):
    fixture = four_keys()
    result = build_morphs(fixture.scene_data(), scene)
    (obj,) = result.objects
    assert [b.name for b in obj.data.shape_keys.key_blocks] == ["Pose0", "Pose1", "Pose2", "Pose3"]
    frames = [1, 2, 4, 7, 10, 16, 25, 28, 31, 37, 44, 49, 60]
    assert_plays(fixture, obj, "Walk", frames, False, scene)


def test_sets_sharing_meshes_share_keys_and_the_others_sit_on_nla(scene):
    fixture = shared_sets()
    result = build_morphs(fixture.scene_data(), scene)
    assert result.warnings == []
    assert [a.name for a in result.actions] == ["Happy", "Sad", "Lone"]
    shared, lone = result.objects
    key = shared.data.shape_keys
    assert [b.name for b in key.key_blocks] == ["Rest", "Smile", "Frown"]
    assert [b.name for b in lone.data.shape_keys.key_blocks] == ["Other", "OtherB"]
    anim = key.animation_data
    assert anim.action.name == "Happy"
    (track,) = anim.nla_tracks
    assert track.name == "Sad" and track.mute
    assert track.strips[0].action.name == "Sad"
    assert_plays(fixture, shared, "Happy", [1, 5, 10.6, 17, 25], False, scene)
    assert_plays(fixture, lone, "Lone", [1, 8, 15.4], False, scene)
    # Its strip repeats to the scene's end: unmuted, alone, the looping set plays from the NLA.
    strip = track.strips[0]
    length = strip.action_frame_end - strip.action_frame_start
    assert strip.frame_end >= scene.frame_end and strip.repeat == np.ceil(
        (scene.frame_end - strip.frame_start) / length
    )
    track.mute = False
    active = anim.action
    anim.action = None
    assert_plays(fixture, shared, "Sad", [1, 4, 8.2, 20, 25, 30, 40], True, scene)
    track.mute = True
    anim.action = active
    # The second set plays (and loops) when made active with its own slot.
    sad = bpy.data.actions["Sad"]
    anim.action = sad
    anim.action_slot = sad.slots[0]
    assert_plays(fixture, shared, "Sad", [1, 4, 8.2, 20, 25, 30, 40], True, scene)


def test_targets_built_by_an_importer_are_consumed_or_kept(scene):
    from xof.addon.scene.morph.build import plain_mesh_object

    fixture = shared_sets()
    data = fixture.scene_data()
    built = {m: plain_mesh_object(m, m.name, scene.collection) for m in data.meshes}
    result = build_morphs(data, scene, built=built)
    assert result.objects[0] is built[data.meshes[0]]
    assert sorted(result.removed) == ["Frown", "OtherB", "Smile"]
    assert sorted(o.name for o in scene.objects) == ["Other", "Rest"]

    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    data = fixture.scene_data()
    built = {m: plain_mesh_object(m, m.name, scene.collection) for m in data.meshes}
    result = build_morphs(data, scene, built=built, options=MorphOptions(keep_targets=True))
    assert result.removed == [] and len(scene.objects) == 5


def test_mismatched_target_is_skipped_and_the_rest_plays(scene):
    fixture = mismatched()
    result = build_morphs(fixture.scene_data(), scene)
    assert len(result.warnings) == 1 and "'Bad'" in result.warnings[0]
    assert "'Base'" in result.warnings[0]
    (obj,) = result.objects
    assert [b.name for b in obj.data.shape_keys.key_blocks] == ["Base", "Good"]
    played = MorphFixture(fixture.meshes, [("Mixed", False, [(0, "Base"), (1000, "Good")])])
    assert_plays(played, obj, "Mixed", [1, 7, 13, 19.5, 25], False, scene)
