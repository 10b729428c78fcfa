"""Which points lie in which axis-aligned boxes: a uniform grid in numpy, no Python loop.

Every box lists the cells it overlaps (sorted by cell once, ``BoxGrid``); a query point
looks up the boxes of its cell, and an exact point-in-box test drops the pairs a cell corner
let in. A point sits in one cell, and a box lists a cell once, so no pair repeats. The grid
has at most ``max_cells`` cells and about ``ENTRIES_PER_BOX`` entries a box: a finer request
is coarsened, so memory stays bounded whatever the input's scale.
"""

from __future__ import annotations

import numpy as np

MAX_CELLS = 1 << 20
CELL_PER_BOX = 1.0  # default spacing, in median box extents
ENTRIES_PER_BOX = 27  # the cell size is raised until boxes list at most this many on average
STENCIL = 4  # boxes spanning at most this many cells per axis list them by a fixed stencil


class BoxGrid:
    """Boxes ``lo``/``hi`` ``(B, 3)`` listed in the cells of a uniform grid, for queries of
    which boxes contain given points (``query``). Build once per set of boxes (a collider's
    pose): each query then costs in proportion to its points and their cells' boxes.

    ``cell`` is the spacing (default: ``CELL_PER_BOX`` median box extents). Everything runs
    one coordinate at a time: numpy's reductions over a short inner axis and integer matrix
    products are the slow kind.
    """

    def __init__(
        self,
        lo: np.ndarray,
        hi: np.ndarray,
        cell: float | None = None,
        max_cells: int = MAX_CELLS,
        entries_per_box: float = ENTRIES_PER_BOX,
    ) -> None:
        self.lo = [np.ascontiguousarray(lo[:, k], dtype=np.float64) for k in range(3)]
        self.hi = [np.ascontiguousarray(hi[:, k], dtype=np.float64) for k in range(3)]
        self.count = len(lo)
        self.named = self.count  # the ids a query names are below this
        if not self.count:
            return
        self.origin = np.array([x.min() for x in self.lo])
        top = np.array([x.max() for x in self.hi])
        if not (np.isfinite(self.origin).all() and np.isfinite(top).all()):
            raise ValueError("boxes must be finite")
        extent = top - self.origin
        box_extent = np.maximum(
            np.maximum(self.hi[0] - self.lo[0], self.hi[1] - self.lo[1]), self.hi[2] - self.lo[2]
        )
        self.size = _cell_size(cell, box_extent, extent, max_cells, entries_per_box)
        self.dims = np.floor(extent / self.size).astype(np.int64) + 1
        self.stride = (1, int(self.dims[0]), int(self.dims[0] * self.dims[1]))
        cells = int(np.prod(self.dims))
        c_lo = [self._axis(self.lo[k], k) for k in range(3)]
        span = [self._axis(self.hi[k], k) - c_lo[k] + 1 for k in range(3)]
        entry_box, entry_cell = _entries(c_lo, span, self.stride)
        order = cell_order(entry_cell)
        self.boxes = entry_box[order]
        self.counts = np.bincount(entry_cell, minlength=cells)
        self.starts = np.cumsum(self.counts) - self.counts

    def _axis(self, coord: np.ndarray, k: int) -> np.ndarray:
        ijk = np.floor((coord - self.origin[k]) / self.size).astype(np.int64)
        np.clip(ijk, 0, self.dims[k] - 1, out=ijk)
        return ijk

    def _cells(self, p: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """The ids of the points inside the grid and their cells (``p``: float64 columns)."""
        inside_grid = np.ones(len(p[0]), dtype=bool)
        cell = np.zeros(len(p[0]), dtype=np.int64)
        for k in range(3):
            ijk = np.floor((p[k] - self.origin[k]) / self.size)
            inside_grid &= (ijk >= 0) & (ijk < self.dims[k])
            cell += np.clip(ijk, 0, self.dims[k] - 1).astype(np.int64) * self.stride[k]
        ids = np.flatnonzero(inside_grid)
        return ids, cell[ids]

    def query(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(point ids, box ids)`` (int64) of every point of ``points`` (``(N, 3)`` or wider
        rows, the first three columns read) inside every box, bounds included."""
        empty = np.zeros(0, dtype=np.int64)
        if not self.count or not len(points):
            return empty, empty
        p = [np.ascontiguousarray(points[:, k], dtype=np.float64) for k in range(3)]
        ids, cell = self._cells(p)
        n_in = self.counts[cell]
        total = int(n_in.sum())
        if not total:
            return empty, empty
        pair_point = np.repeat(ids, n_in)
        first = np.repeat(self.starts[cell] - (np.cumsum(n_in) - n_in), n_in)
        pair_box = self.boxes[first + np.arange(total)]
        keep = np.ones(total, dtype=bool)
        for k in range(3):
            coord = np.repeat(p[k][ids], n_in)  # a repeat costs less than a gather
            keep &= coord >= np.take(self.lo[k], pair_box)
            keep &= coord <= np.take(self.hi[k], pair_box)
        return pair_point[keep], pair_box[keep]


def cell_order(cells: np.ndarray) -> np.ndarray:
    """``np.argsort(cells, kind="stable")`` for cell ids below ``2 ** 32``, as two stable
    passes over 16-bit halves (numpy sorts 16-bit keys by counting: ~3x faster than a
    stable sort of 64-bit keys, which a grid's million entries pay every build); one pass
    for fewer than ``2 ** 16`` cells."""
    top = int(cells.max()) if cells.size else 0
    if top >= 1 << 32:
        return np.argsort(cells, kind="stable")
    low = np.argsort((cells & 0xFFFF).astype(np.uint16), kind="stable")
    if top < 1 << 16:  # one pass: the high halves are all zero
        return low
    high = (cells[low] >> 16).astype(np.uint16)
    return low[np.argsort(high, kind="stable")]


def box_pairs(
    points: np.ndarray, lo: np.ndarray, hi: np.ndarray, cell: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(point ids, box ids)`` of every point inside every box: ``BoxGrid(lo, hi).query``."""
    return BoxGrid(lo, hi, cell).query(points)


def _entries(
    c_lo: list[np.ndarray], span: list[np.ndarray], stride: tuple[int, int, int]
) -> tuple[np.ndarray, np.ndarray]:
    """Every (box, cell) a box overlaps: ``(entry box ids, entry cell ids)``.

    Boxes spanning at most ``STENCIL`` cells per axis (nearly all, at the default spacing)
    take a fixed stencil of cell offsets, each offset masked by their spans (a pass per
    offset, no integer division); the others are enumerated one by one.
    """
    small = (span[0] <= STENCIL) & (span[1] <= STENCIL) & (span[2] <= STENCIL)
    ids = np.flatnonzero(small)
    base = c_lo[0][ids] * stride[0] + c_lo[1][ids] * stride[1] + c_lo[2][ids] * stride[2]
    size = [span[k][ids] for k in range(3)]
    widest = [int(x.max(initial=0)) for x in size]
    parts_box, parts_cell = [], []
    for i in range(widest[0]):
        along_i = np.flatnonzero(size[0] > i)
        for j in range(widest[1]):
            along_j = along_i[size[1][along_i] > j]
            for k in range(widest[2]):
                here = along_j[size[2][along_j] > k]
                parts_box.append(ids[here])
                parts_cell.append(base[here] + (i * stride[0] + j * stride[1] + k * stride[2]))
    big = np.flatnonzero(~small)
    if big.size:
        sx, sy, sz = (span[k][big] for k in range(3))
        per_box = sx * sy * sz
        entry = np.repeat(np.arange(big.size), per_box)
        local = np.arange(entry.size) - np.repeat(np.cumsum(per_box) - per_box, per_box)
        ex, ey = sx[entry], sy[entry]
        cells = (c_lo[0][big][entry] + local % ex) * stride[0]
        cells += (c_lo[1][big][entry] + (local // ex) % ey) * stride[1]
        cells += (c_lo[2][big][entry] + local // (ex * ey)) * stride[2]
        parts_box.append(big[entry])
        parts_cell.append(cells)
    empty = np.zeros(0, dtype=np.int64)
    return np.concatenate([empty, *parts_box]), np.concatenate([empty, *parts_cell])


def _cell_size(
    cell: float | None,
    box_extent: np.ndarray,
    extent: np.ndarray,
    max_cells: int,
    entries_per_box: float = ENTRIES_PER_BOX,
) -> float:
    """The requested spacing (default: ``CELL_PER_BOX`` times the median of ``box_extent``,
    each box's largest side), raised until the grid has at most ``max_cells`` cells and the
    boxes list at most about ``entries_per_box`` cells each on average (one huge box among
    small ones cannot make the entry list explode)."""
    typical = float(np.median(box_extent)) * CELL_PER_BOX
    size = float(cell) if cell is not None and cell > 0 else typical
    size = max(size, float(extent.max(initial=0.0)) * 1e-6, 1e-9)
    budget = entries_per_box * len(box_extent)
    while True:
        cells = np.floor(extent / size) + 1
        spans = np.minimum(np.floor(box_extent / size) + 2, cells.max())  # may straddle cells
        if np.prod(cells) <= max_cells and (spans**3).sum() <= budget:
            return size
        size *= 1.5
