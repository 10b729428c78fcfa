"""AnimationSet / Animation / AnimationKey and the project's MorphAnimationSet."""

from __future__ import annotations

import numpy as np

from ..document import Ragged, XObject, XReference
from ..names import is_word
from .model import AnimationData, AnimationSetData, KeyTrack, MorphKeyData, MorphSetData
from .values import DATA_ERRORS, children_named, flat_floats, member


def key_track(obj: XObject, warnings: list[str]) -> KeyTrack | None:
    key_type = int(member(obj, 0, "keyType"))
    keys = member(obj, 2, "keys")
    if isinstance(keys, np.ndarray):  # rows [time, nValues, values...] (all of one size)
        table = keys.reshape(len(keys), -1).astype(np.float64, copy=False)  # columns copied
        return KeyTrack(key_type, table[:, 0].copy(), table[:, 2:].copy())
    if isinstance(keys, Ragged):  # keys of different sizes: padded with zeros
        return _ragged_track(obj, key_type, keys, warnings)
    times = np.array([float(next(iter(k.values()))) for k in keys], dtype=np.float64)
    rows = [flat_floats(list(k.values())[1])[1:] for k in keys]  # drop nValues
    width = max((len(r) for r in rows), default=0)
    values = np.zeros((len(rows), width), dtype=np.float64)
    for i, r in enumerate(rows):
        values[i, : len(r)] = r
    if rows and any(len(r) != width for r in rows):
        warnings.append(f"AnimationKey {obj.name or ''}: keys of different sizes (padded)")
    return KeyTrack(key_type, times, values)


def _ragged_track(obj: XObject, key_type: int, keys: Ragged, warnings: list[str]) -> KeyTrack:
    flat = keys.flat.astype(np.float64)
    starts = keys.starts
    widths = keys.ends - starts - 2  # each record is [time, nValues, values...]
    width = int(widths.max()) if len(widths) else 0
    values = np.zeros((len(starts), width), dtype=np.float64)
    row = np.repeat(np.arange(len(starts)), widths)
    col = np.arange(len(row)) - np.repeat(np.cumsum(widths) - widths, widths)
    values[row, col] = flat[np.repeat(starts + 2, widths) + col]
    warnings.append(f"AnimationKey {obj.name or ''}: keys of different sizes (padded)")
    return KeyTrack(key_type, flat[starts].copy(), values)


def animation(obj: XObject, warnings: list[str]) -> AnimationData:
    frame_name = None
    for child in obj.children:
        if isinstance(child, XReference):
            frame_name = child.target.name if child.target is not None else child.name
            break
    if frame_name is None:
        frames = children_named(obj, "Frame")
        frame_name = frames[0].name if frames else obj.name
    data = AnimationData(frame_name)
    for key in children_named(obj, "AnimationKey"):
        try:
            track = key_track(key, warnings)
        except (*DATA_ERRORS, StopIteration) as exc:
            warnings.append(f"AnimationKey ignored: {exc}")
            continue
        if track is not None:
            data.tracks.append(track)
    for opts in children_named(obj, "AnimationOptions"):
        data.open = int(member(opts, 0, "openclosed")) != 0
        data.linear = int(member(opts, 1, "positionquality")) != 0
    return data


def animation_set(obj: XObject, warnings: list[str]) -> AnimationSetData:
    result = AnimationSetData(obj.name)
    for anim in children_named(obj, "Animation"):
        result.animations.append(animation(anim, warnings))
    return result


def morph_set(obj: XObject) -> MorphSetData:
    """Both variants: with ``DWORD Loop`` before NumKeys or without (then it does not loop:
    only ``Loop = 1`` or the importer's option cycles a set)."""
    loop_value = None
    for name, value in obj.members.items():
        if is_word(name, "loop"):
            loop_value = value
    keys_value = next((v for v in obj.members.values() if isinstance(v, list)), [])
    keys = []
    for rec in keys_value:
        parts = list(rec.values()) if isinstance(rec, dict) else []
        if len(parts) < 2 or not isinstance(parts[1], str):
            raise ValueError("MorphAnimationSet keys are not (time, mesh name) records")
        keys.append(MorphKeyData(float(parts[0]), parts[1]))
    return MorphSetData(obj.name, False if loop_value is None else bool(loop_value), keys)
