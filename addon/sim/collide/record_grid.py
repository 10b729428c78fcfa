"""A ``BoxGrid`` whose cell entries carry their boxes' bounds (mesh colliders' queries).

``BoxGrid.query`` fetches each raw (point, box) pair's box id, then its six float64 bounds
by box id: seven scattered gathers a pair. Here the bounds are also stored per entry, in
cell order, as float32 (rounded outward), so a point's raw pairs are one run of entries
and each bound is read along it; the test is float32. With float32 points the pairs are
those of the float64 test, plus at most pairs on a box's face within float32 rounding of a
float64 bound (the callers' distance tests drop them).

A long, thin triangle's box is as long as the triangle: ``triangle_pieces`` cuts it in boxes
of pieces that name their triangle (``owner``), and the query names each triangle once.
"""

from __future__ import annotations

import numpy as np

from .broad_phase import ENTRIES_PER_BOX, BoxGrid
from .scan_count import SCANS
from .surface_pose import gather

MAX_PIECES = 64  # a triangle is cut in at most this many pieces (``triangle_pieces``)


class RecordGrid(BoxGrid):
    """``BoxGrid`` with the same ``query`` contract (pairs sorted by point, distinct).

    ``owner`` ``(B,)``: the object each box belongs to (a triangle, split into pieces by
    ``triangle_pieces``); a query then names owners, each once for a point."""

    def __init__(
        self,
        lo: np.ndarray,
        hi: np.ndarray,
        cell: float | None = None,
        owner: np.ndarray | None = None,
        entries_per_box: float = ENTRIES_PER_BOX,
    ) -> None:
        super().__init__(lo, hi, cell=cell, entries_per_box=entries_per_box)
        self.owner = owner
        if owner is not None:
            self.named = int(owner.max(initial=-1)) + 1
        if not self.count:
            return
        box = self.boxes
        # per axis, in cell order: lo x, y, z, hi x, y, z
        self.bounds = []
        for k in range(3):
            low = self.lo[k].astype(np.float32)
            # outward: a float32 bound never excludes what the float64 one includes
            low = np.where(low > self.lo[k], np.nextafter(low, np.float32(-np.inf)), low)
            self.bounds.append(np.ascontiguousarray(low[box]))
        for k in range(3):
            high = self.hi[k].astype(np.float32)
            high = np.where(high < self.hi[k], np.nextafter(high, np.float32(np.inf)), high)
            self.bounds.append(np.ascontiguousarray(high[box]))

    def query(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(point ids, box ids)`` (int64) of every point inside every box; the points
        are read as float32 (the mesh collider's are: the test is then exact)."""
        empty = np.zeros(0, dtype=np.int64)
        if not self.count or not len(points):
            return empty, empty
        p = [np.ascontiguousarray(points[:, k], dtype=np.float32) for k in range(3)]
        ids, cell = self._cells([c.astype(np.float64) for c in p])
        n_in = self.counts[cell]
        total = int(n_in.sum())
        if not total:
            return empty, empty
        ends = np.cumsum(n_in)
        entry = np.repeat(self.starts[cell] - (ends - n_in), n_in)
        entry += np.arange(total)  # a point's raw pairs: one run of cell entries
        keep = np.ones(total, dtype=bool)
        for k in range(3):
            coord = np.repeat(p[k][ids], n_in)
            keep &= np.take(self.bounds[k], entry) <= coord
            keep &= coord <= np.take(self.bounds[3 + k], entry)
        chosen = np.flatnonzero(keep)
        SCANS.mesh_scanned += total
        SCANS.mesh_in_box += int(chosen.size)
        point = ids[np.searchsorted(ends, chosen, side="right")]
        box = self.boxes[entry[chosen]]
        if self.owner is None:
            return point, box
        # a point in two pieces of one triangle: the pair once (sorted by point, owner)
        owners = self.named
        keys = np.unique(point * np.int64(owners) + self.owner[box])
        return keys // owners, keys % owners


def triangle_pieces(
    start: np.ndarray, end: np.ndarray, triangles: np.ndarray, length: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Boxes of the triangles moving linearly from vertices ``start`` to ``end`` (``(V, 3)``),
    a long triangle cut in pieces about ``length`` long: ``(owner triangle ids (P,), lo
    (P, 3), hi (P, 3))``, sorted by triangle.

    A long, thin triangle (a limb's cylinder) has a box as long as the limb: in a grid it
    lists many cells, and every point in them is tested against it. Cut in bands parallel
    to its shortest edge (``n`` of them, ``n = ceil(longest edge / length)``), each band's
    box is about ``length`` by the shortest edge. A band of fixed barycentric bounds moves
    linearly with the corners, so the box of its four corners at ``start`` and at ``end``
    holds it all the way between (a convex combination of points in a box stays there).
    """
    tri = np.asarray(triangles, dtype=np.int64)
    count = len(tri)
    # rows gathered as one item each (a 2-D fancy index walks them element by element)
    start, end = np.ascontiguousarray(start), np.ascontiguousarray(end)
    x = [gather(start, tri[:, k]) for k in range(3)]
    # the length of the edge opposite each corner, and the corner opposite the shortest
    edges = np.stack([_lengths(x[1] - x[2]), _lengths(x[2] - x[0]), _lengths(x[0] - x[1])])
    apex = np.argmin(edges, axis=0)
    longest = edges.max(axis=0, initial=0.0)
    pieces = np.ones(count, dtype=np.int64)
    if length > 0.0:
        pieces = np.clip(np.ceil(longest / length), 1, MAX_PIECES).astype(np.int64)
    rows = np.arange(count)
    # corners (p, q, r) with r the apex: bands run from the edge pq (s = 0) to r (s = 1)
    p, q, r = (tri[rows, (apex + k) % 3] for k in (1, 2, 3))
    owner = np.repeat(rows, pieces)
    local = np.arange(owner.size) - np.repeat(np.cumsum(pieces) - pieces, pieces)
    n = pieces[owner].astype(np.float64)
    s0, s1 = (local / n)[:, None], ((local + 1) / n)[:, None]
    lo = np.full((owner.size, 3), np.inf)
    hi = np.full((owner.size, 3), -np.inf)
    for pose in (start, end):
        a, b, c = (gather(pose, corner[owner]) for corner in (p, q, r))
        for s in (s0, s1):
            for corner in (a + (c - a) * s, b + (c - b) * s):
                np.minimum(lo, corner, out=lo)
                np.maximum(hi, corner, out=hi)
    return owner, lo, hi


def _lengths(rows: np.ndarray) -> np.ndarray:
    return np.sqrt(rows[:, 0] * rows[:, 0] + rows[:, 1] * rows[:, 1] + rows[:, 2] * rows[:, 2])
