"""Key sampling of many tracks at once (numpy only, no bpy).

The same results as :func:`.key_sampling.refine_times` and :func:`.key_sampling.sample_parts`
called track by track, computed on the concatenation of all tracks' keys: per-call numpy
overhead, not arithmetic, dominates a set of a few hundred tracks. Each part (position,
rotation, scale) of every track that has it is laid out as one :class:`Segments` (keys of
track after track, with offsets); queries (sample times) likewise. Only the key lookup runs
once per track (one ``searchsorted``, exact); interpolation, slerp, sign continuity and the
refinement of wide rotation spans are vectorised over all tracks. The arithmetic is the
per-track functions' own, element for element (``np.interp``'s and ``np.linspace``'s
formulas written out), so the samples are equal.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..rig.rig_math import quat_angle, quat_dot, quat_norm, row_decompose, slerp
from .key_sampling import KeyParts, LocalSamples
from .position_spline import hermite_segments


@dataclass(eq=False)
class Segments:
    """Concatenated per-track arrays: track ``i`` owns ``values[start[i]:start[i] + count[i]]``."""

    values: np.ndarray  # (n,) or (n, c)
    start: np.ndarray  # (tracks,) int64
    count: np.ndarray  # (tracks,) int64

    @staticmethod
    def of(arrays: list[np.ndarray], width: int | None = None) -> Segments:
        count = np.array([len(a) for a in arrays], dtype=np.int64)
        start = (np.cumsum(count) - count).astype(np.int64)
        shape = (0,) if width is None else (0, width)
        values = np.concatenate(arrays) if arrays else np.zeros(shape)
        return Segments(np.asarray(values, dtype=np.float64), start, count)

    def owner(self) -> np.ndarray:
        """(n,) track index of each element."""
        return np.repeat(np.arange(len(self.count)), self.count)

    def split(self, values: np.ndarray) -> list[np.ndarray]:
        """``values`` laid out like this one, cut back into one array per track."""
        return np.split(values, self.start[1:]) if len(self.count) else []


def segment_continuous(q: Segments, copy: bool = True) -> np.ndarray:
    """:func:`.rig_math.make_continuous` of every track: signs flipped within each track so
    consecutive quaternions share a hemisphere; each track's first quaternion kept.
    ``copy=False``: ``q.values`` itself when nothing flips (for callers that only read it)."""
    v = q.values
    if not len(v):
        return v.copy() if copy else v
    flips = np.zeros(len(v), dtype=np.int64)
    flips[1:] = quat_dot(v[1:], v[:-1]) < 0.0
    flips[q.start[q.count > 0]] = 0
    if not flips.any():  # already continuous (the usual case): every sign +1
        return v.copy() if copy else v
    total = np.cumsum(flips)
    within = total - total[q.start][q.owner()]
    sign = np.where(within % 2 == 1, -1.0, 1.0)
    return v * sign[:, None]


@dataclass(eq=False)
class Lookup:
    """Where each query falls among its track's keys (global indices into the key arrays)."""

    lo: np.ndarray  # (m,) key before (or at) the query
    hi: np.ndarray  # (m,) key after; == lo on single-key tracks
    single: np.ndarray  # (m,) bool: the track has one key


def lookup(keys: Segments, at: Segments) -> Lookup:
    """Per query, ``hi = clip(searchsorted(track times, t, 'right'), 1, k - 1)``, ``lo = hi - 1``
    (the per-track functions' indices); single-key tracks give their key for both."""
    local = np.empty(len(at.values), dtype=np.int64)
    for ks, kc, qs, qc in zip(keys.start, keys.count, at.start, at.count, strict=True):
        if qc:
            local[qs : qs + qc] = np.searchsorted(
                keys.values[ks : ks + kc], at.values[qs : qs + qc], side="right"
            )
    owner = at.owner()
    count = keys.count[owner]
    single = count == 1
    hi = np.clip(local, 1, np.maximum(count - 1, 1))
    base = keys.start[owner]
    lo = np.where(single, base, base + hi - 1)
    hi = np.where(single, base, base + hi)
    return Lookup(lo, hi, single)


