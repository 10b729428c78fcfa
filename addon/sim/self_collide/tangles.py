"""Where a cloth is caught through itself, so self-collision lets it come back out.

Self-collision keeps each point on the side of a triangle it started the substep on, so a
part that got through (pushed by a collider, or by a fast fold) is held there for good, and
the springs pulling it back fight the collision until the cloth crumples. After Baraff,
Witkin and Kass ("Untangling cloth", 2003): the edges that pass through a triangle of the
cloth cut the mesh along the curves where it intersects itself; of each piece of cloth the
largest part left connected is free, and the smaller parts, bounded by those curves and the
cloth's border, are what went through. Their points and triangles are left out of
self-collision until the intersection is gone, so the cloth's own forces pull them back.

The crossing edges are found among the self-collision candidates: an edge through a triangle
has both ends within its length of the triangle, so with edges no longer than the candidates'
reach both ends are candidates of that triangle, on opposite sides of its plane.
"""

from __future__ import annotations

import numpy as np

from ..mesh.neighbours import components
from ..mesh.rows import take_columns
from ..mesh.springs import face_edges
from ..mesh.triangle_geometry import inside_triangle


class TangleFinder:
    """The mesh's edges (each once) and pieces, for ``tangled``."""

    def __init__(self, triangles: np.ndarray, point_count: int) -> None:
        tri = np.asarray(triangles, dtype=np.int64).reshape(-1, 3)
        edges = face_edges(np.full(len(tri), 3), tri.reshape(-1), point_count)
        self.low, self.high = edges[:, 0], edges[:, 1]  # low < high, sorted by low
        self.point_count = point_count
        self.first = np.searchsorted(self.low, np.arange(point_count + 1))
        self.piece = components(edges, point_count)
        self.cut_edges = 0  # edges through a triangle at the last call (for tests)
        # the candidate pairs (point, tri arrays) the linked pairs were found for
        self._of: np.ndarray | None = None
        self._of_tri: np.ndarray | None = None
        empty = np.zeros(0, dtype=np.int64)
        self._linked: tuple[np.ndarray, np.ndarray, np.ndarray] = (empty, empty, empty)

    def tangled(
        self,
        point: np.ndarray,
        tri: np.ndarray,
        side: np.ndarray,
        prev: np.ndarray,
        triangles: np.ndarray,
    ) -> np.ndarray | None:
        """Which points ``(N,)`` lie in a part of the cloth that went through itself, from
        the candidate pairs (``point``, ``tri``) and each pair's signed height over its
        triangle's plane ``side`` at the substep's start ``prev``; None when none does (no
        edge passes through a triangle, or the cuts split no piece). The pairs' links are
        kept for the same ``point`` and ``tri`` arrays (not changed in place: a new set of
        candidates comes as new arrays)."""
        n = self.point_count
        self.cut_edges = 0
        if not point.size:
            return None
        # the pairs whose point's edge to a higher id ends at a candidate of the same
        # triangle: found once for a set of candidates (kept over the substeps it serves)
        if self._of is not point or self._of_tri is not tri:
            self._linked = _linked_pairs(point, tri, self.first, self.high, n)
            self._of, self._of_tri = point, tri
        pair, edge, other = self._linked
        if not pair.size:
            return None
        # ... and on the other side of its plane
        opposite = (side[pair] * side[other] < 0).nonzero()[0]
        if not opposite.size:
            return None
        pair, edge, other = pair[opposite], edge[opposite], other[opposite]
        s_a, s_b = side[pair], side[other]
        u = s_a / (s_a - s_b)
        a = take_columns(prev, self.low[edge])
        b = take_columns(prev, self.high[edge])
        x = a + (b - a) * u
        corners = triangles[tri[pair]]
        a, b, c = (take_columns(prev, corners[:, k]) for k in range(3))
        through = inside_triangle(x, a, b, c, 0.0)
        cut = np.unique(edge[through])
        self.cut_edges = int(cut.size)
        if not cut.size:
            return None
        kept = np.ones(self.low.size, dtype=bool)
        kept[cut] = False
        part = components(np.stack([self.low[kept], self.high[kept]], axis=1), n)
        # per piece, its largest part is free; every other part went through
        size = np.bincount(part, minlength=n)
        best = np.zeros(n, dtype=np.int64)
        rank = np.lexsort((-size[part], self.piece))  # by piece, largest part first
        piece = self.piece[rank]
        first = np.ones(n, dtype=bool)
        first[1:] = piece[1:] != piece[:-1]
        best[piece[first]] = part[rank][first]
        gone = part != best[self.piece]
        return gone if gone.any() else None


def _linked_pairs(
    point: np.ndarray, tri: np.ndarray, first: np.ndarray, high: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Of the candidate pairs (``point``, ``tri``), each pair with an edge from its point
    to a higher id (edges ``first``/``high``, sorted by low end) whose other end is a
    candidate of the same triangle: (pair ids, edge ids, the other end's pair ids)."""
    key = tri * n + point
    order = np.argsort(key)
    sorted_key = key[order]
    degree = first[point + 1] - first[point]
    pair = np.repeat(np.arange(point.size), degree)
    edge = np.repeat(first[point] - np.cumsum(degree) + degree, degree)
    edge += np.arange(edge.size)
    if not edge.size:
        return pair, edge, pair
    other_key = tri[pair] * n + high[edge]
    at = np.minimum(np.searchsorted(sorted_key, other_key), sorted_key.size - 1)
    found = (sorted_key[at] == other_key).nonzero()[0]
    return pair[found], edge[found], order[at][found]
