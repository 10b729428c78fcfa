"""Keyframe handles computed up front, so curves need no ``FCurve.update()`` (numpy only).

Blender's Bezier segment between two keys is a cubic in time when the handles sit at one
third of the span (time runs linearly along the segment); its values at the ends of the
segment are the keys, its slopes there are the handles' slopes. So:

- curves with known slopes (a spline, :mod:`.position_spline`) get FREE handles at one third
  of the neighbouring spans along the slope: Blender then draws exactly that cubic;
- linear curves get handles one third of the way to each neighbour (where VECTOR handles
  would be), so they show sensibly. Their type stays Blender's default (automatic clamped,
  recomputed on the first edit; linear keys ignore handles): writing types costs two passes.

``FCurve.update()`` costs about four ``foreach_set`` passes per key; writing the handle
positions costs two.
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


def interleave(frames: np.ndarray, values: np.ndarray) -> np.ndarray:
    """(k,) frames, (k, n) values -> (n, 2k) float32 ``x0, y0, x1, y1, ...`` per channel."""
    values = np.asarray(values)
    out = np.empty((values.shape[1], 2 * len(frames)), dtype=np.float32)
    out[:, 0::2] = np.asarray(frames)[None, :]
    out[:, 1::2] = values.T
    return out


def handles(
    frames: np.ndarray, values: np.ndarray, slopes: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Left and right handles of every channel as :func:`interleave` arrays.

    ``values`` (k, n); ``slopes`` (k, n) per frame, or None for straight lines between keys.
    """
    frames = np.asarray(frames, dtype=np.float64)
    values = np.asarray(values, dtype=np.float64)
    before, after = spans(frames)
    if slopes is None:
        rise = np.diff(values, axis=0, prepend=values[:1], append=values[-1:])
        left_value = values - rise[:-1] / 3.0
        right_value = values + rise[1:] / 3.0
    else:
        slopes = np.asarray(slopes, dtype=np.float64)
        left_value = values - slopes * (before / 3.0)[:, None]
        right_value = values + slopes * (after / 3.0)[:, None]
    return (
        interleave(frames - before / 3.0, left_value),
        interleave(frames + after / 3.0, right_value),
    )
