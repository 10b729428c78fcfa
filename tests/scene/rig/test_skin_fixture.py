"""A written skinned character, imported, against the independent LBS reference.

The fixture has 3 bones whose frame matrices are a pose (the bind comes from matrixOffset),
all 5 key types, non-uniform animated scale, a closed (looping) animation, a spline set on
an NLA track, a rigid prop on the head bone and a rigidly animated object.
"""

from __future__ import annotations

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene import importer  # noqa: E402
from xof.addon.scene.imp.options import AnimationOptions  # noqa: E402
from xof.addon.xfile import read, scene_of  # noqa: E402

from .. import lbs_reference as ref  # noqa: E402
from ..skin_fixtures import (  # noqa: E402
    TPS,
    character_text,
    evaluated_world_positions,
    model_size,
    set_frame,
    write,
)

pytestmark = pytest.mark.blender

FPS = 30


@pytest.fixture
def character(tmp_path):
    bpy.ops.wm.read_homefile(use_empty=True)
    sc = bpy.context.scene
    sc.render.fps, sc.render.fps_base = 24, 1.0
    path = write(tmp_path / "character.x", character_text())
    result = importer.import_files([path], importer.ImportOptions())
    return result, scene_of(read(str(path)))


def objects_by_mesh(data) -> dict[int, object]:
    by_name = {o.data.name: o for o in bpy.data.objects if o.type == "MESH"}
    return {id(m): by_name[m.name] for m in data.all_meshes()}


def assert_matches(data, animation_set, frame: float, tol: float = 1e-4, skip=()) -> None:
    set_frame(frame)
    ticks = None if animation_set is None else frame * TPS / FPS
    want = ref.expected_positions(data, animation_set, ticks)
    objs = objects_by_mesh(data)
    for mesh in data.all_meshes():
        if mesh.name in skip:
            continue
        got = evaluated_world_positions(objs[id(mesh)])
        size = model_size(ref.expected_positions(data, None, None)[id(mesh)])
        err = float(np.max(np.abs(got - want[id(mesh)])))
        assert err <= tol * size, f"{mesh.name} at frame {frame}: {err:.3g} (size {size:.3g})"


def test_structure_and_report(character):
    result, _ = character
    arm = bpy.data.objects["character"]
    assert arm.type == "ARMATURE"
    assert [b.name for b in arm.data.bones] == ["Hip", "Spine", "Head"]
    assert arm.data.bones["Spine"].parent.name == "Hip"
    column = bpy.data.objects["Body"]
    assert column.parent == arm and column.parent_type == "OBJECT"
    assert [m.type for m in column.modifiers] == ["ARMATURE"]
    assert column.modifiers[0].object == arm
    assert {g.name for g in column.vertex_groups} == {"Hip", "Spine", "Head"}
    prop = bpy.data.objects["Prop"]
    assert (prop.parent, prop.parent_type, prop.parent_bone) == (arm, "BONE", "Head")
    assert "Hip" not in bpy.data.objects  # the bone frames' empties are gone
    # rings above y=4 carry only the head's hat weight (< 1): normalised and reported
    assert any("did not sum to 1" in w for w in result.warnings)
    # curves grouped per bone (fcurves.new has no group_name on 4.5: regression)
    anim = arm.animation_data
    bag = anim.action.layers[0].strips[0].channelbag(anim.action_slot)
    assert {fc.group.name for fc in bag.fcurves} == {"Hip", "Spine", "Head"}
    assert len(bag.fcurves) == 3 * 10
    sc = bpy.context.scene
    assert sc.render.fps == FPS  # keys every 160 ticks at 4800 ticks/s
    assert (sc.frame_start, sc.frame_end) == (0, 20)


def test_vertex_groups_hold_normalised_file_weights(character):
    _, data = character
    column = bpy.data.objects["Body"]
    mesh = data.all_meshes()[0]
    raw = np.zeros((3, 52))
    for k, sw in enumerate(mesh.skin.weights):
        raw[k, sw.indices] = sw.weights
    sums = raw.sum(axis=0)
    want = np.divide(raw, sums, out=np.zeros_like(raw), where=sums > 0)  # top ring: no weight
    names = [sw.frame_name for sw in mesh.skin.weights]
    got = np.zeros((3, 52))
    for v in column.data.vertices:
        for g in v.groups:
            got[names.index(column.vertex_groups[g.group].name), v.index] = g.weight
    assert np.allclose(got, want, atol=1e-6)


