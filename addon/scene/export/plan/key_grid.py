"""Key times and values as other readers want them: one time grid per set, the tick rate,
exact values.

- Readers that play a set by key index (Panda3D's loaders: its own ``.x`` reader and its
  Assimp one) need every track of a set keyed at the same times, else they refuse the set
  ("mismatched number of frames") or play it at the longest track's length. Legacy files
  key every part of every track of a set at the set's grid: the union of the times the
  tracks need.
- ``AnimTicksPerSecond`` is the scene's rate when every written key is on a whole frame of a
  common rate (then ticks are frames, and a reader that counts frames in ticks, Irrlicht,
  counts the scene's frames), else 4800.
- Values that are a whole number give or take rounding noise of the matrix algebra
  (``3e-30`` in an identity rotation) are written as that number.

Numpy only (no bpy), so the rules are tested without Blender.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

#: frame rates the importer takes from AnimTicksPerSecond itself (its ``COMMON_RATES``)
FRAME_RATES = (12, 15, 24, 25, 30, 48, 50, 60, 72, 90, 100, 120)
#: AnimTicksPerSecond when keys fall between frames or the rate is not a common one
FINE_TICKS = 4800
#: how far (in frames) a key may sit from a whole frame and still count as on it
WHOLE_FRAME = 1e-4
#: relative distance under which a value is its nearest whole number
EXACT = 1e-12
#: relative size (to the largest entry of its key, at least 1) under which a value is 0:
#: below the 32-bit step (6e-8) of the curves and rest matrices the keys are computed from
NOISE = 1e-8


def ticks_per_second(fps: float, frames: Iterable[np.ndarray]) -> int:
    """The scene's rate when it is a common one and every key (scene frames) is on a whole
    frame, else :data:`FINE_TICKS`."""
    rate = round(fps)
    if abs(fps - rate) > 1e-9 or rate not in FRAME_RATES:
        return FINE_TICKS
    for f in frames:
        f = np.asarray(f, dtype=np.float64)
        if np.any(np.abs(f - np.rint(f)) > WHOLE_FRAME):
            return FINE_TICKS
    return rate


def to_ticks(frames: np.ndarray, fps: float, tps: int) -> np.ndarray:
    """Scene frames -> whole ticks at ``tps`` ticks a second."""
    return np.rint(np.asarray(frames, dtype=np.float64) * (tps / fps)).astype(np.int64)


def set_grid(times: Iterable[np.ndarray], every_frame: bool = False) -> np.ndarray:
    """The one grid of a set: every time some track needs (``times``, scene frames), and with
    ``every_frame`` every whole frame between the first and the last too (a curve that the
    reader cannot interpolate from the keys alone is sampled)."""
    parts = [np.asarray(t, dtype=np.float64).reshape(-1) for t in times]
    grid = np.unique(np.concatenate(parts)) if parts else np.zeros(0)
    if every_frame and len(grid) > 1:
        whole = np.arange(np.ceil(grid[0]), np.floor(grid[-1]) + 1)
        grid = np.unique(np.concatenate([grid, whole]))
    if len(grid) > 1:  # one key per tick: times closer than rounding noise are one key
        keep = np.concatenate([[True], np.diff(grid) > WHOLE_FRAME])
        grid = grid[keep]
    return grid


def exact(values: np.ndarray) -> np.ndarray:
    """``values`` (rows of one key each) with rounding noise taken out: an entry within
    :data:`NOISE` of zero, relative to its row's largest entry (at least 1), is 0; one within
    :data:`EXACT` of a whole number, relative to its size (at least 1), is that number; and
    ``-0`` is ``0``. Blender keeps key values in 32 bits, so what lies below those steps is the
    matrix algebra's, not the animation's."""
    v = np.asarray(values, dtype=np.float64)
    rows = v.reshape(len(v), -1) if v.ndim else v.reshape(1, 1)
    size = np.maximum(1.0, np.max(np.abs(rows), axis=1, initial=0.0))[:, None]
    near = np.rint(rows)
    out = np.where(np.abs(rows - near) <= EXACT * np.maximum(1.0, np.abs(rows)), near, rows)
    out = np.where(np.abs(out) <= NOISE * size, 0.0, out) + 0.0
    return out.reshape(v.shape)
