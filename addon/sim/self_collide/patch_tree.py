"""Self-collision's broad phase: a tree of rest-shape patches with normal cones.

The cloth's triangles are split at rest into a complete binary tree of compact patches
(median cuts of their centroids along the longest side, ``LEAF_TRIANGLES`` or fewer a
leaf); each point belongs to the leaf of its first triangle. At a query every node gets its
current box and a cone bounding its triangles' normals, and node pairs are walked from the
root down, dropped as a whole when

- their boxes, grown by the reach, are apart;
- every point-triangle pair between them is within the excluded rest distance (their rest
  boxes are that close even at their farthest);
- the node (or two nodes sharing a vertex) is flat: normals within the flat angle
  (cosine ``FLAT_COS``) of one axis. A nearly flat patch of a cloth that stretches little
  lies over its plane like a map of its rest shape, so points of it that are far apart at
  rest stay far apart now.

A flat cloth, however fine, thus costs a few node tests and no point-triangle pair: pairs
are only enumerated between leaves where the cloth curves or folds back near itself.
"""

from __future__ import annotations

import numpy as np

LEAF_TRIANGLES = 8
# normals within this angle of a patch's axis (its cosine): a pair excluded by less than its
# rest distance keeps at least 0.9 of it through the patch's tilt
FLAT_COS = 0.9


