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
        edge passes through a triangle, or the cuts split no piece)."""
        n = self.point_count
        self.cut_edges = 0
        if not point.size:
            return None
        key = tri * n + point
        order = np.argsort(key)
        sorted_key = key[order]
        # each pair with every edge from its point to a higher id: is that end a candidate
        # of the same triangle, on the other side of its plane?
        degree = self.first[point + 1] - self.first[point]
        pair = np.repeat(np.arange(point.size), degree)
        edge = np.repeat(self.first[point] - np.cumsum(degree) + degree, degree)
        edge += np.arange(edge.size)
        if not edge.size:
            return None
        other_key = tri[pair] * n + self.high[edge]
        at = np.minimum(np.searchsorted(sorted_key, other_key), sorted_key.size - 1)
        found = sorted_key[at] == other_key
        other = order[at]
        opposite = found & (side[pair] * side[other] < 0)
        pair, edge, other = pair[opposite], edge[opposite], other[opposite]
        if not pair.size:
            return None
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
