"""Keyframe handles computed up front, so curves need no ``FCurve.update()`` (numpy only).

Blender's Bezier segment between two keys is a cubic in time when the handles sit at one
third of the span (time runs linearly along the segment); its values at the ends of the
segment are the keys, its slopes there are the handles' slopes. So:

- a curve with known slopes (a spline, :mod:`.position_spline`) gets FREE handles at one third
  of the neighbouring spans along the slope: Blender then draws exactly that cubic;
- a linear curve gets VECTOR handles, one third of the way to each neighbour (what Blender
  would compute for them), so it shows sensibly and turning it to Bezier keeps its shape.

Writing the handles ourselves (one ``foreach_set`` each) is cheaper than ``FCurve.update()``
recomputing automatic ones, and FREE handles are never recomputed behind our back.
"""

from __future__ import annotations

import numpy as np

# keyframe handle types by RNA enum value (foreach_set takes the values)
FREE, AUTO, VECTOR, ALIGNED, AUTO_CLAMPED = 0, 1, 2, 3, 4


def spans(frames: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Width of the span before and after each key (an end key borrows its one neighbour)."""
    frames = np.asarray(frames, dtype=np.float64)
    if len(frames) < 2:
        one = np.ones(len(frames))
        return one, one
    gaps = np.diff(frames)
    before = np.concatenate([gaps[:1], gaps])
    after = np.concatenate([gaps, gaps[-1:]])
    return before, after


def handles(
    frames: np.ndarray, values: np.ndarray, slopes: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Left and right handles, (k, 2) each: along ``slopes`` (per frame), else VECTOR-style."""
    frames = np.asarray(frames, dtype=np.float64)
    values = np.asarray(values, dtype=np.float64)
    before, after = spans(frames)
    if slopes is None:
        rise = np.diff(values)
        rise_before = np.concatenate([[0.0], rise]) if len(values) else rise
        rise_after = np.concatenate([rise, [0.0]]) if len(values) else rise
        left_value = values - rise_before / 3.0
        right_value = values + rise_after / 3.0
    else:
        slopes = np.asarray(slopes, dtype=np.float64)
        left_value = values - slopes * before / 3.0
        right_value = values + slopes * after / 3.0
    left = np.stack([frames - before / 3.0, left_value], axis=1)
    right = np.stack([frames + after / 3.0, right_value], axis=1)
    return left, right
