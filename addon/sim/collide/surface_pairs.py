"""Candidate point-triangle pairs of a mesh collider, kept while each point moves with the
surface it lies on.

Like ``candidates.Candidates`` (pairs sorted by point, refreshed point by point), but a
point's pairs hold while two bounds hold since they were found:

- its motion relative to its *anchor* (the closest point of its nearest triangle, carried
  with that triangle's corners) is within its slack ``s``: a cape resting on a moving back
  moves with it and is not asked again however far the back carries it;
- its absolute motion (in the collider's drifting frame) is within ``limit``: the grid the
  pairs came from listed every triangle box grown by ``limit`` (beyond the reach), so no
  triangle it could reach was left out.

The query (``query(ids) -> (points, tris, slacks, anchor tris, anchor weights)``) keeps the
triangles that may come within reach, or become the nearest, while those hold, given how
far each triangle moves relative to the anchor until the window ends.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .broad_phase import BoxGrid
from .candidates import FULL_REBUILD_FRACTION, best_of_runs, merged_pairs, point_runs
from .surface_pose import gather

Query = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]]
Anchor = Callable[[np.ndarray, np.ndarray], np.ndarray]  # (tris, weights) -> points (k, 3)
FAR = np.float32(1e15)  # a built position no point is near: asked again at its next refresh
# when some point must be queried again, the points that have used this share of either
# bound are queried with it, if that makes at most EARLY_POINTS points: a small query costs
# mostly per call, not per point (~1 ms of calls), so they do not each ask alone a substep
# or two later (the demo's 513-point cape: 13 queries a frame -> 5.4; a 10k cape's queries
# are bigger and stay as they were)
EARLY_SHARE, EARLY_POINTS = 0.5, 512


class AnchoredPairs:
    """Pairs (``point``, ``tri``) sorted by point; per point where it was when its pairs
    were found, its anchor (triangle, barycentric weights, position then) and its slack."""

    def __init__(self, reach: float, limit: float) -> None:
        self.reach = float(reach)
        self.limit2 = np.float32(limit) ** 2
        self.point = np.zeros(0, dtype=np.int64)
        self.tri = np.zeros(0, dtype=np.int64)
        self.count = 0
        self.starts = np.zeros(0, dtype=np.int64)
        self.group_sizes = np.zeros(0, dtype=np.int64)
        self.built: np.ndarray | None = None  # (N, 3) float32
        self.slack2 = np.zeros(0, dtype=np.float32)
        self.anchor_tri = np.zeros(0, dtype=np.int64)  # -1: none (no triangle near)
        self.anchor_w = np.zeros((0, 3), dtype=np.float32)
        self.anchor_at = np.zeros((0, 3), dtype=np.float32)
        self.queries = 0  # points queried so far (for tests and benchmarks)

    def refresh(
        self,
        here: np.ndarray,
        start: np.ndarray | None,
        anchor_here: Anchor,
        anchor_start: Anchor | None,
        ids: np.ndarray,
        query: Query,
        still: bool = False,
    ) -> None:
        """Query again the points of ``ids`` whose substep started or ended beyond either
        bound (all of them the first time); ``here``/``start`` ``(N, 3)`` float32 in the
        drifting frame, ``anchor_here``/``anchor_start`` the anchors' positions then.
        ``still``: the surface has not moved since the anchors were placed (they are where
        they were: a point's motion relative to its anchor is its motion)."""
        if self.built is None or self.built.shape != here.shape:
            n = len(here)
            self.built = here.copy()
            self.slack2 = np.zeros(n, dtype=np.float32)
            self.anchor_tri = np.full(n, -1, dtype=np.int64)
            self.anchor_w = np.zeros((n, 3), dtype=np.float32)
            self.anchor_at = np.zeros((n, 3), dtype=np.float32)
            self._replace(ids, *query(ids), here=here, anchor=anchor_here, full=True)
            return
        ends = [(here, anchor_here)]
        if start is not None and anchor_start is not None:
            ends.append((start, anchor_start))
        used = self._used(ends, ids, still)
        if not (used > 1.0).any():
            return
        early = used > np.float32(EARLY_SHARE * EARLY_SHARE)
        moved = ids[early] if np.count_nonzero(early) <= EARLY_POINTS else ids[used > 1.0]
        full = moved.size > FULL_REBUILD_FRACTION * ids.size
        chosen = ids if full else moved
        self._replace(chosen, *query(chosen), here=here, anchor=anchor_here, full=full)

    def forget(self, ids: np.ndarray) -> None:
        """Points ``ids`` are asked about again whenever they are next among the ids."""
        if self.built is not None:
            # most of a cloth far from the surface was forgotten at earlier substeps already
            self.built[ids[self.built[ids, 0] != FAR]] = FAR

    def _used(
        self, ends: list[tuple[np.ndarray, Anchor]], ids: np.ndarray, still: bool = False
    ) -> np.ndarray:
        """How much of its bounds each point of ``ids`` has used at the substep's end and
        start (``ends``: the points ``(N, 3)`` and their anchors then), squared ``(k,)``
        float32: the larger of its motion over ``limit`` and its motion relative to its
        anchor over its slack (beyond 1: its pairs no longer hold)."""
        assert self.built is not None
        # rows gathered as one item each (a 2-D fancy index walks them element by element)
        built = gather(self.built, ids)
        tri = self.anchor_tri[ids]
        has = (tri >= 0).nonzero()[0]
        if has.size:
            tri, at = tri[has], ids[has]
            weights, anchor_at = gather(self.anchor_w, at), gather(self.anchor_at, at)
            slack2 = self.slack2[at]
        out: np.ndarray | None = None
        with np.errstate(invalid="ignore", divide="ignore"):  # a zero bound: 0/0 holds
            for rows, anchor in ends:
                moved = gather(rows, ids) - built
                used = _norm2(moved) / self.limit2
                if has.size:
                    relative = (
                        moved[has] if still else moved[has] - (anchor(tri, weights) - anchor_at)
                    )
                    slid = _norm2(relative) / slack2
                    used[has] = np.fmax(used[has], slid)
                out = used if out is None else np.maximum(out, used, out=out)
        assert out is not None
        return out

    def _replace(
        self,
        ids: np.ndarray,
        point: np.ndarray,
        tri: np.ndarray,
        slack: np.ndarray,
        anchor_tri: np.ndarray,
        anchor_w: np.ndarray,
        here: np.ndarray,
        anchor: Anchor,
        full: bool,
    ) -> None:
        assert self.built is not None
        self.queries += int(ids.size)
        self.built[ids] = here[ids]
        self.slack2[ids] = np.square(slack, dtype=np.float32)
        self.anchor_tri[ids] = anchor_tri
        self.anchor_w[ids] = anchor_w
        has = (anchor_tri >= 0).nonzero()[0]
        if has.size:
            self.anchor_at[ids[has]] = anchor(anchor_tri[has], anchor_w[has])
        if not full and self.count:
            point, tri = merged_pairs(self.point, self.tri, ids, point, tri)
        order = np.argsort(point, kind="stable")
        self.assign(point[order], tri[order])

    def assign(self, point: np.ndarray, tri: np.ndarray) -> None:
        """The pairs, ``point`` sorted."""
        self.point = np.ascontiguousarray(point)
        self.tri = np.ascontiguousarray(tri)
        self.count = int(self.point.size)
        self.starts, self.group_sizes = point_runs(self.point)

    def best(self, key: np.ndarray) -> np.ndarray:
        """Per point, the pair with the smallest finite ``key`` (first on ties): pair ids."""
        return best_of_runs(self.point, self.starts, self.group_sizes, key)


def _norm2(rows: np.ndarray) -> np.ndarray:
    """Squared lengths of ``(k, 3)`` rows."""
    out = rows[:, 0] * rows[:, 0]
    out += rows[:, 1] * rows[:, 1]
    out += rows[:, 2] * rows[:, 2]
    return out


def path_lengths(pos: np.ndarray, prev: np.ndarray | None, chosen: np.ndarray) -> np.ndarray:
    """How far each chosen point moved this substep ``(k,)`` float32 (0 without ``prev``)."""
    if prev is None:
        return np.zeros(chosen.size, dtype=np.float32)
    d = np.asarray(pos[chosen, :3] - prev[chosen, :3], dtype=np.float32)
    return np.sqrt(d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1] + d[:, 2] * d[:, 2])