class PatchTree:
    """The rest-shape patch tree of ``triangles`` ``(T, 3)`` over ``rest`` ``(N, 3)``."""

    def __init__(self, triangles: np.ndarray, rest: np.ndarray) -> None:
        tri = np.asarray(triangles, dtype=np.int64)
        count = len(tri)
        depth = 0
        while count > (LEAF_TRIANGLES << depth) and (2 << depth) <= count:
            depth += 1
        self.depth = depth
        self.leaf_base = 1 << depth  # heap ids: node n has children 2n, 2n + 1
        rest = np.asarray(rest, dtype=np.float64)
        order, bounds = _kd_order(rest[tri].mean(axis=1) if count else rest[:0], depth)
        self.order = order  # triangle ids in leaf order
        self.triangles = tri[order]
        self.corner_ids = [np.ascontiguousarray(self.triangles[:, k]) for k in range(3)]
        self.tri_bounds = bounds  # (leaves + 1,) triangle ranges of the leaves
        leaves = self.leaf_base
        tri_leaf = np.repeat(np.arange(leaves), np.diff(bounds))
        point_leaf = np.full(len(rest), leaves, dtype=np.int64)
        np.minimum.at(point_leaf, self.triangles.reshape(-1), np.repeat(tri_leaf, 3))
        on_cloth = np.flatnonzero(point_leaf < leaves)
        self.loose = np.flatnonzero(point_leaf == leaves)  # points of no triangle
        self.points = on_cloth[np.argsort(point_leaf[on_cloth], kind="stable")]
        self.point_bounds = np.searchsorted(point_leaf[self.points], np.arange(leaves + 1))
        self.rest_lo, self.rest_hi = self._boxes(rest)
        self.adjacent = self._adjacency(tri_leaf)
        self.connected = self._connected(tri_leaf)
        self.lo = self.hi = self.rest_lo

    # building ----------------------------------------------------------------------------

    def _boxes(self, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Every node's box ``(2 * leaves, 3)`` (by heap id; row 0 unused) of its triangles'
        corners at ``positions``."""
        corners = positions[self.triangles]
        lo, hi = self._leaf_reduce(corners.min(axis=1), corners.max(axis=1))
        return _up(lo, np.minimum), _up(hi, np.maximum)

    def _leaf_reduce(self, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        starts = self.tri_bounds[:-1]
        return np.minimum.reduceat(lo, starts, axis=0), np.maximum.reduceat(hi, starts, axis=0)

    def _adjacency(self, tri_leaf: np.ndarray) -> np.ndarray:
        """Sorted keys ``a * M + b`` (heap ids ``a < b``, one level) of nodes sharing a
        vertex, every level."""
        leaves = self.leaf_base
        entry = np.unique(self.triangles.reshape(-1) * leaves + np.repeat(tri_leaf, 3))
        point, leaf = entry // leaves, entry % leaves
        first = np.ones(entry.size, dtype=bool)
        first[1:] = point[1:] != point[:-1]
        starts = np.flatnonzero(first)
        sizes = np.diff(np.append(starts, entry.size))
        size = np.repeat(sizes, sizes)
        start = np.repeat(starts, sizes)
        me = np.repeat(np.arange(entry.size), size)
        other = np.repeat(start, size) + (
            np.arange(me.size) - np.repeat(np.cumsum(size) - size, size)
        )
        a, b = leaf[me], leaf[other]
        keep = a < b
        a, b = a[keep], b[keep]
        span = 2 * leaves
        keys = []
        for shift in range(self.depth + 1):
            base = leaves >> shift
            na, nb = (a >> shift) + base, (b >> shift) + base
            apart = na != nb
            keys.append(na[apart] * span + nb[apart])
        return np.unique(np.concatenate(keys)) if keys else np.zeros(0, dtype=np.int64)

    def _connected(self, tri_leaf: np.ndarray) -> np.ndarray:
        """Per node (heap id): whether its triangles form one piece through shared
        vertices (a flat node of two pieces, say two stacked sheets, proves nothing)."""
        leaves = self.leaf_base
        n = len(self.triangles)
        label = np.arange(n)
        corner_key = self.triangles * leaves + tri_leaf[:, None]  # (T, 3): vertex within leaf
        keys, inverse = np.unique(corner_key.reshape(-1), return_inverse=True)
        inverse = inverse.reshape(n, 3)
        while True:  # spread the lowest label through shared vertices, within each leaf
            lowest = np.full(keys.size, n, dtype=np.int64)
            np.minimum.at(lowest, inverse.reshape(-1), np.repeat(label, 3))
            new = lowest[inverse].min(axis=1)
            if np.array_equal(new, label):
                break
            label = new
        starts = self.tri_bounds[:-1]
        one = np.minimum.reduceat(label, starts) == np.maximum.reduceat(label, starts)
        out = np.zeros(2 * leaves, dtype=bool)
        out[leaves:] = one
        span = 2 * leaves
        width = leaves // 2
        while width:
            nodes = np.arange(width, 2 * width)
            keys_here = (2 * nodes) * span + 2 * nodes + 1
            at = np.searchsorted(self.adjacent, keys_here).clip(max=max(self.adjacent.size - 1, 0))
            touching = self.adjacent[at] == keys_here if self.adjacent.size else nodes < 0
            out[nodes] = out[2 * nodes] & out[2 * nodes + 1] & touching
            width //= 2
        return out

    # querying ----------------------------------------------------------------------------

    def leaf_pairs(
        self, positions: np.ndarray, reach: float, excluded: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """Leaf pairs ``(a, b)`` (leaf indices, ``a <= b``) whose points and triangles may
        come within ``reach`` of each other at ``positions`` ``(N, 3)`` with some pair
        farther than ``excluded`` apart at rest (see the module)."""
        empty = np.zeros(0, dtype=np.int64)
        if not len(self.triangles):
            return empty, empty
        lo, hi, axis, cos = self._cones(positions)
        self.lo, self.hi = lo, hi  # the boxes of this query, for the caller's finer tests
        lo_c = [np.ascontiguousarray(lo[:, k]) - reach for k in range(3)]
        hi_c = [np.ascontiguousarray(hi[:, k]) for k in range(3)]
        rest_lo = [np.ascontiguousarray(self.rest_lo[:, k]) for k in range(3)]
        rest_hi = [np.ascontiguousarray(self.rest_hi[:, k]) for k in range(3)]
        flat_node = (cos >= FLAT_COS) & self.connected
        span = 2 * self.leaf_base
        a = b = np.ones(1, dtype=np.int64)
        ex2 = excluded * excluded
        while True:
            # boxes grown by the reach apart, or all their pairs excluded at rest (the
            # farthest rest distance between the boxes is within the exclusion)
            keep = np.ones(a.size, dtype=bool)
            far = np.zeros(a.size)
            for k in range(3):  # the take method: np.take adds two Python calls a take
                keep &= lo_c[k].take(a) <= hi_c[k].take(b)
                keep &= lo_c[k].take(b) <= hi_c[k].take(a)
                span_k = np.maximum(
                    rest_hi[k].take(b) - rest_lo[k].take(a),
                    rest_hi[k].take(a) - rest_lo[k].take(b),
                )
                far += span_k * span_k
            keep &= far > ex2
            a, b = a[keep], b[keep]
            same = a == b
            flat = np.take(flat_node, a) & np.take(flat_node, b)
            flat_self = flat & same
            # two flat nodes sharing a vertex, flat together (their normals about the
            # joint axis within the flat angle)
            pick = np.flatnonzero(flat & ~same)
            if pick.size and self.adjacent.size:
                keys = a[pick] * span + b[pick]
                at = np.searchsorted(self.adjacent, keys).clip(max=self.adjacent.size - 1)
                pick = pick[self.adjacent[at] == keys]
                flat_self[pick] = _flat_together(axis, cos, a[pick], b[pick])
            keep = ~flat_self
            a, b, same = a[keep], b[keep], same[keep]
            if not a.size:
                return empty, empty
            if a[0] >= self.leaf_base:  # all pairs are of one level
                return a - self.leaf_base, b - self.leaf_base
            sa, ca, cb = a[same], a[~same], b[~same]
            a = np.concatenate([2 * sa, 2 * sa + 1, 2 * sa, 2 * ca, 2 * ca, 2 * ca + 1, 2 * ca + 1])
            b = np.concatenate(
                [2 * sa, 2 * sa + 1, 2 * sa + 1, 2 * cb, 2 * cb + 1, 2 * cb, 2 * cb + 1]
            )

    def _cones(
        self, positions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per node (heap id): current box lo, hi ``(2L, 3)``, unit cone axis ``(2L, 3)``
        (the normalised sum of its triangles' area-weighted normals) and the cosine of the
        cone's half-angle ``(2L,)``, the least of its triangles' (-1 where the normals
        cancel or a triangle collapsed)."""
        # per axis, the three corners' coordinates as contiguous (T,) columns: a min or max
        # over a short axis of a (T, 3) block is numpy's slow kind
        c = [[np.take(positions[:, k], ids) for ids in self.corner_ids] for k in range(3)]
        lo = np.stack([np.minimum(np.minimum(x[0], x[1]), x[2]) for x in c], axis=1)
        hi = np.stack([np.maximum(np.maximum(x[0], x[1]), x[2]) for x in c], axis=1)
        lo, hi = self._leaf_reduce(lo, hi)
        e1 = [x[1] - x[0] for x in c]
        e2 = [x[2] - x[0] for x in c]
        normal = np.stack(
            [
                e1[1] * e2[2] - e1[2] * e2[1],
                e1[2] * e2[0] - e1[0] * e2[2],
                e1[0] * e2[1] - e1[1] * e2[0],
            ],
            axis=1,
        )  # twice the area: big triangles weigh more in the axis
        total = _up(np.add.reduceat(normal, self.tri_bounds[:-1], axis=0), np.add)
        axis = _unit(total)
        unit = _unit(normal)
        u = [np.ascontiguousarray(unit[:, k]) for k in range(3)]
        collapsed = (u[0] == 0) & (u[1] == 0) & (u[2] == 0)
        cos = np.full(2 * self.leaf_base, -1.0)
        for level in range(self.depth + 1):  # one coordinate at a time: no short-axis sums
            nodes = np.arange(1 << level, 2 << level)
            bounds = self.tri_bounds[:: 1 << (self.depth - level)]
            counts = np.diff(bounds)
            d = u[0] * np.repeat(axis[nodes, 0], counts)
            d += u[1] * np.repeat(axis[nodes, 1], counts)
            d += u[2] * np.repeat(axis[nodes, 2], counts)
            d[collapsed] = -1.0
            cos[nodes] = np.minimum.reduceat(d, bounds[:-1])
        cos[(axis[:, 0] == 0) & (axis[:, 1] == 0) & (axis[:, 2] == 0)] = -1.0
        return _up(lo, np.minimum), _up(hi, np.maximum), axis, cos


def _flat_together(axis: np.ndarray, cos: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Whether the normals of nodes ``a`` and ``b`` together lie within the flat angle of
    their joint axis: cos(angle to a's axis + a's half-angle) >= ``FLAT_COS``, same for b."""
    joint = _unit(axis[a] + axis[b])
    ok = (joint * joint).sum(axis=1) > 0
    for node in (a, b):
        c_axis = np.clip((joint * axis[node]).sum(axis=1), -1.0, 1.0)
        c_half = cos[node]
        bound = c_axis * c_half - np.sqrt((1 - c_axis * c_axis) * (1 - c_half * c_half))
        ok &= (c_axis > 0) & (c_half > 0) & (bound >= FLAT_COS)
    return ok


def _kd_order(centroids: np.ndarray, depth: int) -> tuple[np.ndarray, np.ndarray]:
    """Triangle ids in leaf order and the leaves' bounds ``(2 ** depth + 1,)``: each node's
    range is cut at its middle along the longest side of its centroids' box."""
    order = np.arange(len(centroids))
    bounds = np.array([0, len(centroids)], dtype=np.int64)
    for _ in range(depth):
        counts = np.diff(bounds)
        node = np.repeat(np.arange(counts.size), counts)
        p = centroids[order]
        lo = np.minimum.reduceat(p, bounds[:-1], axis=0)
        hi = np.maximum.reduceat(p, bounds[:-1], axis=0)
        longest = np.argmax(hi - lo, axis=1)
        coord = p[np.arange(len(p)), longest[node]]
        order = order[np.lexsort((coord, node))]
        split = np.empty(2 * counts.size + 1, dtype=np.int64)
        split[0::2] = bounds
        split[1::2] = bounds[:-1] + counts // 2
        bounds = split
    return order, bounds


def _up(leaf_values: np.ndarray, combine: np.ufunc) -> np.ndarray:
    """Values of every node by heap id from the leaves' (row 0 unused)."""
    leaves = len(leaf_values)
    out = np.zeros((2 * leaves, *leaf_values.shape[1:]), dtype=leaf_values.dtype)
    out[leaves:] = leaf_values
    width = leaves // 2
    while width:
        out[width : 2 * width] = combine(
            out[2 * width : 4 * width : 2], out[2 * width + 1 : 4 * width : 2]
        )
        width //= 2
    return out


def _unit(v: np.ndarray) -> np.ndarray:
    length = np.sqrt(v[:, 0] * v[:, 0] + v[:, 1] * v[:, 1] + v[:, 2] * v[:, 2])
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(length[:, None] > 0, v / length[:, None], 0.0)