def test_file_pose_without_animation(tmp_path):
    bpy.ops.wm.read_homefile(use_empty=True)
    path = write(tmp_path / "posed.x", character_text())
    importer.import_files([path], importer.ImportOptions(animation=AnimationOptions(enabled=False)))
    assert_matches(scene_of(read(str(path))), None, 0.0)


@pytest.mark.parametrize("frame", [0, 10, 20, 3, 7.5, 14.25, 18])
def test_walk_matches_reference(character, frame):
    _, data = character
    assert_matches(data, data.animation_sets[0], frame)


def test_closed_animation_loops(character):
    hip = bpy.data.objects["character"].pose.bones["Hip"]
    set_frame(25)
    looped = np.array(hip.matrix)
    set_frame(5)
    assert np.allclose(np.array(hip.matrix), looped, atol=1e-5)


def test_second_set_is_on_a_muted_track_and_plays_when_active(character):
    _, data = character
    arm = bpy.data.objects["character"]
    anim = arm.animation_data
    assert anim.action.name == "Walk"
    tracks = {t.name: t for t in anim.nla_tracks}
    assert set(tracks) == {"Wave"} and tracks["Wave"].mute
    strip = tracks["Wave"].strips[0]
    anim.action = strip.action
    anim.action_slot = strip.action_slot
    # the spinner keeps playing Walk (its own action), which Wave does not animate
    for frame in (0, 3, 5, 9, 12, 14):  # spline set: its keys, and after its end
        assert_matches(data, data.animation_sets[1], frame, skip={"SpinnerMesh"})
    # between keys: Blender's Bezier locations are the reference's Hermite spline
    for frame in (0.5, 1.75, 3.5, 4.25, 6.0, 7.5, 10.9, 11.5):
        assert_matches(data, data.animation_sets[1], frame, skip={"SpinnerMesh"})
    bag = strip.action.layers[0].strips[0].channelbag(strip.action_slot)
    kinds = {
        (fc.group.name, fc.data_path.rsplit(".", 1)[-1], k.interpolation, k.handle_left_type)
        for fc in bag.fcurves
        for k in fc.keyframe_points
    }
    # spline = positionquality: Bezier locations with FREE handles where positions are keyed
    # (Hip); rotations, scales and unkeyed positions linear (default handle type)
    linear = {(b, p) for b in ("Hip", "Spine") for p in ("rotation_quaternion", "scale")}
    linear.add(("Spine", "location"))
    assert kinds == {("Hip", "location", "BEZIER", "FREE")} | {
        (b, p, "LINEAR", "AUTO_CLAMPED") for b, p in linear
    }


def test_slerp_step_zero_keeps_the_files_key_times(tmp_path):
    bpy.ops.wm.read_homefile(use_empty=True)
    path = write(tmp_path / "exact.x", character_text())
    options = importer.ImportOptions(animation=AnimationOptions(slerp_step=0.0))
    importer.import_files([path], options)
    arm = bpy.data.objects["exact"]
    anim = arm.animation_data
    bag = anim.action.layers[0].strips[0].channelbag(anim.action_slot)
    frames = {tuple(k.co[0] for k in fc.keyframe_points) for fc in bag.fcurves}
    assert frames == {(0.0, 10.0, 20.0)}  # Hip turns 40 and 50 deg per span: no extra keys


def test_wide_rotation_spans_get_extra_keys(character):
    arm = bpy.data.objects["character"]
    anim = arm.animation_data
    bag = anim.action.layers[0].strips[0].channelbag(anim.action_slot)
    hip = bag.fcurves.find('pose.bones["Hip"].rotation_quaternion', index=0)
    # 40 deg then 50 deg in steps of at most 4 deg: 10 + 13 spans (not 11 from rounding)
    assert len(hip.keyframe_points) == 10 + 13 + 1
