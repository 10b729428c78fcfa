"""The mesh collider's grid: the boxes of a surface's triangles near the cloth, for a window.

Only the triangles whose boxes, grown by the reach and the drift limit (``grow``), meet the
cloth's box grown by ``REGION`` grows are listed: a query whose points leave that region
builds again. Long triangles go in pieces (``record_grid.triangle_pieces``), so a limb's
slivers do not fill the cells, and the cells are sized from the pieces' boxes.
"""

from __future__ import annotations

import numpy as np

from .record_grid import RecordGrid, triangle_pieces

# the grid's spacing, in median grown-box sides: finer cells let fewer boxes past a cell to
# the exact box test (a point's cell holds the boxes of a patch of cell + box side)
GRID_CELL = 0.35
# cell entries a piece's box may list on average: cells smaller than a box let fewer boxes
# past a cell to the exact box test (at 64 a frame of the walking body's cape scans 1.8M
# entries, not 5.8M at 27, for a build of 1.5M entries)
ENTRIES = 64.0
# ... but a grid is built every window and asked about by about the cloth's points: with
# fewer than a quarter as many points as the surface's triangles it lists fewer entries a
# box, down to a quarter of ENTRIES (the demo's 513-point cape on 4,661 pieces listed 92k
# entries a frame to scan 8k: its grid took 7.6 ms a frame, 3.3 at 28 entries, the scans as
# before; counted on all the triangles, not the listed ones, which a small cloth makes few)
FEW_POINTS = 0.25
# long triangles' boxes are cut in pieces about this long, in grows (reach + limit): a
# piece's box is then its grown size about alike in every direction
PIECE = 2.0
# the grid lists the triangles near the cloth: within this many grows (reach + limit) of
# the box of its points when built; a query beyond it builds again (the demo's cape lists
# 1,605 of its body's 4,662 pieces, 2,246 at 3 grows, and never builds twice a frame; at 0.5
# it built 47 grids in 41 frames)
REGION = 1.5


def build(
    box_lo: np.ndarray,
    box_hi: np.ndarray,
    window_poses: tuple[np.ndarray, np.ndarray],
    triangles: np.ndarray,
    here: np.ndarray,
    start: np.ndarray | None,
    grow: float,
    point_count: int,
) -> tuple[RecordGrid, np.ndarray]:
    """The grid of the triangles (boxes ``box_lo``/``box_hi`` ``(T, 3)`` over the window,
    corners at the window's two poses) near the points' paths from ``start`` to ``here``,
    and the region ``(2, 3)`` it holds them for."""
    region = _region(here, start, REGION * grow)
    kept = np.flatnonzero(
        (box_hi[:, 0] + grow >= region[0, 0])
        & (box_lo[:, 0] - grow <= region[1, 0])
        & (box_hi[:, 1] + grow >= region[0, 1])
        & (box_lo[:, 1] - grow <= region[1, 1])
        & (box_hi[:, 2] + grow >= region[0, 2])
        & (box_lo[:, 2] - grow <= region[1, 2])
    )
    owner, lo, hi = triangle_pieces(*window_poses, triangles[kept], PIECE * grow)
    owner = kept[owner]
    lo -= grow
    hi += grow
    cell = GRID_CELL * float(np.median((hi - lo).max(axis=1))) if len(lo) else None
    share = min(max(point_count / (FEW_POINTS * max(len(triangles), 1)), 0.25), 1.0)
    grid = RecordGrid(lo, hi, cell=cell, owner=owner, entries_per_box=ENTRIES * share)
    return grid, region


def holds(
    region: np.ndarray, here: np.ndarray, start: np.ndarray | None, chosen: np.ndarray, grow: float
) -> bool:
    """Whether a grid built for ``region`` serves the ``chosen`` points' paths (a slop of a
    hundredth of the region's margin: float32 samples of a path may round past its ends)."""
    return _within(region, here, start, chosen, 0.01 * REGION * grow)


def _region(here: np.ndarray, start: np.ndarray | None, margin: float) -> np.ndarray:
    """The box ``(2, 3)`` (lo, hi) of points ``here`` and ``start`` grown by ``margin``."""
    lo, hi = here.min(axis=0, initial=np.inf), here.max(axis=0, initial=-np.inf)
    if start is not None:
        lo = np.minimum(lo, start.min(axis=0, initial=np.inf))
        hi = np.maximum(hi, start.max(axis=0, initial=-np.inf))
    return np.array([lo - margin, hi + margin])


def _within(
    region: np.ndarray,
    here: np.ndarray,
    start: np.ndarray | None,
    chosen: np.ndarray,
    slop: float,
) -> bool:
    """Do the ``chosen`` points' paths from ``start`` to ``here`` lie in box ``region``
    shrunk by ``slop``? (Points sampled along a path in float32 may round past its ends.)"""
    inner = _region(here[chosen], None if start is None else start[chosen], slop)
    return bool((inner[0] >= region[0]).all() and (inner[1] <= region[1]).all())
