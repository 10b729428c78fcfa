"""Files without AnimTicksPerSecond, and animation sets that key disjoint bones.

Fixtures are written here; expected poses come from the independent LBS reference with the
tick rate the test states (frames at the scene rate, or 4800), not from the importer.
"""

from __future__ import annotations

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene import importer  # noqa: E402
from xof.addon.scene.anim.animation_only import import_animation_file  # noqa: E402
from xof.addon.xfile import read, scene_of  # noqa: E402
from xof.addon.xfile.views.model import AnimationSetData  # noqa: E402

from .. import lbs_reference as ref  # noqa: E402
from ..skin_fixtures import (  # noqa: E402
    HEAD_FRAME,
    HIP_FRAME,
    SPINE_FRAME,
    animation,
    character_text,
    evaluated_world_positions,
    frame_text,
    key_block,
    model_size,
    quat_key,
    set_frame,
    write,
)

pytestmark = pytest.mark.blender

WALK_KEYS = 56  # keys 0..55, one per frame, as exporters that write frames do


def body_text(with_rate: bool) -> str:
    """The character's header, meshes and frames without its sets; optionally no tick rate."""
    text = character_text().split("AnimationSet Walk")[0]
    return text if with_rate else text.replace("AnimTicksPerSecond { 4800; }\n", "")


def walk_set() -> str:
    times = list(range(WALK_KEYS))
    angles = 40 * np.sin(np.linspace(0, 2 * np.pi, WALK_KEYS))
    return (
        "AnimationSet Walk {\n"
        + animation("Spine", key_block(0, times, [quat_key("z", a) for a in angles]))
        + "}\n"
    )


def disjoint_sets() -> str:
    keys = [0, 1600, 3200]
    hip = animation("Hip", key_block(0, keys, [quat_key("y", a) for a in (10, 60, 10)]))
    head = animation("Head", key_block(0, keys, [quat_key("x", a) for a in (-15, 35, -15)]))
    return f"AnimationSet Hips {{\n{hip}}}\nAnimationSet Head {{\n{head}}}\n"


@pytest.fixture
def scene():
    bpy.ops.wm.read_homefile(use_empty=True)
    sc = bpy.context.scene
    sc.render.fps, sc.render.fps_base = 24, 1.0
    return sc


def column_error(data, aset, frame: float, ticks_per_frame: float) -> float:
    """Largest distance of the skinned column from the reference, over its size."""
    set_frame(frame)
    mesh = next(m for m in data.all_meshes() if m.name == "Column")
    want = ref.expected_positions(data, aset, frame * ticks_per_frame)[id(mesh)]
    got = evaluated_world_positions(bpy.data.objects["Body"])
    return float(np.max(np.abs(got - want))) / model_size(want)


def key_range(action) -> tuple[float, float]:
    """First and last key frame of an action (its frame_range is at least a frame long)."""
    bag = action.layers[0].strips[0].channelbags[0]
    xs = [k.co[0] for fc in bag.fcurves for k in fc.keyframe_points]
    return min(xs), max(xs)


def action_frames(arm) -> tuple[float, float]:
    return key_range(arm.animation_data.action)


def test_key_times_in_frames_without_a_tick_rate(scene, tmp_path):
    path = write(tmp_path / "walk.x", body_text(False) + walk_set())
    result = importer.import_files([path], importer.ImportOptions())
    arm = bpy.data.objects["walk"]
    assert action_frames(arm) == (0.0, 55.0)  # 4800 ticks/s would make it 0.28 of a frame
    assert (scene.frame_start, scene.frame_end, scene.render.fps) == (0, 55, 24)
    assert any("frames at 24 fps" in n for n in result.notes)
    assert "frames at 24 fps" in result.summary()
    data = scene_of(read(str(path)))
    for frame in (0, 13, 27.5, 40):
        assert column_error(data, data.animation_sets[0], frame, 1.0) < 1e-4


def test_file_choice_keeps_d3dx_4800_and_a_number_is_used_as_given(scene, tmp_path):
    path = write(tmp_path / "walk.x", body_text(False) + walk_set())
    result = importer.import_files([path], importer.ImportOptions(ticks_per_second="FILE"))
    arm = bpy.data.objects["walk"]
    start, end = action_frames(arm)
    assert start == 0.0 and end == pytest.approx(55 * 24 / 4800, abs=1e-6)
    assert any("4800 ticks per second" in n for n in result.notes)
    bpy.ops.wm.read_homefile(use_empty=True)
    importer.import_files(
        [path], importer.ImportOptions(ticks_per_second="CUSTOM", custom_ticks_per_second=30.0)
    )
    sc = bpy.context.scene
    assert sc.render.fps == 30  # one key per tick at 30 ticks a second: a 30 fps scene
    assert action_frames(bpy.data.objects["walk"]) == (0.0, 55.0)


def test_the_files_own_rate_is_kept_without_a_note(scene, tmp_path):
    path = write(tmp_path / "walk.x", body_text(True) + walk_set())
    result = importer.import_files([path], importer.ImportOptions())
    assert not any("ticks" in n or "frames" in n for n in result.notes)
    _, end = action_frames(bpy.data.objects["walk"])
    assert end < 1.0  # the file said 4800: its 56 ticks are a fraction of a frame


def test_animation_only_file_without_a_tick_rate(scene, tmp_path):
    character = write(tmp_path / "character.x", character_text())
    importer.import_files([character], importer.ImportOptions(animation_sets="SEPARATE"))
    head = frame_text("Head", HEAD_FRAME)
    hip = frame_text("Hip", HIP_FRAME, frame_text("Spine", SPINE_FRAME, head))
    keys = key_block(0, [0, 12, 24], [quat_key("x", a) for a in (-15, 25, -15)])
    nod = f"AnimationSet Nod {{\n{animation('Head', keys)}}}\n"
    path = write(tmp_path / "nod.x", "xof 0303txt 0032\n" + hip + nod)
    bpy.context.scene.render.fps = 24
    result = import_animation_file(path, bpy.data.objects["character"])
    assert any("frames at 24 fps" in n for n in result.notes)
    assert key_range(result.actions[0]) == (0.0, 24.0)


def test_sets_keying_disjoint_bones_play_together(scene, tmp_path):
    path = write(tmp_path / "parts.x", body_text(True) + disjoint_sets())
    result = importer.import_files([path], importer.ImportOptions())
    arm = bpy.data.objects["parts"]
    anim = arm.animation_data
    assert anim.action is None
    assert sorted((t.name, t.mute) for t in anim.nla_tracks) == [("Head", False), ("Hips", False)]
    assert any("disjoint" in n for n in result.notes)
    data = scene_of(read(str(path)))
    both = AnimationSetData("Both", [a for s in data.animation_sets for a in s.animations])
    fps = scene.render.fps / scene.render.fps_base
    # Spine is keyed by no set: it keeps the file's frame pose (not the bind), as the
    # reference does with a frame no animation names
    for frame in (0, 4, 10, 16):
        assert column_error(data, both, frame, 4800 / fps) < 1e-4


def test_one_action_each_keeps_the_first_playing(scene, tmp_path):
    path = write(tmp_path / "parts.x", body_text(True) + disjoint_sets())
    importer.import_files([path], importer.ImportOptions(animation_sets="SEPARATE"))
    anim = bpy.data.objects["parts"].animation_data
    assert anim.action.name == "Hips"
    assert [(t.name, t.mute) for t in anim.nla_tracks] == [("Head", True)]
    data = scene_of(read(str(path)))
    fps = scene.render.fps / scene.render.fps_base
    assert column_error(data, data.animation_sets[0], 10, 4800 / fps) < 1e-4
