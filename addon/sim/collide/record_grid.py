"""A ``BoxGrid`` whose cell entries carry their boxes' bounds (mesh colliders' queries).

``BoxGrid.query`` fetches each raw (point, box) pair's box id, then its six float64 bounds
by box id: seven scattered gathers a pair. Here the bounds are also stored per entry, in
cell order, as float32 (rounded outward), so a point's raw pairs are one run of entries
and each bound is read along it; the test is float32. With float32 points the pairs are
those of the float64 test, plus at most pairs on a box's face within float32 rounding of a
float64 bound (the callers' distance tests drop them).
"""

from __future__ import annotations

import numpy as np

from .broad_phase import BoxGrid


class RecordGrid(BoxGrid):
    """``BoxGrid`` with the same ``query`` contract (pairs sorted by point, distinct)."""

    def __init__(self, lo: np.ndarray, hi: np.ndarray, cell: float | None = None) -> None:
        super().__init__(lo, hi, cell=cell)
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
        owner = np.searchsorted(ends, chosen, side="right")
        return ids[owner], self.boxes[entry[chosen]]
