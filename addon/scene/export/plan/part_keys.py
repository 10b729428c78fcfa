"""Per-part key times for spline sets whose parts were keyed at different times.

The importer keys every Blender channel at the union of the file's position, rotation and
scale times (plus slerp samples). A spline set's positions then only come back if the file
holds the original position keys: the Hermite tangent of a key depends on its neighbouring
keys, so writing the union as position keys would make another curve (and other key spacing,
so another frame-rate guess). Here each part gets its own keys back:

- positions: a key inside one cubic piece of the curve is not a file key. Blender's curve
  is sampled at the keys and half-way between them; five samples around a key that lie on
  one cubic mean the key is inside a piece;
- rotations and scales: a key on the slerp / lerp path between its kept neighbours is left
  out (greedy from the left);
- then the importer's own ``refine_times`` and ``sample_parts`` must give back every Blender
  key and the half-way values, or None (the caller keeps its common key set).

Numpy only (no bpy), so the rule is tested without Blender.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...anim import position_spline
from ...anim.key_sampling import DEFAULT_MAX_STEP, KeyParts, refine_times, sample_parts
from ...rig.rig_math import make_continuous, quat_angle, slerp
from .key_reduction import ANGLE_TOLERANCE, POSITION_TOLERANCE, TIME_TOLERANCE


@dataclass(eq=False)
class PartIndices:
    """Indices into the Blender key times for each part's file keys."""

    pos: np.ndarray
    rot: np.ndarray
    scale: np.ndarray


def _on_one_cubic(t: np.ndarray, v: np.ndarray, middle: int, tol: float) -> bool:
    """Do the points ``(t, v)`` lie on one cubic? The cubic through all but ``middle`` is
    evaluated at ``t[middle]`` (Lagrange form; the times are distinct)."""
    others = [i for i in range(len(t)) if i != middle]
    x = t[middle]
    value = np.zeros(v.shape[1])
    for i in others:
        weight = 1.0
        for j in others:
            if j != i:
                weight *= (x - t[j]) / (t[i] - t[j])
        value += weight * v[i]
    return bool(np.all(np.abs(value - v[middle]) <= tol))


def spline_position_keys(
    times: np.ndarray, pos: np.ndarray, mid_pos: np.ndarray, tol: float
) -> np.ndarray:
    """Indices of the keys where the position curve changes cubic piece (ends always).

    ``mid_pos[i]`` is the curve half-way between keys ``i`` and ``i + 1``."""
    k = len(times)
    if k < 3:
        return np.arange(k)
    mids = (times[:-1] + times[1:]) / 2
    keep = [0]
    for u in range(1, k - 1):
        t = np.array([times[u - 1], mids[u - 1], times[u], mids[u], times[u + 1]])
        v = np.stack([pos[u - 1], mid_pos[u - 1], pos[u], mid_pos[u], pos[u + 1]])
        scale = max(1.0, float(np.max(np.abs(v))))
        if not _on_one_cubic(t, v, 2, tol * scale):
            keep.append(u)
    keep.append(k - 1)
    return np.asarray(keep, dtype=np.int64)


def path_keys(times: np.ndarray, values: np.ndarray, rotation: bool) -> np.ndarray:
    """Indices of the keys a slerp (``rotation``) or lerp path needs, greedy from the left."""
    k = len(times)
    if k < 3:
        return np.arange(k)
    if rotation:
        values = make_continuous(values)
    size = max(1.0, float(np.max(np.abs(values))))

    def on_path(i: int, j: int) -> bool:
        t = (times[i + 1 : j] - times[i]) / (times[j] - times[i])
        if rotation:
            q = slerp(values[i], values[j], t)  # broadcast over t
            return bool(np.all(quat_angle(q, values[i + 1 : j]) <= ANGLE_TOLERANCE))
        line = values[i] + t[:, None] * (values[j] - values[i])
        return bool(np.all(np.abs(line - values[i + 1 : j]) <= POSITION_TOLERANCE * size))

    kept = [0]
    i = 0
    while i < k - 1:
        j = i + 1
        while j + 1 < k and on_path(i, j + 1):
            j += 1
        kept.append(j)
        i = j
    return np.asarray(kept, dtype=np.int64)


def part_keys(
    times: np.ndarray, pos: np.ndarray, quat: np.ndarray, scale: np.ndarray,
    mid_pos: np.ndarray, max_step: float = DEFAULT_MAX_STEP,
) -> PartIndices | None:  # fmt: skip
    """Each part's own file keys of a spline set, or None when the importer would not read
    them back into these keys (see the module docstring)."""
    times = np.asarray(times, dtype=np.float64)
    if len(times) < 3:
        return None
    extent = float(np.max(np.abs(pos))) if pos.size else 0.0
    tol = POSITION_TOLERANCE * max(1.0, extent)
    out = PartIndices(
        spline_position_keys(times, pos, mid_pos, POSITION_TOLERANCE),
        path_keys(times, quat, rotation=True),
        path_keys(times, scale, rotation=False),
    )
    parts = KeyParts(
        pos=(times[out.pos], pos[out.pos]),
        rot=(times[out.rot], quat[out.rot]),
        scale=(times[out.scale], scale[out.scale]),
    )
    at = refine_times(parts, max_step)
    if len(at) != len(times) or np.any(np.abs(at - times) > TIME_TOLERANCE):
        return None
    got = sample_parts(parts, np.eye(4), at, spline=True)
    mid, _ = position_spline.evaluate(times[out.pos], pos[out.pos], (times[:-1] + times[1:]) / 2)
    good = (
        np.all(np.abs(got.pos - pos) <= tol)
        and np.all(np.abs(mid - mid_pos) <= tol)
        and np.all(quat_angle(got.rot, quat) <= ANGLE_TOLERANCE)
        and np.all(np.abs(got.scale - scale) <= POSITION_TOLERANCE * max(1.0, np.abs(scale).max()))
    )
    return out if good else None