def query_along(
    grid: BoxGrid,
    pos: np.ndarray,
    prev: np.ndarray | None,
    chosen: np.ndarray,
    path: np.ndarray,
    limit: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Grid pairs (local point ids, triangles) of the chosen points' substep paths, the
    grid's boxes grown by ``limit`` beyond the reach: the end points, plus, for paths longer
    than ``limit``, points along them at most ``2 limit`` apart (a path that comes within
    reach of a box has a stretch ``2 limit`` long within the grown box, about that place; a
    path up to ``limit`` long lies within ``limit`` of its end). Pairs are distinct, sorted by
    (point, triangle): the order ties are broken in does not depend on the sampling."""
    end = pos[chosen, :3]
    if prev is None:
        return grid.query(end)
    long = path > limit
    if not long.any():
        point, tri = grid.query(end)
        keys = np.sort(point * np.int64(grid.named) + tri)
        return keys // grid.named, keys % grid.named
    samples = np.where(long, np.ceil(path / (2.0 * limit)), 0).astype(np.int64)
    start = prev[chosen, :3]
    owner = np.repeat(np.arange(chosen.size), samples + 1)
    step = np.arange(owner.size) - np.repeat(np.cumsum(samples + 1) - (samples + 1), samples + 1)
    frac = (step / np.maximum(samples[owner], 1)).astype(np.float32)[:, None]
    points = start[owner] + (end[owner] - start[owner]) * frac
    short = np.flatnonzero(samples[owner] == 0)
    points[short] = end[owner[short]]  # a short path's only sample: its end
    sample, tri = grid.query(points)
    keys = np.unique(owner[sample] * np.int64(grid.named) + tri)
    return keys // grid.named, keys % grid.named
