"""Keyed channels -> slotted, layered actions (the API of Blender 4.4+, 4.5 LTS and 5.0).

One action per AnimationSet; one slot per animated object (the armature, rigid objects);
one layer with one keyframe strip whose channelbag per slot holds the F-curves. Keys are
written in bulk (``keyframe_points.add`` + ``foreach_set``).
"""

from __future__ import annotations

import bpy
import numpy as np

from .key_sampling import Channels

_INTERPOLATION = {"CONSTANT": 0, "LINEAR": 1, "BEZIER": 2}


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
        linear: bool = True,
        cyclic: bool = False,
    ) -> None:
        """location / rotation_quaternion / scale curves under ``prefix`` (``""`` = object).

        ``linear`` is the file's AnimationOptions positionquality, which is about positions:
        spline sets get Bezier (auto-clamped) location curves; rotations and scales stay
        linear, so that they keep following D3DX's slerp and lerp between keys.
        """
        if not len(channels.frames):
            return
        bag = self.strip.channelbag(slot, ensure=True)  # type: ignore[attr-defined]
        frames = channels.frames
        self.first = min(self.first, float(frames[0]))
        self.last = max(self.last, float(frames[-1]))
        self.cyclic |= cyclic
        linear_mode = _INTERPOLATION["LINEAR"]
        location_mode = linear_mode if linear else _INTERPOLATION["BEZIER"]
        count = len(frames)
        channel_group = bag.groups.get(group) or bag.groups.new(group)
        co = np.empty(2 * count, dtype=np.float32)  # Keyframe.co is float32: no conversion
        co[0::2] = frames
        modes = {
            mode: np.full(count, mode, dtype=np.int32) for mode in {linear_mode, location_mode}
        }
        for prop, values in (
            ("location", channels.location),
            ("rotation_quaternion", channels.rotation),
            ("scale", channels.scale),
        ):
            mode = location_mode if prop == "location" else linear_mode
            for index in range(values.shape[1]):
                fcurve = bag.fcurves.new(prefix + prop, index=index)
                fcurve.group = channel_group  # fcurves.new(group_name=) is 5.0-only
                co[1::2] = values[:, index]
                points = fcurve.keyframe_points
                points.add(count)
                points.foreach_set("co", co)
                points.foreach_set("interpolation", modes[mode])
                if cyclic:
                    fcurve.modifiers.new("CYCLES")
                fcurve.update()

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


def stash(obj: bpy.types.Object, action: bpy.types.Action, slot: bpy.types.ActionSlot) -> None:
    """Put ``action`` on a muted NLA track of its own, ready to be switched on or mixed."""
    anim = obj.animation_data or obj.animation_data_create()
    track = anim.nla_tracks.new()
    track.name = action.name
    strip = track.strips.new(action.name, int(action.frame_range[0]), action)
    strip.action_slot = slot
    track.mute = True