def slerp_at(times: Segments, quats: Segments, at: Segments) -> np.ndarray:
    """:func:`.key_sampling._slerp_at` of every track: (m, 4) at the queries."""
    q = segment_continuous(quats, copy=False)  # only read
    found = lookup(times, at)
    lo, hi = found.lo, found.hi
    span = times.values[hi] - times.values[lo]
    span = np.where(found.single, 1.0, span)
    t = np.clip((at.values - times.values[lo]) / span, 0.0, 1.0)
    out = slerp(q[lo], q[hi], t)
    out[found.single] = q[lo[found.single]]
    return out


def lerp_at(times: Segments, values: Segments, at: Segments) -> np.ndarray:
    """``np.interp`` per track and component (its formula: the key's value at or outside the
    ends and on a key, else ``slope * (t - t_j) + y_j``); (m, c)."""
    tk, yk = times.values, values.values
    owner = at.owner()
    if np.all(times.count == 1):  # one key a track (a constant scale): that key everywhere
        return yk[times.start[owner]]
    found = lookup(times, at)
    x = at.values
    first = times.start[owner]
    last = first + times.count[owner] - 1
    j, hi = found.lo, found.hi  # np.interp's j: the key at or before x (if any before last)
    past = (x >= tk[last]) | found.single
    before = x < tk[first]
    out = yk[j]  # on a key
    mid = np.nonzero(~(past | before | (x == tk[j])))[0]
    if len(mid):
        jm, hm = j[mid], hi[mid]
        slope = (yk[hm] - yk[jm]) / (tk[hm] - tk[jm])[:, None]
        inner = slope * (x[mid] - tk[jm])[:, None] + yk[jm]
        bad = np.isnan(inner)
        if np.any(bad):
            other = slope * (x[mid] - tk[hm])[:, None] + yk[hm]
            inner = np.where(bad, other, inner)
        out[mid] = inner
    out[before] = yk[first[before]]
    out[past] = yk[last[past]]
    return out


def spline_at(times: Segments, values: Segments, at: Segments) -> tuple[np.ndarray, np.ndarray]:
    """:func:`.position_spline.evaluate` of every track: values and slopes, (m, 3) each."""
    tk, yk = times.values, values.values
    tangents = np.zeros_like(yk)
    inner = np.ones(len(tk), dtype=bool)
    inner[times.start] = False
    inner[times.start + times.count - 1] = False
    g = np.nonzero(inner)[0]
    tangents[g] = (yk[g + 1] - yk[g - 1]) / (tk[g + 1] - tk[g - 1])[:, None]
    found = lookup(times, at)
    lo, hi, single = found.lo, found.hi, found.single
    x = at.values
    h = np.where(single, 1.0, tk[hi] - tk[lo])[:, None]
    s = np.clip((x[:, None] - tk[lo][:, None]) / h, 0.0, 1.0)
    value, slope = hermite_segments(yk[lo], yk[hi], tangents[lo], tangents[hi], s, h)
    owner = at.owner()
    first = tk[times.start[owner]]
    last = tk[(times.start + times.count - 1)[owner]]
    slope[(x < first) | (x > last)] = 0.0
    value[single] = yk[lo[single]]
    slope[single] = 0.0
    return value, slope


