"""Actions -> AnimationSets: one set per action (the active one and those on NLA tracks).

Keys are written where the F-curves have them when every curve is linear (what the importer
makes), else sampled at every frame of the keyed range. Each key is turned back into the
file's local matrix (bones: through the pose-bone basis relation of ``armature.bone_basis``,
inverted; objects: ``parent_inverse @ basis``), then split into position, rotation (w,x,y,z)
and scale keys by the importer's own ``row_decompose``. Legacy files key every track of a set
at one grid of times, and the tick rate is chosen from the keys written
(:mod:`.plan.key_grid`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import bpy
import numpy as np
from mathutils import Euler

from ...xfile.document import XObject
from ...xfile.writer import objects as xo
from ..rig.armature import read_matrix
from ..rig.rig_math import compose, row_decompose, safe_inverse4
from .plan.key_grid import exact, set_grid, ticks_per_second, to_ticks
from .plan.key_reduction import file_keys, is_constant
from .plan.part_keys import part_keys
from .rig_export import bind_of
from .space import FileSpace

_BONE_PATH = re.compile(r'^pose\.bones\["((?:[^"\\]|\\.)*)"\]\.(\w+)$')
_CHANNELS = ("location", "rotation_quaternion", "rotation_euler", "scale")
#: a part whose keys all agree this closely (relative) is written as one key
CONSTANT_TOLERANCE = 1e-6


def action_slots(owner: bpy.types.ID) -> list[tuple[bpy.types.Action, object]]:
    """(action, slot) of the active action and of every NLA strip, active first."""
    anim = getattr(owner, "animation_data", None)
    if anim is None:
        return []
    out = []
    if anim.action is not None:
        out.append((anim.action, getattr(anim, "action_slot", None)))
    for track in anim.nla_tracks:
        for strip in track.strips:
            if strip.action is not None and all(strip.action != a for a, _ in out):
                out.append((strip.action, getattr(strip, "action_slot", None)))
    return out


def fcurves_of(action: bpy.types.Action, slot: object) -> list[bpy.types.FCurve]:
    try:
        from bpy_extras.anim_utils import action_get_channelbag_for_slot

        bag = action_get_channelbag_for_slot(action, slot)  # type: ignore[func-returns-value]
        return list(bag.fcurves) if bag is not None else []
    except ImportError:  # pragma: no cover - before slotted actions
        return list(action.fcurves)  # type: ignore[attr-defined]


def _key_frames(curves: list[bpy.types.FCurve]) -> tuple[np.ndarray, bool, bool]:
    """Frames to write, whether the curves are all linear, whether any cycles.

    Curves that are not all linear get every frame of their range as well (sampled keys).
    """
    plan = key_plan(curves)
    return plan.frames, plan.linear, plan.cyclic


@dataclass(eq=False)
class KeyPlan:
    frames: np.ndarray  # scene frames to write
    linear: bool  # AnimationOptions positionquality: linear (else spline)
    cyclic: bool
    as_stored: bool  # the curves' own keys, which the importer reads back into these curves


def _frames_of(fc: bpy.types.FCurve) -> np.ndarray:
    co = np.empty(2 * len(fc.keyframe_points), dtype=np.float32)
    fc.keyframe_points.foreach_get("co", co)
    return co[0::2].astype(np.float64)


def _all(fc: bpy.types.FCurve, prop: str, value: str) -> bool:
    return all(getattr(k, prop) == value for k in fc.keyframe_points)


def key_plan(curves: list[bpy.types.FCurve]) -> KeyPlan:
    """How one target's curves become keys.

    As stored when they are what the importer makes: every curve keyed at the same frames,
    rotation and scale linear, locations all linear (positionquality linear) or all Bezier
    with free handles (spline: the importer traces the file's Hermite curve that way).
    Anything else is sampled at every frame of the keyed range as well, written linear.
    """
    frames = [_frames_of(fc) for fc in curves]
    keys = np.unique(np.concatenate(frames)) if frames else np.zeros(0)
    cyclic = any(m.type == "CYCLES" for fc in curves for m in fc.modifiers)
    same = all(np.array_equal(f, keys) for f in frames)
    locations = [fc for fc in curves if fc.data_path.endswith("location")]
    others = [fc for fc in curves if not fc.data_path.endswith("location")]
    others_linear = all(_all(fc, "interpolation", "LINEAR") for fc in others)
    loc_linear = all(_all(fc, "interpolation", "LINEAR") for fc in locations)
    loc_spline = bool(locations) and all(
        _all(fc, "interpolation", "BEZIER")
        and _all(fc, "handle_left_type", "FREE")
        and _all(fc, "handle_right_type", "FREE")
        for fc in locations
    )
    if others_linear and loc_linear:
        return KeyPlan(keys, True, cyclic, same)
    if same and others_linear and loc_spline:
        return KeyPlan(keys, False, cyclic, True)
    if len(keys) > 1:
        keys = np.unique(np.concatenate([keys, np.arange(np.ceil(keys[0]), keys[-1] + 1)]))
    return KeyPlan(keys, True, cyclic, False)


def _evaluate(
    curves: dict[tuple[str, int], bpy.types.FCurve],
    frames: np.ndarray,
    static: dict[str, np.ndarray],
    rotation_mode: str,
) -> np.ndarray:
    """(k, 4, 4) basis matrices from loc/rot/scale curves (static values where not keyed)."""

    def channel(prop: str, width: int) -> np.ndarray:
        out = np.repeat(static[prop][None, :], len(frames), axis=0)
        for i in range(width):
            fc = curves.get((prop, i))
            if fc is not None:
                out[:, i] = [fc.evaluate(float(f)) for f in frames]
        return out

    loc = channel("location", 3)
    scale = channel("scale", 3)
    if rotation_mode == "QUATERNION" or any(p == "rotation_quaternion" for p, _ in curves):
        quat = channel("rotation_quaternion", 4)
    else:
        eul = channel("rotation_euler", 3)
        order = rotation_mode if len(rotation_mode) == 3 else "XYZ"
        quat = np.array([tuple(Euler(e.tolist(), order).to_quaternion()) for e in eul])  # type: ignore[arg-type]
    return compose(loc, quat, scale)


def _static(target: object) -> dict[str, np.ndarray]:
    return {
        "location": np.array(target.location, dtype=np.float64),  # type: ignore[attr-defined]
        "rotation_quaternion": np.array(target.rotation_quaternion, dtype=np.float64),  # type: ignore[attr-defined]
        "rotation_euler": np.array(target.rotation_euler, dtype=np.float64),  # type: ignore[attr-defined]
        "scale": np.array(target.scale, dtype=np.float64),  # type: ignore[attr-defined]
    }


def _part_keys(
    locals_at: Callable[[np.ndarray], np.ndarray], frames: np.ndarray, plan: KeyPlan
) -> list[Part]:
    """Rotation, scale and position keys (scene frames, values); the importer's extra samples
    and the repeats of a constant part left out (a constant part is one key, unless every
    part is constant).

    ``locals_at(frames)``: the file's local matrices at those scene frames. Spline sets get
    each part's own key times back when they differ (:mod:`.plan.part_keys`)."""
    pos, quat, scale = row_decompose(locals_at(frames))
    whole = np.arange(len(frames))
    kept = {0: whole, 1: whole, 2: whole}
    if plan.as_stored and not plan.linear and len(frames) >= 3:
        mid_pos = row_decompose(locals_at((frames[:-1] + frames[1:]) / 2))[0]
        split = part_keys(frames, pos, quat, scale, mid_pos)
        if split is not None:
            kept = {0: split.rot, 1: split.scale, 2: split.pos}
    if plan.as_stored and kept[0] is whole:
        common = file_keys(frames, pos, quat, scale, spline=not plan.linear)
        kept = {0: common, 1: common, 2: common}
    parts = [(0, quat), (1, scale), (2, pos)]
    constant = [is_constant(v[kept[kind]], CONSTANT_TOLERANCE) for kind, v in parts]
    if all(constant):
        constant[0] = False
    out = []
    for (kind, values), still in zip(parts, constant, strict=True):
        index = kept[kind][:1] if still else kept[kind]
        out.append(Part(kind, frames[index], values[index]))
    return out


@dataclass(eq=False)
class Part:
    """One AnimationKey: its key type (0 rotation, 1 scale, 2 position), scene frames, values."""

    kind: int
    frames: np.ndarray
    values: np.ndarray


@dataclass(eq=False)
class Track:
    """One Animation of a set: the frame it moves, how its curves become keys, its keys."""

    frame_name: str
    plan: KeyPlan
    locals_at: Callable[[np.ndarray], np.ndarray]
    parts: list[Part]

    def on_grid(self, grid: np.ndarray) -> list[Part]:
        """Every part keyed at every time of ``grid`` (scene frames)."""
        pos, quat, scale = row_decompose(self.locals_at(grid))
        return [Part(0, grid, quat), Part(1, grid, scale), Part(2, grid, pos)]


def _track(frame_name: str, plan: KeyPlan, locals_at: Callable[[np.ndarray], np.ndarray]) -> Track:
    return Track(frame_name, plan, locals_at, _part_keys(locals_at, plan.frames, plan))


def animation_sets(
    sets: dict[str, list[Track]], fps: float, ticks: int, one_grid: bool
) -> tuple[list[tuple[str, list[XObject]]], int]:
    """``(set name, Animations)`` of each set, and the AnimTicksPerSecond they are written at.

    ``one_grid`` (Legacy): every track of a set keyed at the set's grid (:mod:`.plan.key_grid`),
    written linear (a spline set is sampled at every frame of its range). ``ticks``: the
    rate asked for, 0 to choose (:func:`.plan.key_grid.ticks_per_second`)."""
    written: dict[str, list[tuple[Track, list[Part], bool]]] = {}
    for name, tracks in sets.items():
        if one_grid:
            spline = any(not t.plan.linear for t in tracks)
            grid = set_grid((p.frames for t in tracks for p in t.parts), every_frame=spline)
            written[name] = [(t, t.on_grid(grid), True) for t in tracks]
        else:
            written[name] = [(t, t.parts, t.plan.linear) for t in tracks]
    every = (p.frames for entries in written.values() for _, parts, _ in entries for p in parts)
    tps = ticks or ticks_per_second(fps, every)
    out = []
    for name, entries in written.items():
        anims = []
        for track, parts, linear in entries:
            keys = [xo.animation_key(p.kind, to_ticks(p.frames, fps, tps), exact(p.values))
                    for p in parts]  # fmt: skip
            anims.append(xo.animation(track.frame_name, keys, track.plan.cyclic, linear))
        out.append((name, anims))
    return out, tps


def keyed_bones(arm: bpy.types.Object) -> set[str]:
    """Bones that a transform channel of one of the armature's actions (active or NLA) keys."""
    out: set[str] = set()
    for action, slot in action_slots(arm):
        for fc in fcurves_of(action, slot):
            m = _BONE_PATH.match(fc.data_path)
            if m and m.group(2) in _CHANNELS:
                out.add(m.group(1).replace('\\"', '"').replace("\\\\", "\\"))
    return out


def armature_tracks(
    arm: bpy.types.Object, curves: list[bpy.types.FCurve], bone_names: dict[str, str],
    space: FileSpace,
) -> list[Track]:  # fmt: skip
    data = arm.data
    assert isinstance(data, bpy.types.Armature) and arm.pose is not None
    by_bone: dict[str, dict[tuple[str, int], bpy.types.FCurve]] = {}
    for fc in curves:
        m = _BONE_PATH.match(fc.data_path)
        if m and m.group(2) in _CHANNELS:
            name = m.group(1).replace('\\"', '"').replace("\\\\", "\\")
            by_bone.setdefault(name, {})[(m.group(2), fc.array_index)] = fc
    out: list[Track] = []
    for name, channels in by_bone.items():
        bone = data.bones.get(name)
        if bone is None or name not in bone_names:
            continue
        plan = key_plan(list(channels.values()))
        frames = plan.frames
        if not len(frames):
            continue
        pose_bone = arm.pose.bones[name]
        rest = read_matrix(bone.matrix_local)
        bind = bind_of(bone)
        parent_bind = bind_of(bone.parent) if bone.parent else np.eye(4)
        left, right = safe_inverse4(parent_bind) @ rest, safe_inverse4(rest) @ bind

        def locals_at(at: np.ndarray, pb=pose_bone, ch=channels, lr=(left, right)) -> np.ndarray:
            basis = _evaluate(ch, at, _static(pb), pb.rotation_mode)
            return space.matrices(lr[0] @ basis @ lr[1])

        out.append(_track(bone_names[name], plan, locals_at))
    return out


def object_track(
    obj: bpy.types.Object, curves: list[bpy.types.FCurve], frame_name: str, space: FileSpace
) -> Track | None:
    channels = {(fc.data_path, fc.array_index): fc for fc in curves if fc.data_path in _CHANNELS}
    if not channels:
        return None
    plan = key_plan(list(channels.values()))
    frames = plan.frames
    if not len(frames):
        return None
    parent_inverse = read_matrix(obj.matrix_parent_inverse)

    def locals_at(at: np.ndarray) -> np.ndarray:
        basis = _evaluate(channels, at, _static(obj), obj.rotation_mode)
        return space.matrices(parent_inverse @ basis)

    return _track(frame_name, plan, locals_at)
