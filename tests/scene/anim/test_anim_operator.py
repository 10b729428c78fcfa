"""The armature and animation options of File > Import > DirectX, through bpy.ops.import_scene.x.

The fixture character (skin_fixtures) has frames Body, Hip > Spine > Head > Prop and Spinner;
the skin names Hip, Spine and Head; its Walk set keys every 10 frames at 30 fps and turns Hip
by 40 then 50 degrees.
"""

from __future__ import annotations

import math

import pytest

bpy = pytest.importorskip("bpy")

from ..skin_fixtures import character_text, write  # noqa: E402

pytestmark = [pytest.mark.blender, pytest.mark.usefixtures("xof_enabled")]


@pytest.fixture
def character(tmp_path):
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = 24, 1.0
    scene.frame_start, scene.frame_end = 1, 250
    return str(write(tmp_path / "character.x", character_text()))


def armature():
    return next(o for o in bpy.data.objects if o.type == "ARMATURE")


def hip_rotation_frames() -> list[float]:
    anim = armature().animation_data
    bag = anim.action.layers[0].strips[0].channelbag(anim.action_slot)
    curve = bag.fcurves.find('pose.bones["Hip"].rotation_quaternion', index=0)
    return [k.co[0] for k in curve.keyframe_points]


def test_defaults_import_animation_with_scene_timing_and_4_degree_steps(character):
    assert bpy.ops.import_scene.x(filepath=character) == {"FINISHED"}
    assert {b.name for b in armature().data.bones} == {"Hip", "Spine", "Head"}
    scene = bpy.context.scene
    assert (scene.render.fps, scene.frame_start, scene.frame_end) == (30, 0, 20)
    assert len(hip_rotation_frames()) == 10 + 13 + 1  # ceil(40/4) + ceil(50/4) spans


def test_animation_off(character):
    bpy.ops.import_scene.x(filepath=character, animation_enabled=False)
    assert armature().animation_data is None or armature().animation_data.action is None
    assert len(bpy.data.actions) == 0
    assert bpy.context.scene.render.fps == 24


def test_scene_timing_off_keeps_rate_and_range(character):
    bpy.ops.import_scene.x(filepath=character, animation_scene_timing=False)
    scene = bpy.context.scene
    assert (scene.render.fps, scene.frame_start, scene.frame_end) == (24, 1, 250)
    assert hip_rotation_frames()[-1] == pytest.approx(20 * 24 / 30)  # 3200 ticks at 24 fps


@pytest.mark.parametrize(("degrees", "count"), [(0.0, 3), (10.0, 4 + 5 + 1), (25.0, 2 + 2 + 1)])
def test_slerp_step(character, degrees, count):
    bpy.ops.import_scene.x(filepath=character, animation_slerp_step=math.radians(degrees))
    frames = hip_rotation_frames()
    assert len(frames) == count
    assert frames[0] == 0.0 and frames[-1] == 20.0


def test_bones_from_every_frame(character):
    bpy.ops.import_scene.x(filepath=character, armature_every_frame=True)
    bones = armature().data.bones
    assert {b.name for b in bones} == {"Body", "Hip", "Spine", "Head", "Prop", "Spinner"}
    assert bones["Prop"].parent.name == "Head"