def at_keys(
    sample: Callable[[Segments, Segments, Segments], np.ndarray],
    times: Segments,
    values: Segments,
    at: Segments,
) -> np.ndarray:
    """``sample(times, values, at)`` (:func:`slerp_at` or :func:`lerp_at`), where tracks queried
    exactly at their keys take what those give there without the lookup and arithmetic.

    A track's queries hold its keys' times (they are the union of its parts' times, maybe
    refined), so as many queries as keys means the keys themselves. There ``lerp_at`` gives
    the key values and ``slerp_at`` the sign-continuous keys over their norm (its weights
    are exactly 1 and 0 on a key; a one-key track its key as it is).
    """
    same = (at.count == times.count) & (at.count > 0)
    if not np.any(same):
        return sample(times, values, at)
    if sample is slerp_at:
        keyed = segment_continuous(values, copy=False)  # read only: a new array below
        norm = quat_norm(keyed)[:, None]
        if np.any(times.count == 1):
            alone = np.repeat(times.count == 1, times.count)
            keyed = np.where(alone[:, None], keyed, keyed / norm)
        else:
            keyed = keyed / norm
    elif sample is lerp_at:
        keyed = values.values
    else:
        return sample(times, values, at)
    if np.all(same) and np.array_equal(times.start, at.start):
        return keyed.copy() if keyed is values.values else keyed  # the keys row for row
    element = np.repeat(same, at.count)
    rows = np.repeat(times.start - at.start, at.count) + np.arange(len(at.values))
    out = np.empty((len(at.values), values.values.shape[1]))
    out[element] = keyed[rows[element]]
    other = np.flatnonzero(~same & (at.count > 0)).tolist()
    if other:
        part = sample(_subset(times, other), _subset(values, other), _subset(at, other))
        out[~element] = part
    return out


def _union(times: list[np.ndarray]) -> Segments:
    """Per track the sorted distinct values of the concatenated arrays in ``times``."""
    seg = Segments.of(times)
    owner = seg.owner()
    order = np.lexsort((seg.values, owner))
    v, o = seg.values[order], owner[order]
    keep = np.ones(len(v), dtype=bool)
    keep[1:] = (v[1:] != v[:-1]) | (o[1:] != o[:-1])
    v, o = v[keep], o[keep]
    count = np.bincount(o, minlength=len(times)).astype(np.int64)
    start = (np.cumsum(count) - count).astype(np.int64)
    return Segments(v, start, count)


def _part(parts: list[KeyParts], name: str, width: int) -> tuple[list[int], Segments, Segments]:
    """Tracks that key part ``name``, with their key times and values as segments."""
    have = [i for i, p in enumerate(parts) if getattr(p, name) is not None]
    keyed = [getattr(parts[i], name) for i in have]
    return have, Segments.of([k[0] for k in keyed]), Segments.of([k[1] for k in keyed], width)


def _queries(ticks: Segments, tracks: list[int]) -> tuple[Segments, np.ndarray]:
    """The sample times of ``tracks`` as segments, and their positions in ``ticks``."""
    if not tracks:
        return Segments.of([]), np.zeros(0, dtype=np.int64)
    index = np.asarray(tracks, dtype=np.int64)
    if len(index) == len(ticks.count) and np.array_equal(index, np.arange(len(index))):
        return ticks, np.arange(len(ticks.values))  # every track: the ticks as they are
    count = ticks.count[index]
    start = (np.cumsum(count) - count).astype(np.int64)
    rows = np.repeat(ticks.start[index] - start, count) + np.arange(int(count.sum()))
    return Segments(ticks.values[rows], start, count), rows


@dataclass(eq=False)
class RotationSamples:
    """Rotations the refinement already sampled at a track's final ticks (reused)."""

    tracks: np.ndarray  # (tracks,) bool: the track's rotations are all here
    rows: np.ndarray  # (m,) rows of the ticks' values
    values: np.ndarray  # (m, 4)


