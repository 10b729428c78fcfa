"""Animation keys -> sampled local transforms and Blender channels (numpy only, no bpy).

A frame's animated local matrix follows D3DX: position and scale interpolate linearly,
rotations by slerp, a matrix key is split into the same three parts, and a part with no
keys keeps the frame's own matrix value. Spline sets (positionquality 0) move positions along
the cubic Hermite curve of :mod:`.position_spline` instead. Tracks are sampled at the union
of their key times; Blender then interpolates each channel on its own (quaternions
component-wise, then normalised), which matches slerp only for small steps, so long rotation
spans get extra samples (``max_step``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ...xfile.views.model import AnimationData
from ..rig.rig_math import (
    make_continuous,
    quat_angle,
    quat_norm,
    row_compose,
    row_decompose,
    slerp,
)
from . import position_spline

# Angle between samples below which nlerp stays within ~1e-5 rad of slerp.
DEFAULT_MAX_STEP = np.radians(4.0)
FLOAT32_MAX = float(np.finfo(np.float32).max)


@dataclass(eq=False)
class KeyParts:
    """One animation's keys split by part, file space; ``None`` where the file gives none."""

    pos: tuple[np.ndarray, np.ndarray] | None = None  # times (k,), values (k, 3)
    rot: tuple[np.ndarray, np.ndarray] | None = None  # times (k,), (w, x, y, z) (k, 4)
    scale: tuple[np.ndarray, np.ndarray] | None = None
    warnings: list[str] = field(default_factory=list)

    def times(self) -> np.ndarray:
        parts = [p[0] for p in (self.pos, self.rot, self.scale) if p is not None]
        return np.unique(np.concatenate(parts)) if parts else np.zeros(0)


