"""Which of a target's keys the file needs: the importer's own extra samples are left out.

On import, a rotation span wider than ``max_step`` gets evenly spaced extra samples
(:func:`..key_sampling.refine_times`), all on the slerp/lerp path between the file's two keys.
Writing them back would make the next import see other keys (and another key spacing, so
another frame-rate guess). So a run of keys is written as its two ends when the importer,
reading those two, would insert exactly the keys in between: same count, evenly spaced,
values on the path. Numpy only (no bpy) so the rule is tested without Blender.
"""

from __future__ import annotations

import numpy as np

from ...anim.key_sampling import DEFAULT_MAX_STEP, KeyParts, refine_times, sample_parts
from ...rig.rig_math import quat_angle, slerp

#: how far a kept value may sit from the path (file units, radians) and a time from even spacing
POSITION_TOLERANCE = 1e-6
ANGLE_TOLERANCE = 2e-6
TIME_TOLERANCE = 1e-3  # in the caller's time unit (scene frames)


def _span_regenerated(
    times: np.ndarray, pos: np.ndarray, quat: np.ndarray, scale: np.ndarray,
    i: int, j: int, max_step: float, pos_tol: float, spline: bool,
) -> bool:  # fmt: skip
    """Would the importer, given keys ``i`` and ``j`` only, put back every key between them?"""
    n = j - i
    angle = float(quat_angle(quat[i], quat[j]))
    low = int(np.ceil(angle / max_step - 1e-6))
    high = int(np.ceil(angle / max_step + 1e-6))
    if not low <= n <= high:
        return False
    span = times[j] - times[i]
    t = (times[i + 1 : j] - times[i]) / span
    if np.any(np.abs(t - np.arange(1, n) / n) * span > TIME_TOLERANCE):
        return False
    q = slerp(np.repeat(quat[i][None], n - 1, 0), np.repeat(quat[j][None], n - 1, 0), t)
    if np.any(quat_angle(q, quat[i + 1 : j]) > ANGLE_TOLERANCE):
        return False
    lines = [(scale, POSITION_TOLERANCE)]
    if not spline:  # spline positions are checked on the whole curve (file_keys)
        lines.append((pos, pos_tol))
    for values, tol in lines:
        line = values[i] + t[:, None] * (values[j] - values[i])
        if np.any(np.abs(line - values[i + 1 : j]) > tol):
            return False
    return True


def file_keys(
    times: np.ndarray,
    pos: np.ndarray,
    quat: np.ndarray,
    scale: np.ndarray,
    max_step: float = DEFAULT_MAX_STEP,
    spline: bool = False,
) -> np.ndarray:
    """Indices of the keys to write (first and last always); the rest the importer restores.

    ``times`` ascending; ``pos``/``quat``/``scale`` the file-space parts at those times;
    ``spline``: positions follow the importer's Hermite curve (positionquality spline).
    Greedy from the left, each span stretched while the importer would still refill it; then
    the importer's own sampling is run on the kept keys and must give back every key, or all
    keys are kept.
    """
    k = len(times)
    if k < 3:
        return np.arange(k)
    times = np.asarray(times, dtype=np.float64)
    extent = float(np.max(np.abs(pos))) if pos.size else 0.0
    pos_tol = POSITION_TOLERANCE * max(1.0, extent)
    kept = [0]
    i = 0
    while i < k - 1:
        j = i + 1
        while j + 1 < k and _span_regenerated(
            times, pos, quat, scale, i, j + 1, max_step, pos_tol, spline
        ):
            j += 1
        kept.append(j)
        i = j
    out = np.asarray(kept, dtype=np.int64)
    if len(out) < k and not _importer_restores(times, pos, quat, scale, out, max_step, spline,
                                               pos_tol):  # fmt: skip
        return np.arange(k)
    return out


def _importer_restores(
    times: np.ndarray, pos: np.ndarray, quat: np.ndarray, scale: np.ndarray,
    kept: np.ndarray, max_step: float, spline: bool, pos_tol: float,
) -> bool:  # fmt: skip
    """Does the importer, reading only the ``kept`` keys, key exactly ``times`` with these
    values? (Its own refine_times and sample_parts decide.)"""
    t = times[kept]
    parts = KeyParts(pos=(t, pos[kept]), rot=(t, quat[kept]), scale=(t, scale[kept]))
    at = refine_times(parts, max_step)
    if len(at) != len(times) or np.any(np.abs(at - times) > TIME_TOLERANCE):
        return False
    got = sample_parts(parts, np.eye(4), at, spline)
    return bool(
        np.all(np.abs(got.pos - pos) <= pos_tol)
        and np.all(quat_angle(got.rot, quat) <= ANGLE_TOLERANCE)
        and np.all(np.abs(got.scale - scale) <= POSITION_TOLERANCE)
    )


def is_constant(values: np.ndarray, tol: float = POSITION_TOLERANCE) -> bool:
    """Every row equal to the first (within ``tol`` relative to the values' size)."""
    if len(values) < 2:
        return True
    size = max(1.0, float(np.max(np.abs(values))))
    return bool(np.all(np.abs(values - values[0]) <= tol * size))