def refine_all(parts: list[KeyParts], max_step: float) -> tuple[Segments, RotationSamples | None]:
    """:func:`.key_sampling.refine_times` (``max_step > 0``) or ``KeyParts.times`` (else) of
    every track, as segments; with the rotations sampled on the way, where they stand."""
    ticks = _track_times(parts)
    if max_step <= 0:
        return ticks, None
    rot_tracks, rot_t, rot_q = _part(parts, "rot", 4)
    use = [n for n, i in enumerate(rot_tracks) if rot_t.count[n] >= 2 and ticks.count[i] >= 2]
    if not use:
        return ticks, None
    tracks = [rot_tracks[n] for n in use]
    sel, selq = _subset(rot_t, use), _subset(rot_q, use)
    at, rows = _queries(ticks, tracks)
    q = at_keys(slerp_at, sel, selq, at)
    # pairs (row, row + 1) inside one track
    pair = np.ones(len(rows), dtype=bool)
    pair[at.start + at.count - 1] = False
    left = np.nonzero(pair)[0]
    angle = quat_angle(q[:-1], q[1:])[left]  # every neighbour pair (no gathers), then a track's
    steps = np.ceil(angle / max_step - 1e-6).astype(np.int64)
    done = np.zeros(len(parts), dtype=bool)
    done[tracks] = True
    if np.all(steps <= 1):
        return ticks, RotationSamples(done, rows, q)
    # linspace(t0, t1, n + 1)[1:-1] after each tick that starts a wide span, computed for
    # those spans only (a few dozen of 100,000 ticks on the characters) and inserted
    wide = steps > 1
    after = rows[left[wide]]  # ticks followed by extra ones (never a track's last)
    more = steps[wide] - 1  # how many after each
    t0 = ticks.values
    n = more + 1
    first = t0[after]
    delta = t0[after + 1] - first
    step = delta / n
    which = np.repeat(np.arange(len(after)), more)
    kk = (np.arange(len(which)) - np.repeat(np.cumsum(more) - more, more) + 1).astype(np.float64)
    inserted = (
        np.where(step[which] == 0.0, kk / n[which] * delta[which], kk * step[which]) + first[which]
    )
    value = np.insert(t0, np.repeat(after + 1, more), inserted)
    owners = ticks.owner()
    reps = np.ones(len(t0), dtype=np.int64)
    reps[after] += more
    owner = np.repeat(owners, reps)
    ok = np.all((value[1:] > value[:-1]) | (owner[1:] != owner[:-1]))
    count = np.bincount(owner, minlength=len(parts)).astype(np.int64)
    if not ok:  # rounding met a neighbour: sort and drop repeats as np.unique does
        return _union(np.split(value, np.cumsum(count)[:-1])), None
    start = (np.cumsum(count) - count).astype(np.int64)
    done[owners[after]] = False  # refined tracks sample their new ticks
    keep = done[owners[rows]]
    moved = (np.cumsum(reps) - reps)[rows[keep]]  # where the old ticks went
    return Segments(value, start, count), RotationSamples(done, moved, q[keep])


def _track_times(parts: list[KeyParts]) -> Segments:
    """``KeyParts.times`` of every track as segments. A track whose first part's times hold
    the other parts' (matrix keys, parts keyed together, one scale key at a position key)
    has them as they are (split_keys left them sorted and distinct); the others get their
    union, all at once."""
    arrays: list[np.ndarray] = []
    keyed_of: list[list[np.ndarray]] = []
    same: list[tuple[int, np.ndarray, np.ndarray]] = []  # (track, first times, as long)
    check: list[tuple[int, np.ndarray, np.ndarray]] = []
    for i, p in enumerate(parts):
        keyed = [k[0] for k in (p.pos, p.rot, p.scale) if k is not None]
        one = keyed[0] if keyed else np.zeros(0)
        arrays.append(one)
        keyed_of.append(keyed)
        for k in keyed[1:]:
            if k is one:
                continue
            if len(k) == len(one):
                same.append((i, one, k))
            elif len(k) == 1 and (k[0] == one[0] or k[0] == one[-1]):
                continue  # one key at an end of the first part's (a constant scale)
            else:
                check.append((i, one, k))
    if same:  # parts keyed at equal times (the usual case): compared all at once
        equal = np.concatenate([s[1] for s in same]) == np.concatenate([s[2] for s in same])
        if not equal.all():
            lengths = np.array([len(s[1]) for s in same], dtype=np.int64)
            pair = np.repeat(np.arange(len(same)), lengths)
            check.extend(same[n] for n in np.unique(pair[~equal]).tolist())
    merge: dict[int, np.ndarray] = {}
    for i, one, k in check:
        if i not in merge and not _holds(one, k):
            merge[i] = np.concatenate(keyed_of[i])
    merge = dict(sorted(merge.items()))
    if merge:
        union = _union(list(merge.values()))
        for i, t in zip(merge, union.split(union.values), strict=True):
            arrays[i] = t
    return Segments.of(arrays)