def _clean(times: np.ndarray, values: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Drop keys that are not finite or have the wrong width; sort; last key wins per time."""
    times = np.asarray(times, dtype=np.float64).reshape(-1)
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 2 or values.shape[1] != width or len(values) != len(times):
        return np.zeros(0), np.zeros((0, width)), len(times)
    ends = times[[0, -1]] if len(times) else times
    if np.isfinite(ends).all() and np.all(times[1:] > times[:-1]) and np.isfinite(values).all():
        return times, values, 0  # what files hold: sorted, distinct, finite (read-only use)
    ok = np.isfinite(times) & np.all(np.isfinite(values), axis=1)
    times, values = times[ok], values[ok]
    order = np.argsort(times, kind="stable")
    times, values = times[order], values[order]
    last = np.append(times[1:] != times[:-1], True) if len(times) else np.zeros(0, bool)
    return times[last], values[last], int(np.count_nonzero(~ok))


def split_keys(anim: AnimationData) -> KeyParts:
    """The keys of one Animation by part; matrix keys become position/rotation/scale keys."""
    parts = KeyParts()
    label = anim.frame_name or "<unnamed>"
    widths = {0: 4, 1: 3, 2: 3, 3: 16, 4: 16}
    for track in anim.tracks:
        width = widths.get(track.key_type)
        if width is None:
            parts.warnings.append(f"animation of {label!r}: unknown key type {track.key_type}")
            continue
        times, values, dropped = _clean(track.times, track.values, width)
        if dropped:
            parts.warnings.append(
                f"animation of {label!r}: {dropped} unusable key(s) of type {track.key_type}"
            )
        if not len(times):
            continue
        if track.key_type == 0:
            with np.errstate(over="ignore"):
                norm = np.linalg.norm(values, axis=1)
            huge = np.isinf(norm)  # finite values past 1e154 square past float64
            if huge.any():
                values = values.copy()
                values[huge] /= np.abs(values[huge]).max(axis=1, keepdims=True)
                norm[huge] = np.linalg.norm(values[huge], axis=1)
            good = norm > 1e-12
            if np.all(good):
                parts.rot = (times, values / norm[:, None])
            elif np.any(good):  # all-zero quaternions key nothing (the rest rotation stays)
                parts.rot = (times[good], values[good] / norm[good, None])
        elif track.key_type == 1:
            parts.scale = (times, values)
        elif track.key_type == 2:
            parts.pos = (times, values)
        else:
            # a matrix Blender cannot hold (past 32-bit floats) would overflow its split
            usable = np.all(np.abs(values) <= FLOAT32_MAX, axis=1)
            if not usable.all():
                parts.warnings.append(
                    f"animation of {label!r}: {np.count_nonzero(~usable)} matrix key(s) past "
                    "32-bit floats dropped"
                )
                times, values = times[usable], values[usable]
                if not len(times):
                    continue
            pos, rot, scale = row_decompose(values.reshape(-1, 4, 4))
            parts.pos, parts.rot, parts.scale = (times, pos), (times, rot), (times, scale)
    return parts


_PARTS = {0: ("rot", 4), 1: ("scale", 3), 2: ("pos", 3)}


def split_all(anims: list[AnimationData]) -> list[KeyParts]:
    """:func:`split_keys` of every animation; the keys of all tracks checked in one pass
    when they are what files hold (rotation, scale and position keys, sorted, distinct,
    finite, no zero quaternion), else track by track. Equal results either way."""
    tracks = [track for anim in anims for track in anim.tracks]
    for track in tracks:
        part = _PARTS.get(track.key_type)
        times, values = track.times, track.values
        if (
            part is None
            or not isinstance(times, np.ndarray)
            or not isinstance(values, np.ndarray)
            or times.dtype != np.float64
            or values.dtype != np.float64
            or times.ndim != 1
            or values.shape != (len(times), part[1])
        ):
            return [split_keys(anim) for anim in anims]
    if not tracks:
        return [KeyParts() for _ in anims]
    count = np.array([len(t.times) for t in tracks], dtype=np.int64)
    start = np.cumsum(count) - count
    times = np.concatenate([t.times for t in tracks])
    first = np.zeros(len(times), dtype=bool)
    first[start[count > 0]] = True  # a track's first key need not follow the previous track's
    if not (np.isfinite(times).all() and ((times[1:] > times[:-1]) | first[1:]).all()):
        return [split_keys(anim) for anim in anims]
    rot = [i for i, t in enumerate(tracks) if t.key_type == 0]
    # a sum or norm is finite only if every value is (overflow, not reported by numpy, just
    # takes the slow path, which says what it drops)
    with np.errstate(over="ignore", invalid="ignore"):
        total = sum(float(t.values.sum()) for t in tracks if t.key_type != 0)
    if not math.isfinite(total):
        return [split_keys(anim) for anim in anims]
    unit = np.zeros((0, 4))
    if rot:
        quats = np.concatenate([tracks[i].values for i in rot])
        with np.errstate(over="ignore"):
            norm = quat_norm(quats)  # np.linalg.norm's, bit for bit
        if not ((norm > 1e-12) & (norm < np.inf)).all():
            return [split_keys(anim) for anim in anims]
        unit = quats / norm[:, None]
    at = np.zeros(len(tracks), dtype=np.int64)  # each rotation track's first row in ``unit``
    at[rot] = np.cumsum(count[rot]) - count[rot]
    out = []
    index = 0
    for anim in anims:
        parts = KeyParts()
        for track in anim.tracks:
            n = int(count[index])
            if n:
                if track.key_type == 0:
                    a = int(at[index])
                    parts.rot = (track.times, unit[a : a + n])
                elif track.key_type == 1:
                    parts.scale = (track.times, track.values)
                else:
                    parts.pos = (track.times, track.values)
            index += 1
        out.append(parts)
    return out


def _lerp(times: np.ndarray, values: np.ndarray, at: np.ndarray) -> np.ndarray:
    return np.stack([np.interp(at, times, values[:, c]) for c in range(values.shape[1])], axis=1)


def _slerp_at(times: np.ndarray, quats: np.ndarray, at: np.ndarray) -> np.ndarray:
    quats = make_continuous(quats)
    if len(times) == 1:
        return np.repeat(quats, len(at), axis=0)
    hi = np.clip(np.searchsorted(times, at, side="right"), 1, len(times) - 1)
    lo = hi - 1
    t = np.clip((at - times[lo]) / (times[hi] - times[lo]), 0.0, 1.0)
    return slerp(quats[lo], quats[hi], t)


def refine_times(parts: KeyParts, max_step: float = DEFAULT_MAX_STEP) -> np.ndarray:
    """The key times, with extra samples inside rotation spans wider than ``max_step``."""
    times = parts.times()
    if parts.rot is None or len(parts.rot[0]) < 2 or len(times) < 2:
        return times
    q = _slerp_at(parts.rot[0], parts.rot[1], times)
    steps = np.ceil(quat_angle(q[:-1], q[1:]) / max_step - 1e-6).astype(np.int64)  # 40/4 is 10
    if np.all(steps <= 1):
        return times
    extra = [np.linspace(times[i], times[i + 1], n + 1)[1:-1] for i, n in enumerate(steps) if n > 1]
    return np.unique(np.concatenate([times, *extra]))


@dataclass(eq=False)
class LocalSamples:
    """One animation's local transform parts at the sample times (file space)."""

    pos: np.ndarray  # (k, 3)
    rot: np.ndarray  # (k, 4) w, x, y, z
    scale: np.ndarray  # (k, 3)
    pos_slope: np.ndarray | None = None  # (k, 3) per tick on spline positions, else None

    def matrices(self) -> np.ndarray:
        """(k, 4, 4) file row-vector local matrices."""
        return row_compose(self.pos, self.rot, self.scale)


def sample_parts(
    parts: KeyParts, rest_local: np.ndarray, at: np.ndarray, spline: bool = False
) -> LocalSamples:
    """The parts at tick times ``at``; ``spline``: positions on the Hermite curve, with slopes."""
    at = np.asarray(at, dtype=np.float64)
    pos0, rot0, scale0 = row_decompose(np.asarray(rest_local, dtype=np.float64))
    k = len(at)
    slope = None
    if parts.pos is None:
        pos = np.repeat(pos0[None], k, 0)
    elif spline:
        pos, slope = position_spline.evaluate(*parts.pos, at)
    else:
        pos = _lerp(*parts.pos, at)
    rot = _slerp_at(*parts.rot, at) if parts.rot else np.repeat(rot0[None], k, 0)
    scale = _lerp(*parts.scale, at) if parts.scale else np.repeat(scale0[None], k, 0)
    return LocalSamples(pos, rot, scale, slope)


def sample_local(
    parts: KeyParts, rest_local: np.ndarray, at: np.ndarray, spline: bool = False
) -> np.ndarray:
    """(k, 4, 4) file row-vector local matrices at tick times ``at``."""
    return sample_parts(parts, rest_local, at, spline).matrices()


@dataclass(eq=False)
class Channels:
    """Blender-side keys for one animated target: frames and loc/rot/scale per frame."""

    frames: np.ndarray  # (k,) scene frames
    location: np.ndarray  # (k, 3)
    rotation: np.ndarray  # (k, 4) w, x, y, z, sign-continuous
    scale: np.ndarray  # (k, 3)
    location_slope: np.ndarray | None = None  # (k, 3) per frame: spline locations, else linear


#: rates a file's key spacing is believed to reveal; sparser keying says nothing about the rate
COMMON_RATES = (12, 15, 24, 25, 30, 48, 50, 60, 72, 90, 100, 120)


def guess_frame_rate(all_times: list[np.ndarray], ticks_per_second: float) -> float | None:
    """The frame rate the keys were sampled at: ticks per second / common key spacing.

    Only a common rate counts (keys every 4800 ticks at 4800 ticks/s mean sparse keys, not a
    1 fps animation); None otherwise.
    """
    steps = _sorted_gaps([np.asarray(t) for t in all_times if len(t) > 1])
    if steps is None:
        gaps = [np.diff(_distinct(t)) for t in all_times if len(t) > 1]
        if not gaps:
            return None
        steps = np.concatenate(gaps)
    # gaps past float64 (1e308 ticks) or its whole numbers (2**53, the int64 cast below):
    # no rate to see
    if not (np.abs(steps) < 2.0**53).all():
        return None
    if len(steps) and bool((steps == steps[0]).all()):
        steps = steps[:1]  # evenly spaced keys (the usual case): the tests below on one gap
    if np.any(np.abs(steps - np.rint(steps)) > 1e-6):
        return None
    step = int(np.gcd.reduce(np.rint(steps).astype(np.int64)))
    if step <= 0:
        return None
    rate = ticks_per_second / step
    return float(rate) if any(abs(rate - r) < 1e-9 for r in COMMON_RATES) else None


def _sorted_gaps(arrays: list[np.ndarray]) -> np.ndarray | None:
    """Every array's ``np.diff`` joined, in one pass when all are strictly increasing float
    times (what files hold); None otherwise (or when there are none)."""
    if not arrays or not all(t.ndim == 1 and t.dtype.kind == "f" for t in arrays):
        return None
    cat = np.concatenate(arrays)
    inner = np.ones(len(cat) - 1, dtype=bool)  # pairs within one array
    inner[np.cumsum([len(t) for t in arrays])[:-1] - 1] = False
    if not (cat[1:] > cat[:-1])[inner].all():
        return None
    return np.diff(cat)[inner]


def _distinct(times: np.ndarray) -> np.ndarray:
    """``np.unique(times)``; times already strictly increasing (what files hold) as they are."""
    times = np.asarray(times)
    if times.ndim == 1 and times.dtype.kind == "f" and np.all(times[1:] > times[:-1]):
        return times
    return np.unique(times)


def ticks_are_frames(all_times: list[np.ndarray], ticks_per_second: float) -> float | None:
    """``ticks_per_second`` when it is a common frame rate and every key is on a whole tick:
    the file counts in frames (what xof's exporter writes), however sparse the keys."""
    if not any(abs(ticks_per_second - r) < 1e-9 for r in COMMON_RATES):
        return None
    if not any(len(t) for t in all_times):
        return None
    for t in all_times:
        t = np.asarray(t, dtype=np.float64)
        if np.any(np.abs(t - np.rint(t)) > 1e-6):
            return None
    return float(ticks_per_second)
