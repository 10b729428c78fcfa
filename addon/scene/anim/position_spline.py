"""The position curve of a spline animation (AnimationOptions positionquality 0), numpy only.

The .X format names the option but not the curve; this importer defines it as a cubic
Hermite spline through the keys, non-uniform in time:

- interior key ``i``: tangent ``(p[i+1] - p[i-1]) / (t[i+1] - t[i-1])`` (Catmull-Rom when the
  keys are evenly spaced, and a straight line stays straight and uniform);
- first and last key: tangent 0 (clamped: the motion eases in and out of the key range);
- before the first key and after the last: the end key's value.

A cubic in time is exactly a Bezier segment whose handles sit at one third of the span along
the end tangents, so Blender reproduces the curve exactly (see :mod:`.bezier_keys`), also
when other parts' key times split a span.
"""

from __future__ import annotations

import numpy as np


def hermite_tangents(times: np.ndarray, values: np.ndarray) -> np.ndarray:
    """(k,) strictly increasing times, (k, n) values -> (k, n) tangents per unit of time."""
    times = np.asarray(times, dtype=np.float64)
    values = np.asarray(values, dtype=np.float64)
    out = np.zeros_like(values)
    if len(times) > 2:
        span = (times[2:] - times[:-2])[:, None]
        out[1:-1] = (values[2:] - values[:-2]) / span
    return out


def evaluate(
    times: np.ndarray, values: np.ndarray, at: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Value and time derivative of the spline at ``at``: two (len(at), n) arrays."""
    times = np.asarray(times, dtype=np.float64)
    values = np.asarray(values, dtype=np.float64)
    at = np.asarray(at, dtype=np.float64)
    if len(times) < 2:
        value = np.repeat(values[:1], len(at), axis=0)
        return value, np.zeros_like(value)
    tangents = hermite_tangents(times, values)
    hi = np.clip(np.searchsorted(times, at, side="right"), 1, len(times) - 1)
    lo = hi - 1
    h = (times[hi] - times[lo])[:, None]
    s = np.clip((at[:, None] - times[lo][:, None]) / h, 0.0, 1.0)
    value, slope = hermite_segments(values[lo], values[hi], tangents[lo], tangents[hi], s, h)
    outside = (at < times[0]) | (at > times[-1])
    slope[outside] = 0.0
    return value, slope


def hermite_segments(
    p0: np.ndarray, p1: np.ndarray, t0: np.ndarray, t1: np.ndarray, s: np.ndarray, h: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Cubic Hermite value and slope (per unit of time) at ``s`` in 0..1 of segments of
    length ``h`` from ``p0`` to ``p1`` with tangents ``t0``, ``t1`` per unit of time."""
    m0, m1 = t0 * h, t1 * h  # tangents per unit of s
    s2, s3 = s * s, s * s * s
    value = (
        (2 * s3 - 3 * s2 + 1) * p0 + (s3 - 2 * s2 + s) * m0 + (-2 * s3 + 3 * s2) * p1
        + (s3 - s2) * m1
    )  # fmt: skip
    slope = ((6 * s2 - 6 * s) * (p0 - p1) + (3 * s2 - 4 * s + 1) * m0 + (3 * s2 - 2 * s) * m1) / h
    return value, slope
