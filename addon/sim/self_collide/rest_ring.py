"""The pairs self-collision leaves out at rest, where the cloth creases.

Self-collision has no pairs closer than its exclusion at rest (``excluded_at_rest``): a still
or wrinkled fine cloth would push itself apart. Where the cloth folds over within a row or
two (a hem at its border, a tight pleat) those rows lie on each other unseen and pass through
each other. Here they get a thin distance of their own, ``RING_GAP`` distances but never more
than ``RING_SHARE`` of the pair's rest distance (a cloth squeezed to half its size still does
not push itself apart), and the swept test: a point whose path this substep went through such
a triangle (inside it, from one side of its plane to the other) is put back on the side it
came from, else a point nearer a triangle than the pair's distance is pushed off it.

Which pairs: two rows of a cloth come closer than half their rest distance, or through each
other, only where the cloth between them folds back; with rows far apart next to the thin
distance that takes a crease sharper than a right angle (two triangles sharing an edge with
normals more than 90 degrees apart). Each substep the leaves of the self-collision tree
(``patch_tree``) that hold a crease name their rings (every leaf within the exclusion at
rest); the points of those leaves are tested against the triangles of their ring whose box,
grown by the distance and how far the two moved apart this substep, holds the point at the
substep's end. A cloth without such a crease costs the triangles' normals and a test per
shared edge; a ring of two pieces of cloth, or one the rest shape already turns by more than
a right angle (a garment's fold), is always tested.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..mesh.triangle_geometry import closest_points, dot, inside_triangle, unit_normals
from .patch_tree import PatchTree

# a ring pair's distance, in self-collision distances, and at most this share of its rest
# distance
RING_GAP, RING_SHARE = 0.1, 0.5
# rest boxes this much (relative) beyond the exclusion still count as in the ring: a pair on
# the line belongs to both the ring and the distance pairs rather than to neither
RING_MARGIN = 1.01
# passes over the pairs a substep at most (see ``guard``)
RING_PASSES = 3
# the later passes look at the pairs the first found within this many thin distances
WATCH = 3.0

Apply = Callable[
    [np.ndarray, list[np.ndarray], np.ndarray, np.ndarray, np.ndarray], np.ndarray | None
]


class RestRing:
    """The leaf rings of ``tree`` (leaves within ``excluded`` of each other at rest) and the
    thin distance and swept test of their point-triangle pairs where the cloth creases
    (``guard``); ``piece`` ``(N,)``: each point's piece of cloth, ``rest`` ``(N, 3)``."""

    def __init__(
        self, tree: PatchTree, piece: np.ndarray, rest: np.ndarray, excluded: float
    ) -> None:
        self.tree = tree
        leaves = tree.leaf_base
        self.rest = np.ascontiguousarray(np.asarray(rest, dtype=np.float32).T)  # (3, N)
        self.bent_leaves = 0  # leaves whose points were tested at the last call (for tests)
        self.tested = 0  # point-triangle pairs looked at in the last call (for benchmarks)
        a, b = _ring_leaf_pairs(tree, excluded * RING_MARGIN)
        # both ways (a's points against b's triangles and b's against a's), by point leaf
        other = a != b
        src = np.concatenate([a, b[other]])
        dst = np.concatenate([b, a[other]])
        order = np.lexsort((dst, src))
        self.src, self.dst = src[order], dst[order]
        self.starts = np.searchsorted(self.src, np.arange(leaves + 1))
        tri_leaf = np.repeat(np.arange(leaves), np.diff(tree.tri_bounds))
        self.tri_leaf = tri_leaf
        # the triangle pairs sharing an edge (tree order), for the creases
        tri = tree.triangles
        edge = np.sort(np.concatenate([tri[:, [0, 1]], tri[:, [1, 2]], tri[:, [2, 0]]]), axis=1)
        key = edge[:, 0] * max(len(rest), 1) + edge[:, 1]
        owner = np.tile(np.arange(len(tri)), 3)
        by_key = np.argsort(key, kind="stable")
        twin = np.flatnonzero(key[by_key][1:] == key[by_key][:-1])
        self.edge_a, self.edge_b = owner[by_key][twin], owner[by_key][twin + 1]
        # a ring of more than one piece of cloth (two sheets near at rest) may cross without
        # a crease: its leaves are always tested
        big = np.iinfo(np.int64).max
        low, high = np.full(leaves, big), np.full(leaves, -1)
        corner_leaf = np.repeat(tri_leaf, 3)
        np.minimum.at(low, corner_leaf, piece[tri.reshape(-1)])
        np.maximum.at(high, corner_leaf, piece[tri.reshape(-1)])
        ring_low, ring_high = np.full(leaves, big), np.full(leaves, -1)
        np.minimum.at(ring_low, self.src, low[self.dst])
        np.maximum.at(ring_high, self.src, high[self.dst])
        mixed = (ring_low != ring_high) & (ring_high >= 0)
        # a ring the rest shape already turns by more than a right angle (a garment's fold):
        # its layers can meet without a new crease, so its leaves are always tested too
        corners = np.asarray(rest, dtype=np.float64)[tri]
        normal = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
        axis = np.add.reduceat(normal, tree.tri_bounds[:-1], axis=0)
        axis /= np.maximum(np.linalg.norm(axis, axis=1, keepdims=True), 1e-300)
        turned = (axis[self.src] * axis[self.dst]).sum(axis=1) < 0.0
        self.always = mixed | (np.bincount(self.src[turned], minlength=leaves) > 0)

    def guard(
        self,
        pos: np.ndarray,
        prev: np.ndarray,
        skip: np.ndarray | None,
        apply: Apply,
        distance: float,
    ) -> int:
        """Keep the ring pairs of creased leaves apart (see the module) from ``prev`` to
        ``pos`` (``(N, 4)`` or ``(N, 3)``; ``pos`` is moved); ``skip`` ``(N,)`` bool: points
        left out (gone through, see ``tangles``); ``apply`` moves a contact's point and
        triangle (``SelfCollision._apply``); ``distance``: self-collision's. Returns the
        contact count."""
        self.bent_leaves = self.tested = 0
        tree = self.tree
        if not len(tree.triangles) or not self.src.size or distance <= 0.0:
            return 0
        x1 = np.ascontiguousarray(pos[:, :3].T, dtype=np.float32)
        c = tree.corner_ids
        corner = [[x1[k].take(ids) for ids in c] for k in range(3)]
        bent = self._bent(corner)
        self.bent_leaves = int(bent.sum())
        if not bent.any():
            return 0
        x0 = np.ascontiguousarray(prev[:, :3].T, dtype=np.float32)
        gap = RING_GAP * distance
        # how far each point moved apart from the cloth's mean motion this substep
        motion = x1 - x0
        motion -= motion.mean(axis=1, keepdims=True)
        apart = np.sqrt(dot(motion, motion))
        tri_apart = np.maximum(np.maximum(apart.take(c[0]), apart.take(c[1])), apart.take(c[2]))
        starts = tree.tri_bounds[:-1]
        leaf_apart = np.maximum.reduceat(tri_apart, starts)
        lo, hi = [], []
        for k in range(3):
            at = corner[k]
            lo.append(np.minimum.reduceat(np.minimum(np.minimum(at[0], at[1]), at[2]), starts))
            hi.append(np.maximum.reduceat(np.maximum(np.maximum(at[0], at[1]), at[2]), starts))
        # the bent leaves' ring entries, then each point of the leaf against the entry's box
        leaf = np.flatnonzero(bent)
        sizes = self.starts[leaf + 1] - self.starts[leaf]
        entry = np.repeat(self.starts[leaf] - np.cumsum(sizes) + sizes, sizes)
        entry += np.arange(entry.size)
        src, dst = self.src[entry], self.dst[entry]
        sizes = tree.point_bounds[src + 1] - tree.point_bounds[src]
        slot = np.repeat(tree.point_bounds[src] - np.cumsum(sizes) + sizes, sizes)
        slot += np.arange(slot.size)
        point = tree.points[slot]
        dst = np.repeat(dst, sizes)
        grow = apart.take(point) + leaf_apart.take(dst) + np.float32(gap)
        keep = np.ones(point.size, dtype=bool)
        for k in range(3):
            p = x1[k].take(point)
            keep &= p >= lo[k].take(dst) - grow
            keep &= p <= hi[k].take(dst) + grow
        point, dst = point[keep], dst[keep]
        t0 = tree.tri_bounds[dst]
        sizes = tree.tri_bounds[dst + 1] - t0
        tri = np.repeat(t0 - np.cumsum(sizes) + sizes, sizes) + np.arange(int(sizes.sum()))
        point = np.repeat(point, sizes)
        ids = [c[k].take(tri) for k in range(3)]
        keep = (ids[0] != point) & (ids[1] != point) & (ids[2] != point)
        if skip is not None:
            keep &= ~(skip[point] | skip[ids[0]] | skip[ids[1]] | skip[ids[2]])
        point = point[keep]
        ids = [i[keep] for i in ids]
        self.tested = int(point.size)
        if not point.size:
            return 0
        # a put-back moves the triangle's corners and averages at shared points, which can
        # take a neighbouring pair through: the same pairs again while crossings are found
        # (only the pairs the first pass found within a few thin distances of the plane: a
        # put-back moves points by about that much)
        total = 0
        for turn in range(RING_PASSES):
            if turn:
                x1 = np.ascontiguousarray(pos[:, :3].T, dtype=np.float32)
            contacts, crossings, watch = self._resolve(pos, x0, x1, point, ids, apply, gap)
            total += contacts
            if not crossings:
                break
            point, ids = point[watch], [i[watch] for i in ids]
        return total

    def _bent(self, corner: list[list[np.ndarray]]) -> np.ndarray:
        """Per leaf ``(L,)``: whether a leaf of its ring holds a crease (or it is always
        tested: its ring spans more than one piece or turns at rest); ``corner[k][j]``: the
        ``k`` coordinates of the triangles' ``j`` corners, in tree order."""
        tree = self.tree
        e1 = [corner[k][1] - corner[k][0] for k in range(3)]
        e2 = [corner[k][2] - corner[k][0] for k in range(3)]
        normal = np.stack(
            [
                e1[1] * e2[2] - e1[2] * e2[1],
                e1[2] * e2[0] - e1[0] * e2[2],
                e1[0] * e2[1] - e1[1] * e2[0],
            ]
        )
        # more than a right angle apart: the sign of the dot of the normals, whatever their
        # lengths
        bend = dot(_columns(normal, self.edge_a), _columns(normal, self.edge_b))
        sharp = np.flatnonzero(bend < 0)
        creased = np.zeros(tree.leaf_base, dtype=bool)
        creased[self.tri_leaf[self.edge_a[sharp]]] = True
        creased[self.tri_leaf[self.edge_b[sharp]]] = True
        # the ring relation is symmetric: the leaves whose ring holds a creased leaf are the
        # creased leaves' rings
        leaf = np.flatnonzero(creased)
        sizes = self.starts[leaf + 1] - self.starts[leaf]
        entry = np.repeat(self.starts[leaf] - np.cumsum(sizes) + sizes, sizes)
        entry += np.arange(entry.size)
        bent = self.always.copy()
        bent[self.dst[entry]] = True
        return bent

    def _resolve(
        self,
        pos: np.ndarray,
        x0: np.ndarray,
        x1: np.ndarray,
        point: np.ndarray,
        ids: list[np.ndarray],
        apply: Apply,
        gap: float,
    ) -> tuple[int, int, np.ndarray]:
        """The pairs (``point``, corners ``ids``): each point's earliest crossing is put
        back, else its nearest pair closer than the pair's distance pushed apart. Returns
        the contact count, how many of them were crossings and which pairs were near the
        plane (``WATCH`` thin distances) or across it."""
        p0, p1 = _columns(x0, point), _columns(x1, point)
        a0, b0, c0 = (_columns(x0, i) for i in ids)
        a1, b1, c1 = (_columns(x1, i) for i in ids)
        n1 = unit_normals(a1, b1, c1)
        s0 = dot(unit_normals(a0, b0, c0), p0 - a0)
        s1 = dot(n1, p1 - a1)
        side = np.where(s0 >= 0, 1.0, -1.0).astype(np.float32)
        key = np.full(point.size, np.inf, dtype=np.float32)
        height = side * s1
        watch = height < WATCH * gap
        crossed = np.flatnonzero(height < 0)
        if crossed.size:
            s0c, s1c = s0[crossed], s1[crossed]
            u = s0c / (s0c - s1c)
            x = p0[:, crossed] + (p1[:, crossed] - p0[:, crossed]) * u
            at = [lo[:, crossed] + (hi[:, crossed] - lo[:, crossed]) * u
                  for lo, hi in ((a0, a1), (b0, b1), (c0, c1))]  # fmt: skip
            hit = inside_triangle(x, *at)
            key[crossed[hit]] = u[hit] - 2.0
        # the rest: nearer than the thin distance now (a box test first)
        near = np.flatnonzero(np.isinf(key) & (np.abs(s1) < gap))
        q, bary, on_face = closest_points(p1[:, near], a1[:, near], b1[:, near], c1[:, near])
        e = p1[:, near] - q
        dist = np.sqrt(dot(e, e))
        close = dist < gap
        near, dist = near[close], dist[close]
        key[near] = dist
        chosen = np.flatnonzero(np.isfinite(key))
        if not chosen.size:
            return 0, 0, watch
        # each point's earliest crossing, else its nearest triangle
        order = np.lexsort((key[chosen], point[chosen]))
        chosen = chosen[order]
        first = np.ones(chosen.size, dtype=bool)
        first[1:] = point[chosen][1:] != point[chosen][:-1]
        chosen = chosen[first]
        p, a, b, c = p1[:, chosen], a1[:, chosen], b1[:, chosen], c1[:, chosen]
        q, bary, on_face = closest_points(p, a, b, c)
        e = p - q
        dist = np.sqrt(dot(e, e))
        # the pair's own distance: the thin one, at most its share of the rest distance
        rest = self.rest
        moved = [point[chosen]] + [i[chosen] for i in ids]
        r = _columns(rest, moved[0])
        qr, _, _ = closest_points(r, *(_columns(rest, i) for i in moved[1:]))
        er = r - qr
        target = np.minimum(np.float32(gap), np.float32(RING_SHARE) * np.sqrt(dot(er, er)))
        was_crossing = key[chosen] < 0
        flat = on_face | was_crossing | (dist <= 0)
        height = height[chosen]
        normal = side[chosen] * n1[:, chosen]
        with np.errstate(invalid="ignore", divide="ignore"):
            normal = np.where(flat, normal, e / np.where(dist > 0, dist, 1.0))
        depth = (target - np.where(flat, height, dist)).astype(np.float32)
        push = depth > 0
        # crossings first and on their own, as the distance pairs (``SelfCollision``)
        first_pass = was_crossing & push
        locked = apply(
            pos, [m[first_pass] for m in moved], normal[:, first_pass], depth[first_pass],
            bary[:, first_pass],
        )  # fmt: skip
        rest_pass = push & ~was_crossing
        if locked is not None:
            for m in moved:
                rest_pass &= ~locked[m]
        apply(
            pos, [m[rest_pass] for m in moved], normal[:, rest_pass], depth[rest_pass],
            bary[:, rest_pass],
        )  # fmt: skip
        crossings = int(first_pass.sum())
        return crossings + int(rest_pass.sum()), crossings, watch


