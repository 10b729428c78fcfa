"""Keyed channels -> slotted, layered actions (the API of Blender 4.4+, 4.5 LTS and 5.0).

One action per AnimationSet; one slot per animated object (the armature, rigid objects);
one layer with one keyframe strip whose channelbag per slot holds the F-curves. Keys are
written in bulk (``keyframe_points.add`` + ``foreach_set``); spline curves get their handles
(:mod:`.bezier_keys`).
"""

from __future__ import annotations

import bpy
import numpy as np

from . import bezier_keys
from .key_sampling import Channels

_INTERPOLATION = {"CONSTANT": 0, "LINEAR": 1, "BEZIER": 2}


def _new_takes_group() -> bool:
    """``fcurves.new(group_name=)`` exists (bpy 5.0; 4.5 assigns ``FCurve.group`` after)."""
    curves = getattr(bpy.types, "ActionChannelbagFCurves", None)
    new = curves.bl_rna.functions.get("new") if curves is not None else None
    return new is not None and "group_name" in new.parameters


#: one call a curve instead of two: 3,000 curves 0.05 s instead of 0.11 s (5.0.1)
NEW_TAKES_GROUP = _new_takes_group()


def bone_path(bone: str) -> str:
    escaped = bone.replace("\\", "\\\\").replace('"', '\\"')
    return f'pose.bones["{escaped}"].'


class ActionBuilder:
    """Fills one action; ``slot_for`` gives each animated object its own slot."""

    def __init__(self, name: str) -> None:
        self.action = bpy.data.actions.new(name)
        self.strip = self.action.layers.new("Layer").strips.new(type="KEYFRAME")
        self.slots: dict[int, bpy.types.ActionSlot] = {}
        self.first = np.inf
        self.last = -np.inf
        self.cyclic = False

    def slot_for(self, obj: bpy.types.Object) -> bpy.types.ActionSlot:
        key = obj.as_pointer()
        if key not in self.slots:
            self.slots[key] = self.action.slots.new("OBJECT", obj.name)
        return self.slots[key]

    def write(
        self,
        slot: bpy.types.ActionSlot,
        prefix: str,
        channels: Channels,
        group: str,
        cyclic: bool = False,
    ) -> None:
        """location / rotation_quaternion / scale curves under ``prefix`` (``""`` = object).

        Locations with slopes (spline sets: AnimationOptions positionquality 0) become Bezier
        keys with FREE handles that trace the file's spline exactly; everything else is
        linear, rotations and scales following D3DX's slerp and lerp between the keys.
        Linear keys get the automatic handles Blender's own key insertion computes
        (``handles_recalc``, after the Cycles modifier, which it reads), so a key a user
        switches to Bezier keeps its motion. No ``FCurve.update()`` is needed: the keys are
        written sorted.
        """
        if not len(channels.frames):
            return
        bag = self.strip.channelbag(slot, ensure=True)  # type: ignore[attr-defined]
        frames = channels.frames
        self.first = min(self.first, float(frames[0]))
        self.last = max(self.last, float(frames[-1]))
        self.cyclic |= cyclic
        channel_group = None if NEW_TAKES_GROUP else bag.groups.get(group) or bag.groups.new(group)
        count = len(frames)
        curves = [
            (prop, values, channels.location_slope if prop == "location" else None)
            for prop, values in (
                ("location", channels.location),
                ("rotation_quaternion", channels.rotation),
                ("scale", channels.scale),
            )
        ]
        # enum values as bytes: foreach_set then copies them raw (int32 goes item by item)
        linear = np.full(count, _INTERPOLATION["LINEAR"], np.uint8)
        for prop, values, slopes in curves:
            spline = slopes is not None
            interpolation = linear
            co = bezier_keys.interleave(frames, values)  # Keyframe.co is float32
            if spline:
                interpolation = np.full(count, _INTERPOLATION["BEZIER"], np.uint8)
                free = np.full(count, bezier_keys.FREE, dtype=np.uint8)
                left, right = bezier_keys.handles(frames, values, slopes)
            for index in range(values.shape[1]):
                if channel_group is None:
                    fcurve = bag.fcurves.new(prefix + prop, index=index, group_name=group)
                else:
                    fcurve = bag.fcurves.new(prefix + prop, index=index)
                    fcurve.group = channel_group
                points = fcurve.keyframe_points
                points.add(count)
                points.foreach_set("co", co[index])
                points.foreach_set("interpolation", interpolation)
                if cyclic:
                    fcurve.modifiers.new("CYCLES")
                if spline:
                    points.foreach_set("handle_left", left[index])
                    points.foreach_set("handle_right", right[index])
                    points.foreach_set("handle_left_type", free)
                    points.foreach_set("handle_right_type", free)
                else:  # the handles Blender's own key insertion gives (auto clamped)
                    points.handles_recalc()

    def finish(self) -> None:
        if np.isfinite(self.first):
            self.action.use_frame_range = True
            self.action.frame_start = self.first
            self.action.frame_end = max(self.last, self.first + 1.0)
            self.action.use_cyclic = self.cyclic


def play(obj: bpy.types.Object, action: bpy.types.Action, slot: bpy.types.ActionSlot) -> None:
    """Make ``action`` (through ``slot``) the object's active action.

    An action already playing there is kept on a muted NLA track, not dropped.
    """
    anim = obj.animation_data or obj.animation_data_create()
    previous, previous_slot = anim.action, anim.action_slot
    if previous is not None and previous != action and previous_slot is not None:
        stash(obj, previous, previous_slot)
    anim.action = action
    anim.action_slot = slot


def stash(
    obj: bpy.types.Object, action: bpy.types.Action, slot: bpy.types.ActionSlot, mute: bool = True
) -> None:
    """Put ``action`` on an NLA track of its own, muted (ready to be switched on or mixed) or
    playing."""
    anim = obj.animation_data or obj.animation_data_create()
    track = anim.nla_tracks.new()
    track.name = action.name
    strip = track.strips.new(action.name, int(action.frame_range[0]), action)
    strip.action_slot = slot
    track.mute = mute


FLOAT32_MAX = float(np.finfo(np.float32).max)


def clamp_to_float32(channels: Channels) -> bool:
    """Keys that F-curves can hold: values beyond the 32-bit float range clamped (a cast
    would make them infinite), keys with NaN given the rest value (location 0, rotation
    identity, scale 1, slope 0); True when some were changed."""
    changed = False
    for values, rest in (
        (channels.location, 0.0), (channels.rotation, None), (channels.scale, 1.0),
        (channels.location_slope, 0.0),
    ):  # fmt: skip
        if values is None or not values.size:
            continue
        low, high = float(values.min()), float(values.max())  # NaN propagates through both
        if low >= -FLOAT32_MAX and high <= FLOAT32_MAX:
            continue
        bad = np.isnan(values).any(axis=1)
        if bad.any():
            if rest is None:  # a quaternion row as a whole
                values[bad] = (1.0, 0.0, 0.0, 0.0)
            else:
                values[bad] = np.where(np.isnan(values[bad]), rest, values[bad])
            changed = True
        if (np.abs(values) > FLOAT32_MAX).any():
            np.clip(values, -FLOAT32_MAX, FLOAT32_MAX, out=values)
            changed = True
    return changed