def _holds(sorted_distinct: np.ndarray, values: np.ndarray) -> bool:
    """Every one of ``values`` is in ``sorted_distinct`` (so the union is that array itself)."""
    at = np.searchsorted(sorted_distinct, values)
    if len(at) and at.max() >= len(sorted_distinct):
        return False
    return bool(np.all(sorted_distinct[at] == values))


def sample_all(
    parts: list[KeyParts],
    rest_locals: np.ndarray,
    ticks: Segments,
    splines: list[bool],
    rotations: RotationSamples | None = None,
) -> list[LocalSamples]:
    """:func:`.key_sampling.sample_parts` of every track at its ``ticks``; ``rest_locals``
    (tracks, 4, 4) file local matrices for the parts a track does not key; ``rotations``
    from :func:`refine_all` (those tracks' rotations are not sampled again)."""
    total = len(ticks.values)
    owner = ticks.owner()
    rest = np.asarray(rest_locals, dtype=np.float64).reshape(-1, 4, 4)
    if len(rest):
        pos0, rot0, scale0 = row_decompose(rest)
    else:
        pos0, rot0, scale0 = np.zeros((0, 3)), np.zeros((0, 4)), np.zeros((0, 3))
    slope = np.zeros((total, 3)) if any(splines) else np.zeros((0, 3))
    splined = np.zeros(len(parts), dtype=bool)
    samples: dict[str, np.ndarray] = {}
    for name, width, rest_part in (("pos", 3, pos0), ("rot", 4, rot0), ("scale", 3, scale0)):
        have, key_t, key_v = _part(parts, name, width)
        if len(have) == len(parts):  # every row is written below
            out = np.empty((total, width))
        else:  # parts a track does not key keep the rest's
            out = rest_part[owner]
        samples[name] = out
        if name == "rot" and rotations is not None:
            out[rotations.rows] = rotations.values
            left = [n for n, i in enumerate(have) if not rotations.tracks[i]]
            if len(left) < len(have):
                have, key_t, key_v = (
                    [have[n] for n in left],
                    _subset(key_t, left),
                    _subset(key_v, left),
                )
        if not have:
            continue
        is_spline = np.array([name == "pos" and splines[i] for i in have], dtype=bool)
        for mode in (False, True) if name == "pos" else (False,):
            pick = [n for n in range(len(have)) if is_spline[n] == mode]
            if not pick:
                continue
            tracks = [have[n] for n in pick]
            kt = key_t if len(pick) == len(have) else _subset(key_t, pick)
            kv = key_v if len(pick) == len(have) else _subset(key_v, pick)
            at, rows = _queries(ticks, tracks)
            if name == "rot":
                got = slerp_at(kt, kv, at)
            elif mode:
                got, slope[rows] = spline_at(kt, kv, at)
                splined[tracks] = True
            else:
                got = at_keys(lerp_at, kt, kv, at)
            if at is ticks:  # every track: the samples are the whole part
                samples[name] = got
            else:
                out[rows] = got
    pos, rot, scale = samples["pos"], samples["rot"], samples["scale"]
    result = []
    for i, (s, c) in enumerate(zip(ticks.start, ticks.count, strict=True)):
        part = slice(int(s), int(s + c))
        result.append(
            LocalSamples(pos[part], rot[part], scale[part], slope[part] if splined[i] else None)
        )
    return result


def _subset(seg: Segments, pick: list[int]) -> Segments:
    if pick == list(range(len(seg.count))):
        return seg  # every track, in order: the same segments
    pieces = seg.split(seg.values)
    width = None if seg.values.ndim == 1 else seg.values.shape[1]
    return Segments.of([pieces[n] for n in pick], width)