def _columns(x: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """``x[:, ids]`` of a ``(3, N)`` block, one coordinate at a time (a take of a contiguous
    row is several times faster than a two-dimensional fancy index)."""
    return np.stack([x[0].take(ids), x[1].take(ids), x[2].take(ids)])


def _ring_leaf_pairs(tree: PatchTree, within: float) -> tuple[np.ndarray, np.ndarray]:
    """Leaf pairs ``(a, b)`` (``a <= b``) whose rest boxes are less than ``within`` apart:
    the tree's node pairs walked from the root down, dropped when their rest boxes are
    that far apart."""
    empty = np.zeros(0, dtype=np.int64)
    if not len(tree.triangles):
        return empty, empty
    lo, hi = tree.rest_lo, tree.rest_hi
    a = b = np.ones(1, dtype=np.int64)
    w2 = within * within
    while True:
        gap = np.maximum(np.maximum(lo[a] - hi[b], lo[b] - hi[a]), 0.0)
        keep = (gap * gap).sum(axis=1) < w2
        a, b = a[keep], b[keep]
        if not a.size:
            return empty, empty
        if a[0] >= tree.leaf_base:
            return a - tree.leaf_base, b - tree.leaf_base
        same = a == b
        sa, ca, cb = a[same], a[~same], b[~same]
        a = np.concatenate([2 * sa, 2 * sa + 1, 2 * sa, 2 * ca, 2 * ca, 2 * ca + 1, 2 * ca + 1])
        b = np.concatenate([2 * sa, 2 * sa + 1, 2 * sa + 1, 2 * cb, 2 * cb + 1, 2 * cb, 2 * cb + 1])
