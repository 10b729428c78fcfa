"""Self-collision's broad phase: a tree of rest-shape patches with normal cones.

The cloth's triangles are split at rest into a complete binary tree of compact patches
(median cuts of their centroids along the longest side, ``LEAF_TRIANGLES`` or fewer a
leaf); each point belongs to the leaf of its first triangle. At a query every node gets its
current box and a cone bounding its triangles' normals, and node pairs are walked from the
root down, dropped as a whole when

- their boxes, grown by the reach, are apart;
- every point-triangle pair between them is within the excluded rest distance (their rest
  boxes are that close even at their farthest);
- the node (or two nodes sharing a vertex) is flat: normals within ``FLAT_ANGLE`` of one
  axis. A nearly flat patch of a cloth that stretches little lies over its plane like a map
  of its rest shape, so points of it that are far apart at rest stay far apart now.

A flat cloth, however fine, thus costs a few node tests and no point-triangle pair: pairs
are only enumerated between leaves where the cloth curves or folds back near itself.
"""

from __future__ import annotations

import numpy as np

LEAF_TRIANGLES = 8
# normals within this angle of a patch's axis (cos 0.9): a pair excluded by less than its
# rest distance keeps at least 0.9 of it through the patch's tilt
FLAT_ANGLE = float(np.arccos(0.9))


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
        if not len(self.triangles):
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty
        lo, hi, axis, half = self._cones(positions)
        self.lo, self.hi = lo, hi  # the boxes of this query, for the caller's finer tests
        span = 2 * self.leaf_base
        a = b = np.ones(1, dtype=np.int64)
        found_a, found_b = [], []
        ex2 = excluded * excluded
        while a.size:
            same = a == b
            # farthest rest distance between the two boxes: within the exclusion, all excluded
            far = np.maximum(self.rest_hi[b] - self.rest_lo[a], self.rest_hi[a] - self.rest_lo[b])
            keep = (far * far).sum(axis=1) > ex2
            near = ((lo[a] - reach <= hi[b]) & (lo[b] - reach <= hi[a])).all(axis=1)
            keep &= near
            flat = same & (half[a] <= FLAT_ANGLE) & self.connected[a]
            cross = np.flatnonzero(keep & ~same)
            if cross.size:
                ca, cb = a[cross], b[cross]
                keys = ca * span + cb
                at = np.searchsorted(self.adjacent, keys).clip(max=max(self.adjacent.size - 1, 0))
                touching = self.adjacent[at] == keys if self.adjacent.size else keys < 0
                joint = _union_half(axis, half, ca, cb)
                whole = self.connected[ca] & self.connected[cb] & touching
                flat[cross] = whole & (joint <= FLAT_ANGLE)
            keep &= ~flat
            a, b, same = a[keep], b[keep], same[keep]
            if not a.size:
                break
            if a[0] >= self.leaf_base:  # all pairs are of one level
                found_a.append(a - self.leaf_base)
                found_b.append(b - self.leaf_base)
                break
            sa, sb = a[same], b[~same]
            ca = a[~same]
            a = np.concatenate([2 * sa, 2 * sa + 1, 2 * sa] + [2 * ca + i for i in (0, 0, 1, 1)])
            b = np.concatenate(
                [2 * sa, 2 * sa + 1, 2 * sa + 1] + [2 * sb + j for j in (0, 1, 0, 1)]
            )
        if not found_a:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty
        return np.concatenate(found_a), np.concatenate(found_b)

    def _cones(
        self, positions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per node (heap id): current box lo, hi ``(2L, 3)``, unit cone axis ``(2L, 3)``
        and half-angle ``(2L,)`` (pi where the normals cancel)."""
        corners = positions[self.triangles]  # (T, 3, 3)
        a, b, c = corners[:, 0], corners[:, 1], corners[:, 2]
        lo, hi = self._leaf_reduce(np.minimum(np.minimum(a, b), c), np.maximum(np.maximum(a, b), c))
        normal = np.cross(b - a, c - a)  # twice the area, so big triangles weigh more
        starts = self.tri_bounds[:-1]
        total = np.add.reduceat(normal, starts, axis=0)
        axis = _unit(total)
        length = np.sqrt((normal * normal).sum(axis=1))
        leaf_axis = np.repeat(axis, np.diff(self.tri_bounds), axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            cos = (normal * leaf_axis).sum(axis=1) / length
        cos = np.where(length > 0, cos, -1.0)  # a collapsed triangle bounds nothing
        half = np.arccos(np.clip(np.minimum.reduceat(cos, starts), -1.0, 1.0))
        half = np.where((axis * axis).sum(axis=1) > 0, half, np.pi)
        lo_all, hi_all = _up(lo, np.minimum), _up(hi, np.maximum)
        total_all = _up(total, np.add)
        axis_all = _unit(total_all)
        half_all = np.full(2 * self.leaf_base, np.pi)
        half_all[self.leaf_base :] = half
        for level in range(self.depth - 1, -1, -1):
            nodes = np.arange(1 << level, 2 << level)
            half_all[nodes] = _union_half(
                axis_all, half_all, 2 * nodes, 2 * nodes + 1, axis_all[nodes]
            )
        return lo_all, hi_all, axis_all, half_all


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
    out = np.zeros((2 * leaves,) + leaf_values.shape[1:], dtype=leaf_values.dtype)
    out[leaves:] = leaf_values
    width = leaves // 2
    while width:
        out[width : 2 * width] = combine(
            out[2 * width : 4 * width : 2], out[2 * width + 1 : 4 * width : 2]
        )
        width //= 2
    return out


def _unit(v: np.ndarray) -> np.ndarray:
    length = np.sqrt((v * v).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(length[:, None] > 0, v / length[:, None], 0.0)


def _union_half(
    axis: np.ndarray,
    half: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    joint: np.ndarray | None = None,
) -> np.ndarray:
    """A half-angle bounding the normals of nodes ``a`` and ``b`` together, about their
    joint axis (``joint``, default the normalised sum of their axes)."""
    if joint is None:
        joint = _unit(axis[a] + axis[b])
    ok = (joint * joint).sum(axis=1) > 0
    ang_a = np.arccos(np.clip((joint * axis[a]).sum(axis=1), -1.0, 1.0)) + half[a]
    ang_b = np.arccos(np.clip((joint * axis[b]).sum(axis=1), -1.0, 1.0)) + half[b]
    return np.where(ok, np.maximum(ang_a, ang_b), np.pi)
