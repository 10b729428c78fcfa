"""Candidate point-triangle pairs kept across substeps, refreshed point by point.

A pair list is valid for a point while it stays within its slack of where its pairs were
found; the points that moved farther are queried again (``query(ids) -> (points, tris,
slacks)``, a slack for each queried id) and only their pairs are replaced, so a fast point
does not make the whole cloth pay for a new broad phase. Pairs are kept sorted by point, so
a per-point choice among them is a ``minimum.reduceat`` over contiguous runs (``best``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

Query = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]]
FULL_REBUILD_FRACTION = 0.5  # beyond this share of points moved, query them all at once


class Candidates:
    """Pairs (``point``, ``tri``) sorted by point, the triangles' ``corners``, and where
    each point was when its pairs were found, with how far it may move from there."""

    def __init__(self, triangles: np.ndarray, reach: float) -> None:
        self.triangles = triangles
        self.reach = float(reach)
        self.slack2 = np.zeros(0, dtype=np.float32)  # (N,) squared slack per point
        self.point = np.zeros(0, dtype=np.int64)
        self.tri = np.zeros(0, dtype=np.int64)
        self.corners: tuple[np.ndarray, np.ndarray, np.ndarray] = (self.tri,) * 3
        self.count = 0
        self.starts = np.zeros(0, dtype=np.int64)
        self.group_sizes = np.zeros(0, dtype=np.int64)
        self.built: np.ndarray | None = None
        self.queries = 0  # points queried so far (for tests and benchmarks)

    def refresh(
        self, pos: np.ndarray, prev: np.ndarray | None, candidates: np.ndarray, query: Query
    ) -> None:
        """Query again the points of ``candidates`` (ids that may collide) whose substep
        started or ended beyond their slack (all of them the first time); ``pos`` and
        ``prev`` (the substep's start, or None) are ``(N, 4)`` or ``(N, 3)``."""
        here = np.asarray(pos[:, :3], dtype=np.float32)
        if self.built is None or self.built.shape != here.shape:
            self.built = here.copy()
            self.slack2 = np.zeros(len(here), dtype=np.float32)
            self._replace(candidates, *query(candidates), full=True)
            return
        built = self.built
        far = self._beyond(built, here, candidates)
        if prev is not None:
            far |= self._beyond(built, np.asarray(prev[:, :3], dtype=np.float32), candidates)
        ids = candidates[far]
        if not ids.size:
            return
        built[ids] = here[ids]
        full = ids.size > FULL_REBUILD_FRACTION * candidates.size
        if full:
            built[candidates] = here[candidates]
            ids = candidates
        self._replace(ids, *query(ids), full=full)

    def _beyond(self, built: np.ndarray, here: np.ndarray, ids: np.ndarray) -> np.ndarray:
        moved = here[ids] - built[ids]
        moved *= moved
        return np.asarray(moved[:, 0] + moved[:, 1] + moved[:, 2] > self.slack2[ids])

    def _replace(
        self, ids: np.ndarray, point: np.ndarray, tri: np.ndarray, slack: np.ndarray, full: bool
    ) -> None:
        self.queries += int(ids.size)
        self.slack2[ids] = np.square(slack, dtype=np.float32)
        if not full and self.count:
            point, tri = merged_pairs(self.point, self.tri, ids, point, tri)
        order = np.argsort(point, kind="stable")
        self.point = np.ascontiguousarray(point[order])
        self.tri = np.ascontiguousarray(tri[order])
        corners = self.triangles[self.tri]
        self.corners = tuple(np.ascontiguousarray(corners[:, k]) for k in range(3))  # type: ignore[assignment]
        self.count = int(self.point.size)
        self.starts, self.group_sizes = point_runs(self.point)

    def best(self, key: np.ndarray) -> np.ndarray:
        """Per point, the pair with the smallest finite ``key`` (first on ties): pair ids."""
        return best_of_runs(self.point, self.starts, self.group_sizes, key)


def merged_pairs(
    old_point: np.ndarray, old_tri: np.ndarray, ids: np.ndarray, point: np.ndarray, tri: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The kept pairs of the points not in ``ids``, then the new pairs (``ids``' own), unsorted."""
    stale = np.zeros(int(max(old_point.max(), ids.max())) + 1, dtype=bool)
    stale[ids] = True
    keep = ~stale[old_point]
    return np.concatenate([old_point[keep], point]), np.concatenate([old_tri[keep], tri])


def point_runs(point: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each point's run of pairs starts in the sorted ``point``, and its length."""
    first = np.ones(point.size, dtype=bool)
    first[1:] = point[1:] != point[:-1]
    starts = first.nonzero()[0]
    return starts, np.diff(np.append(starts, point.size))


def best_of_runs(
    point: np.ndarray, starts: np.ndarray, sizes: np.ndarray, key: np.ndarray
) -> np.ndarray:
    """Per point of the sorted ``point``, the pair with the smallest finite ``key`` (first
    on ties): pair ids."""
    if not point.size:
        return np.zeros(0, dtype=np.int64)
    lowest = np.minimum.reduceat(key, starts)
    chosen = (np.isfinite(key) & (key <= lowest.repeat(sizes))).nonzero()[0]
    if not chosen.size:
        return chosen
    owner = point[chosen]
    first = np.ones(chosen.size, dtype=bool)
    first[1:] = owner[1:] != owner[:-1]
    return chosen[first]
