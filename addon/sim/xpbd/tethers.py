"""Tethers: each free point may not get farther from its nearest pins than it is at rest.

Long chains of springs solved once per substep stretch near the pins (the pins carry the
whole weight); a tether per point is a one-sided limit that removes that stretch at the cost
of one cheap pass. The limit is the straight rest distance to each of the ``k`` nearest pins
*of the same piece of cloth* (pieces are the connected components of the spring graph), all
computed with numpy in a fraction of a second even for 40k points and many pins.

The straight distance is never longer than the distance along the cloth, so a rest shape
that is folded or curled back on itself cannot open beyond its rest distances to the pins;
such cloth should run without tethers (``SimSettings.tethers = False``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..mesh.neighbours import components
from ..mesh.rows import squared_lengths
from .constraint_pass import TINY_LENGTH_SQUARED

HALF = np.float32(0.5)
CHUNK_ELEMENTS = 1 << 16  # distance-matrix entries computed at a time (512 kB of float64)


@dataclass
class Tethers:
    """Per slot ``s < k``: ``points[s]`` are tethered to ``pins[s]`` within ``lengths[s]``."""

    points: list[np.ndarray]
    pins: list[np.ndarray]
    lengths: list[np.ndarray]

    @property
    def count(self) -> int:
        return sum(p.size for p in self.points)


def _nearest_pins(
    rest: np.ndarray, points: np.ndarray, pin_ids: np.ndarray, label: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """Up to ``k`` nearest same-piece pins per point: ids ``(M, k)`` (-1 = none), distances."""
    m, p = points.size, pin_ids.size
    ids = np.full((m, k), -1, dtype=np.int64)
    dist = np.full((m, k), np.inf, dtype=np.float64)
    pin_pos = rest[pin_ids]
    pin_label = label[pin_ids]
    rows = max(1, CHUNK_ELEMENTS // max(p, 1))
    columns = [np.ascontiguousarray(rest[:, axis]) for axis in range(3)]
    take = min(k, p)
    for start in range(0, m, rows):
        chunk = points[start : start + rows]
        d2 = np.zeros((chunk.size, p), dtype=np.float64)
        for axis in range(3):
            diff = columns[axis][chunk][:, None] - pin_pos[None, :, axis]
            d2 += diff * diff
        d2[label[chunk][:, None] != pin_label[None, :]] = np.inf
        if take < p:
            best = np.argpartition(d2, take - 1, axis=1)[:, :take]
        else:
            best = np.broadcast_to(np.arange(p), (chunk.size, p))
        if take == p == 2:  # two pins: the stable sort of each row is one comparison
            best, best_d2 = _sorted_pairs(d2)
        else:
            best_d2 = np.take_along_axis(d2, best, axis=1)
            order = np.argsort(best_d2, axis=1, kind="stable")
            best = np.take_along_axis(best, order, axis=1)
            best_d2 = np.take_along_axis(best_d2, order, axis=1)
        found = np.isfinite(best_d2)
        ids[start : start + chunk.size, :take] = np.where(found, pin_ids[best], -1)
        dist[start : start + chunk.size, :take] = np.sqrt(best_d2)
    return ids, dist


def _sorted_pairs(d2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``(M, 2)`` ``d2``: the column order of a stable ascending sort (NaN last,
    as ``np.argsort`` puts it) and the sorted values."""
    first, second = d2[:, 0], d2[:, 1]
    swap = second < first
    swap |= np.isnan(first) & ~np.isnan(second)
    order = np.zeros(d2.shape, dtype=np.intp)
    order[:, 0] = swap
    order[:, 1] = ~swap
    values = np.empty_like(d2)
    values[:, 0] = np.where(swap, second, first)
    values[:, 1] = np.where(swap, first, second)
    return order, values


def build_tethers(
    rest: np.ndarray,
    pinned: np.ndarray,
    springs: np.ndarray,
    lengths: np.ndarray | None = None,
    k: int = 2,
) -> Tethers:
    """Tethers from every free point to its ``k`` nearest pins on the same piece of cloth.

    ``lengths`` is accepted for compatibility and unused: limits are straight rest distances.
    """
    del lengths
    rest = np.asarray(rest, dtype=np.float64).reshape(-1, 3)
    n = rest.shape[0]
    pin_ids = np.flatnonzero(pinned)
    empty = Tethers([], [], [])
    if not pin_ids.size or pin_ids.size == n or not np.asarray(springs).size or k < 1:
        return empty
    label = components(springs, n)
    has_pin = np.zeros(n, dtype=bool)
    has_pin[label[pin_ids]] = True
    points = np.flatnonzero(~np.asarray(pinned, dtype=bool) & has_pin[label])
    ids, dist = _nearest_pins(rest, points, pin_ids, label, k)
    out = Tethers([], [], [])
    for slot in range(k):
        keep = ids[:, slot] >= 0
        if keep.any():
            out.points.append(points[keep])
            out.pins.append(ids[keep, slot])
            out.lengths.append(dist[keep, slot].astype(np.float32))
    return out


class TetherSlot:
    """One tether per point of ``points`` (no point twice), with the work arrays that solve
    them in place (see ``work_state.PassPlan``, which keeps these points contiguous)."""

    def __init__(self, points: np.ndarray, pins: np.ndarray, limits: np.ndarray) -> None:
        self.points = np.ascontiguousarray(points, dtype=np.intp)  # (T,) tethered point ids
        self.pins = np.ascontiguousarray(pins, dtype=np.intp)  # (T,) their pins
        self.limits = np.ascontiguousarray(limits, dtype=np.float32)
        self._half_limits = self.limits * HALF  # max(f, 0) as h + |h|, h = f / 2: see project
        count = self.points.size
        self.anchors = np.empty(count, dtype=np.complex128)
        self.delta = np.empty((count, 4), dtype=np.float32)
        self.square = np.empty((count, 4), dtype=np.float32)
        self.length = np.empty(count, dtype=np.float32)
        self.factor = np.empty(count, dtype=np.float32)

    def project(self, points: np.ndarray, anchors: np.ndarray) -> None:
        """Pull each of ``points`` (complex128 ``(T,)``, in place) back onto the sphere of
        its limit around its anchor when it is outside: ``p -= (p - q) * max(1 - limit /
        |p - q|, 0)``. Points within their limit get an exact zero correction. The max is
        ``h + |h|`` with ``h = 1/2 - (limit/2) / |p - q|``: halving is exact in binary floats,
        so it is the same value bit for bit, and cheaper than numpy's NaN-aware ``maximum``."""
        p = points.view(np.float32).reshape(-1, 4)
        q = anchors.view(np.float32).reshape(-1, 4)
        delta = np.subtract(p, q, out=self.delta)
        length = squared_lengths(delta, self.length, self.square)
        length += TINY_LENGTH_SQUARED
        np.sqrt(length, out=length)
        factor = np.divide(self._half_limits, length, out=self.factor)
        np.subtract(HALF, factor, out=factor)
        factor += np.abs(factor, out=length)
        for axis in range(3):
            column = delta[:, axis]
            column *= factor
        p -= delta


def share_work(slots: list[TetherSlot]) -> list[TetherSlot]:
    """Let ``slots`` (solved one after the other) use views of one set of work arrays."""
    largest = max(slots, key=lambda t: t.points.size, default=None)
    if largest is None:
        return slots
    for slot in slots:
        count = slot.points.size
        slot.anchors = largest.anchors[:count]
        slot.delta = largest.delta[:count]
        slot.square = largest.square[:count]
        slot.length = largest.length[:count]
        slot.factor = largest.factor[:count]
    return slots
