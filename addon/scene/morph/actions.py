"""Actions that animate key-block values: one slotted, layered action per morph set.

Uses the slotted-action API that Blender 4.4+, 4.5 LTS and 5.0 share (5.0 removed
``Action.fcurves``): slot of type 'KEY', one layer, one keyframe strip, its channelbag.
"""

from __future__ import annotations

import math

import bpy

from .plan import SetCurves

MAX_STRIP_REPEAT = 1000  # Blender's limit for NlaStrip.repeat


def block_path(block_name: str) -> str:
    """The RNA path of a key block's value on its Key datablock."""
    escaped = block_name.replace("\\", "\\\\").replace('"', '\\"')
    return f'key_blocks["{escaped}"].value'


def new_morph_action(
    key: bpy.types.Key, curves: SetCurves
) -> tuple[bpy.types.Action, bpy.types.ActionSlot]:
    """An action with one linear curve per key block of ``curves``; looping sets cycle."""
    action = bpy.data.actions.new(curves.name)
    slot = action.slots.new("KEY", key.name)
    layer = action.layers.new("Layer")
    strip = layer.strips.new(type="KEYFRAME")
    bag = strip.channelbag(slot, ensure=True)  # type: ignore[attr-defined]
    co = [0.0] * (2 * len(curves.frames))
    for block_name, values in curves.values.items():
        fcurve = bag.fcurves.new(block_path(block_name), index=0)
        fcurve.keyframe_points.add(len(curves.frames))
        co[0::2] = [float(f) for f in curves.frames]
        co[1::2] = [float(v) for v in values]
        fcurve.keyframe_points.foreach_set("co", co)
        for point in fcurve.keyframe_points:
            point.interpolation = "LINEAR"
            point.handle_left_type = "VECTOR"
            point.handle_right_type = "VECTOR"
        if curves.loop:
            fcurve.modifiers.new("CYCLES")
        fcurve.update()
    if len(curves.frames):
        action.use_frame_range = True
        action.frame_start = float(curves.frames[0])
        action.frame_end = max(float(curves.frames[-1]), float(curves.frames[0]) + 1.0)
        action.use_cyclic = curves.loop
    return action, slot


def make_active(key: bpy.types.Key, action: bpy.types.Action, slot: bpy.types.ActionSlot) -> None:
    """Play ``action`` on the Key datablock."""
    anim = key.animation_data or key.animation_data_create()
    anim.action = action
    anim.action_slot = slot


def push_to_nla(
    key: bpy.types.Key,
    action: bpy.types.Action,
    slot: bpy.types.ActionSlot,
    name: str,
    muted: bool = True,
    repeat_until: float | None = None,
) -> bpy.types.NlaTrack:
    """Keep ``action`` on its own NLA track (muted: the active set alone decides the shape).

    ``repeat_until``: a looping set's strip repeats up to that frame (an NLA strip plays its
    action's range once; the Cycles modifiers only loop it while it is the active action).
    """
    anim = key.animation_data or key.animation_data_create()
    track = anim.nla_tracks.new()
    track.name = name
    start = action.frame_range[0]
    strip = track.strips.new(name, round(start), action)
    strip.action_slot = slot
    if repeat_until is not None:
        length = strip.action_frame_end - strip.action_frame_start
        if length > 0.0:
            loops = math.ceil((repeat_until - strip.frame_start) / length)
            strip.repeat = float(min(max(loops, 1), MAX_STRIP_REPEAT))
    track.mute = muted
    return track
