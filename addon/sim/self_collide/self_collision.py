"""Self-collision: cloth points kept ``distance`` away from the cloth's own triangles.

Pairs are a point and a triangle that does not contain it; pairs closer than
``excluded_at_rest`` distances in the rest shape (the neighbouring triangles of a fine mesh)
are left out for good, or the cloth would push itself apart at rest (and a flat fine cloth
would carry thousands of useless pairs; ``rest_ring`` keeps those of a tight fold from
crossing). Each substep every candidate pair gets its closest point and a swept test as for
a collider surface (``collide/mesh_collider.py``): a point stays on the side of the triangle
it was on at the substep's start, and a point whose path crossed the triangle inside it is
put back on that side. The correction of a contact
moves the point and the triangle's three corners apart along the contact normal, shared by
inverse mass (a pinned point does not move) and by the barycentric weights of the closest
point, so the pair ends ``distance`` apart; contacts of one point are one (its earliest
crossing, else its nearest triangle), and corrections meeting at a point are averaged.

Candidates are found again when a point has moved more than a slack since they were found,
within the distance and twice the slack (both the point and the triangle may have moved by
the slack): ``patch_tree.PatchTree`` names the leaf patches where such pairs may be, without
enumerating the rest-shape neighbours of flat or merely wrinkled cloth; points of no
triangle are looked up in a grid of the triangles' boxes (``broad_phase.box_pairs``). A
small cloth (up to ``DENSE_PAIRS`` point-triangle pairs, a game cape) skips the tree: one
all-pairs pass against the triangles' bounding spheres finds the same pairs in a few large
numpy calls instead of the walk's hundreds of small ones.
"""

from __future__ import annotations

import numpy as np

from ..collide.broad_phase import box_pairs
from ..collide.candidates import Candidates
from ..collide.colliders import Collider, Scratch
from ..collide.scan_count import SCANS
from ..mesh.rows import take_columns
from ..mesh.triangle_geometry import closest_points, dot, inside_triangle, unit_normals
from ..model import ClothModel
from ..settings import SimSettings
from .all_pairs import RELATIVE_SURE, AllPairs, spheres
from .patch_tree import PatchTree
from .rest_ring import RestRing
from .slack import SLACK_MAX, cheapest_slack, farthest2, farthest_rigidly2, slack_for
from .tangles import TangleFinder

TINY_DISTANCE = 1e-9
# pairs closer than this at rest (in distances) are never candidates: the distance plus
# twice the largest slack, so a flat cloth, however fine, has no pairs until it folds
EXCLUDED_AT_REST = 1.0 + 2.0 * SLACK_MAX
# on a fine mesh (median edge at most FINE_EDGE distances) pairs closer than
# EXCLUDED_FINE distances at rest are left out, ramping down to EXCLUDED_AT_REST at
# COARSE_EDGE: a squeezed or wrinkled fine cloth then brings no rest-shape neighbours
# into reach (only a fold does), and what is left out lies within two distances of a
# fold's crest, across rows of small triangles the bend keeps from crossing; on a coarse
# mesh a pair one row across a tight fold still counts
EXCLUDED_FINE, FINE_EDGE, COARSE_EDGE = 4.0, 1.0 / 3.0, 0.5
# point-triangle pairs up to which the search is one all-pairs pass (``_dense_pairs_within``;
# 1 MB of rest mask, a few ms a query) rather than the patch tree's walk
DENSE_PAIRS = 1_000_000
# the all-pairs pass's halo reaches this many distances beyond a query's (``all_pairs``):
# later queries test its few thousand pairs, not the whole pass
HALO = 2.0


class SelfCollision(Collider):
    """Keeps a cloth from passing through itself; use as a collider of the XPBD solver."""

    friction: float | None = 0.0

    def __init__(
        self,
        triangles: np.ndarray,
        rest_positions: np.ndarray,
        inverse_masses: np.ndarray,
        distance: float = 0.015,
        dense: bool | None = None,
    ) -> None:
        """``dense``: search pairs by one all-pairs pass (True) or the patch tree (False);
        None picks by size (``DENSE_PAIRS``)."""
        rest = np.asarray(rest_positions, dtype=np.float64)
        tri = np.asarray(triangles)
        if tri.ndim != 2 or tri.shape[1] != 3 or not np.issubdtype(tri.dtype, np.integer):
            raise ValueError(f"self-collision triangles must be (T, 3) integers, got {tri.shape}")
        tri = tri.astype(np.int64)
        if tri.size and (tri.min() < 0 or tri.max() >= len(rest)):
            raise ValueError(f"self-collision triangle corner out of range 0..{len(rest) - 1}")
        self.triangles = np.ascontiguousarray(tri[_distinct(tri)])
        if not len(self.triangles):
            raise ValueError("self-collision needs a triangle with three distinct corners")
        self.distance = max(float(distance), 0.0) if np.isfinite(distance) else 0.0
        self.inv_mass = np.asarray(inverse_masses, dtype=np.float32)
        self.point_count = len(rest)
        self.rebuilds = 0
        self._pairs: Candidates | None = None
        self._slack = 0.0
        self._reached: np.ndarray | None = None  # the last query's pair distances, sorted
        self._tri_of: Candidates | None = None  # the pairs _tri_ids/_tri_slot belong to
        self._tri_ids = self._tri_slot = np.zeros(0, dtype=np.int64)
        self._both: tuple[list[np.ndarray], np.ndarray, np.ndarray] = (
            [],
            self._tri_ids,
            self._tri_ids,
        )
        self._ids = np.arange(len(rest))
        self._rest = np.ascontiguousarray(rest.T, dtype=np.float32)  # (3, N)
        self.tree = PatchTree(self.triangles, rest)
        self.tangles = TangleFinder(self.triangles, len(rest))
        self.tangled_points = 0  # points left out as gone through, at the last substep
        self._tangled: np.ndarray | None = None  # which points, at the last substep
        self.excluded = self.distance * excluded_at_rest(self.triangles, rest, self.distance)
        self.raw_pairs = 0  # point-triangle pairs the last query looked at (for benchmarks)
        self._rest_centre, self._rest_bound = spheres(
            self._rest, self.tree.triangles, self.excluded
        )
        if dense is None:
            dense = len(rest) * len(self.triangles) <= DENSE_PAIRS
        # (N, T): the point is no corner of the triangle and beyond the exclusion at rest
        self._all_pairs = (
            AllPairs(self._rest, self.triangles, self.excluded, HALO * self.distance)
            if dense
            else None
        )
        # the pairs left out at rest keep a thin distance and the swept test where the cloth
        # creases (a tight fold's rows do not cross); only where the exclusion reaches past
        # an edge: on a coarser mesh (a game cape) those pairs are adjacent triangles', which
        # pass through each other only if the cloth folds flat within one triangle
        self.ring: RestRing | None = None
        if self.excluded > median_edge(self.triangles, rest):
            self.ring = RestRing(self.tree, self.tangles.piece, rest, self.excluded)

    def _pairs_within(
        self, positions: np.ndarray, grow: float
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Pairs (point, triangle not containing it, not excluded) within ``grow`` of each
        other at ``positions`` ``(N, 3)``, in (point, triangle) order, and their distances.

        The patch tree names the leaf pairs where such pairs may be; their point-triangle
        pairs then go through the other leaf's box, the triangles' bounding spheres now and
        at rest (most pairs are decided there), the rest distance and the closest point."""
        if self._all_pairs is not None:
            return self._dense_pairs_within(positions, grow)
        tree = self.tree
        excluded = self.excluded
        ex2 = np.float32(excluded * excluded)
        leaf_a, leaf_b = tree.leaf_pairs(positions, grow, excluded)
        # both ways between two leaves, once within one
        other = leaf_a != leaf_b
        p_leaf = np.concatenate([leaf_a, leaf_b[other]])
        t_leaf = np.concatenate([leaf_b, leaf_a[other]])
        xs = np.ascontiguousarray(positions[:, :3].T, dtype=np.float32)  # (3, N)
        rest = self._rest
        # each point against the other leaf's box: near it now, and not all of it near at
        # rest; "sure" when all of the leaf is beyond the exclusion at rest (no rest test)
        sizes = np.diff(tree.point_bounds)[p_leaf]
        slot = np.repeat(tree.point_bounds[p_leaf] - np.cumsum(sizes) + sizes, sizes)
        slot += np.arange(slot.size)
        point = tree.points[slot]
        t_leaf = np.repeat(t_leaf, sizes)
        node = t_leaf + tree.leaf_base
        SCANS.self_point_leaf += int(point.size)
        keep = np.ones(point.size, dtype=bool)
        far = np.zeros(point.size, dtype=np.float32)
        near = np.zeros(point.size, dtype=np.float32)
        g = np.float32(grow)
        for k in range(3):  # float32 bounds: no float64 copies of the gathered columns
            c = xs[k].take(point)
            keep &= c >= (tree.lo[:, k] - g).astype(np.float32).take(node)
            keep &= c <= (tree.hi[:, k] + g).astype(np.float32).take(node)
            r = rest[k].take(point)
            below = r - tree.rest_lo[:, k].astype(np.float32).take(node)
            above = tree.rest_hi[:, k].astype(np.float32).take(node) - r
            span = np.maximum(below, above)
            far += span * span
            gap = np.maximum(np.maximum(-below, -above), 0.0)
            near += gap * gap
        keep &= far > ex2
        point, t_leaf, sure = point[keep], t_leaf[keep], near[keep] > ex2 * RELATIVE_SURE
        t0 = tree.tri_bounds[t_leaf]
        sizes = tree.tri_bounds[t_leaf + 1] - t0
        tri = np.repeat(t0 - np.cumsum(sizes) + sizes, sizes) + np.arange(int(sizes.sum()))
        point = np.repeat(point, sizes)
        sure = np.repeat(sure, sizes)
        if tree.loose.size:  # points of no triangle: against every triangle's box
            corners = positions[tree.triangles]
            found, hit = box_pairs(
                positions[tree.loose], corners.min(axis=1) - grow, corners.max(axis=1) + grow
            )
            point = np.concatenate([point, tree.loose[found]])
            tri = np.concatenate([tri, hit])
            sure = np.concatenate([sure, np.zeros(found.size, dtype=bool)])
        self.raw_pairs = int(point.size)
        SCANS.self_spheres += int(point.size)
        # bounding spheres of the triangles (centroid, farthest corner) now and at rest: a
        # pair beyond the reach of the sphere now is dropped, one within the exclusion of
        # the rest centroid is excluded, one beyond the exclusion of the rest sphere is far
        # at rest; only the rest between the two bounds at rest get their closest points
        centre, bound = spheres(xs, tree.triangles, grow)
        e2 = np.zeros(point.size, dtype=np.float32)
        r2 = np.zeros(point.size, dtype=np.float32)
        for k in range(3):
            e = np.take(xs[k], point) - np.take(centre[k], tri)
            e2 += e * e
            e = np.take(rest[k], point) - np.take(self._rest_centre[k], tri)
            r2 += e * e
        keep = (e2 < np.take(bound, tri)) & (sure | (r2 * np.float32(RELATIVE_SURE) >= ex2))
        point, tri, sure, r2 = point[keep], tri[keep], sure[keep], r2[keep]
        sure |= r2 > np.take(self._rest_bound, tri)
        corners = [np.take(tree.triangles[:, k], tri) for k in range(3)]
        # far enough apart at rest to count (nearer pairs would push a still cloth apart)
        mixed = np.flatnonzero(~sure)
        SCANS.self_closest += int(mixed.size)  # at rest
        if mixed.size:
            pm = point[mixed]
            cm = [corner[mixed] for corner in corners]
            own = (cm[0] != pm) & (cm[1] != pm) & (cm[2] != pm)
            pr = rest[:, pm]
            q, _, _ = closest_points(pr, *(rest[:, corner] for corner in cm))
            e = pr - q
            sure[mixed] = own & (dot(e, e) >= ex2)
        point, tri = point[sure], tri[sure]
        corners = [corner[sure] for corner in corners]
        return self._nearer(xs, point, tree.order[tri], corners, grow)

    def _nearer(
        self,
        xs: np.ndarray,
        point: np.ndarray,
        tri: np.ndarray,
        corners: list[np.ndarray],
        grow: float,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The pairs (``point``, ``tri`` with ``corners``) closer than ``grow`` at ``xs``
        ``(3, N)`` by their closest points, in (point, triangle) order, and their distances."""
        SCANS.self_closest += int(point.size)
        # columns by take (a 2-D fancy index of a few thousand columns costs 4x)
        p = xs.take(point, axis=1)
        q, _, _ = closest_points(p, *(xs.take(corner, axis=1) for corner in corners))
        e = p - q
        dist = np.sqrt(dot(e, e))
        keep = dist < grow
        SCANS.self_kept += int(keep.sum())
        point, tri, dist = point[keep], tri[keep], dist[keep]
        # in (point, triangle) order whatever the search's, so contacts sum in a fixed order
        order = np.argsort(point * len(self.triangles) + tri)
        return point[order], tri[order], dist[order]

    def _dense_pairs_within(
        self, positions: np.ndarray, grow: float
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``_pairs_within`` for a small cloth: every point against every triangle's
        bounding sphere in one (N, T) pass (or among the pairs of the last pass's halo),
        the pairs allowed at rest kept (``all_pairs``), then their closest points. Below
        ``DENSE_PAIRS`` this is a few large passes where the tree's walk is hundreds of
        small ones."""
        all_pairs = self._all_pairs
        assert all_pairs is not None
        xs = np.ascontiguousarray(positions[:, :3].T, dtype=np.float32)  # (3, N)
        point, tri = all_pairs.pairs(xs, grow)
        self.raw_pairs = all_pairs.tested
        SCANS.self_spheres += all_pairs.tested
        corners = [np.take(self.triangles[:, k], tri) for k in range(3)]
        return self._nearer(xs, point, tri, corners, grow)

    def begin_substep(self, t0: float, t1: float) -> None:
        """Nothing to interpolate: the triangles are the cloth's own."""

    def contacts(self, pos: np.ndarray, margin: float, scratch: Scratch | None = None) -> tuple:
        """Not a one-sided push: self-collision moves both ends (``resolve_positions``)."""
        raise NotImplementedError("self-collision resolves its own contacts")

    def resolve_positions(
        self,
        pos: np.ndarray,
        prev: np.ndarray,
        movable: np.ndarray,
        margin: float,
        friction: float,
        scratch: Scratch | None = None,
    ) -> int:
        """Push points and triangles apart (see the module), then put back the points that
        went through a triangle of their rest ring (``rest_ring``); returns the contact
        count."""
        d = self.distance
        if d <= 0.0 or not len(self.triangles):
            return 0
        self._tangled = None
        count = self._resolve_pairs(pos, prev, d)
        if self.ring is not None:
            count += self.ring.guard(pos, prev, self._tangled, self._apply, d)
        return count

    def _resolve_pairs(self, pos: np.ndarray, prev: np.ndarray, d: float) -> int:
        """The contacts of the candidate pairs (beyond the exclusion at rest)."""
        pairs = self._candidates(pos, prev, d)
        if pairs is None:
            return 0
        # the planes of the candidates' triangles only (each once), not of the whole cloth,
        # at the substep's end and start in one pass: rows ``pos`` then ``prev``
        if self._tri_of is not pairs:
            self._tri_ids, self._tri_slot = np.unique(pairs.tri, return_inverse=True)
            self._tri_of = pairs
            self._both = _both_ends(
                self.triangles[self._tri_ids], pairs.point, self._tri_slot, self.point_count
            )
        tri = self._tri_slot
        corner_rows, point_rows, tri_rows = self._both
        rows = np.concatenate([pos, prev])
        normals, offsets = _planes(rows, corner_rows)
        p10 = take_columns(rows, point_rows)
        s10 = dot(np.take(normals, tri_rows, axis=1), p10) - np.take(offsets, tri_rows)
        count = pairs.count
        p1, p0 = p10[:, :count], p10[:, count:]
        s1, s0 = s10[:count], s10[count:]
        n1 = np.take(normals, tri, axis=1)
        side = np.where(s0 >= 0, 1.0, -1.0).astype(np.float32)
        height = side * s1
        crossed = height < 0
        near = (height < d) | crossed
        # a part that went through the cloth is let back out: its pairs are left out
        tangled = self.tangles.tangled(pairs.point, pairs.tri, s0, prev, self.triangles)
        self.tangled_points = 0 if tangled is None else int(tangled.sum())
        self._tangled = tangled
        if tangled is not None:
            near &= ~tangled[pairs.point]
            for corner in pairs.corners:
                near &= ~tangled[corner]
        live = near.nonzero()[0]
        if not live.size:
            return 0
        ids = [corner[live] for corner in pairs.corners]
        c1 = [take_columns(pos, k) for k in ids]
        p = p1[:, live]
        q, bary, on_face = closest_points(p, *c1)
        e = p - q
        dist = np.sqrt(dot(e, e))
        normal_live = n1[:, live]
        side_live = side[live]
        h = height[live]
        flat = on_face | (dist <= TINY_DISTANCE)
        # beside an edge or a corner the side is ill-defined (a point near the plane beyond
        # an edge flips sides with the slightest turn): push apart along the feature
        proper = np.ones_like(flat)
        gap = np.where(flat, h, np.where(proper, dist, -dist))
        key = np.full(live.size, np.inf, dtype=np.float32)
        cross_at = crossed[live].nonzero()[0]
        if cross_at.size:
            c = live[cross_at]
            u = s0[c] / (s0[c] - s1[c])
            x = p0[:, c] + (p1[:, c] - p0[:, c]) * u
            corners = []
            for k in range(3):
                hi = c1[k][:, cross_at]
                lo = take_columns(prev, ids[k][cross_at])
                corners.append(lo + (hi - lo) * u)
            hit = inside_triangle(x, *corners)
            chosen = cross_at[hit]
            key[chosen] = u[hit] - 2.0
            gap[chosen] = h[chosen]
            flat[chosen] = True
        reached = (np.abs(gap) < d) & np.isinf(key)
        key[reached] = np.abs(gap[reached])
        every = np.full(pairs.count, np.inf, dtype=np.float32)
        every[live] = key
        best_pairs = pairs.best(every)
        if not best_pairs.size:
            return 0
        SCANS.self_contacts += int(best_pairs.size)
        b = np.searchsorted(live, best_pairs)
        normal = side_live[b] * normal_live[:, b]
        edge_like = ~flat[b]
        if edge_like.any():
            pick = b[edge_like]
            normal[:, edge_like] = e[:, pick] * (np.where(proper[pick], 1.0, -1.0) / dist[pick])
        depth = (d - gap[b]).astype(np.float32)
        crossed_best = key[b] < 0
        ids = [pairs.point[best_pairs]] + [corner[best_pairs] for corner in pairs.corners]
        weights = bary[:, b]
        # crossings first and on their own: averaged with nearby proximity pushes they would
        # leave the point on the wrong side; proximity contacts touching a point a crossing
        # moved wait for the next substep
        locked = self._apply(
            pos,
            [i[crossed_best] for i in ids],
            normal[:, crossed_best],
            depth[crossed_best],
            weights[:, crossed_best],
        )
        rest = ~crossed_best
        if locked is not None:
            rest &= ~(locked[ids[0]] | locked[ids[1]] | locked[ids[2]] | locked[ids[3]])
        self._apply(pos, [i[rest] for i in ids], normal[:, rest], depth[rest], weights[:, rest])
        return int(best_pairs.size)

    def _apply(
        self,
        pos: np.ndarray,
        ids: list[np.ndarray],
        normal: np.ndarray,
        depth: np.ndarray,
        weights: np.ndarray,
    ) -> np.ndarray | None:
        """Move each contact's point (``ids[0]``) along ``normal`` and its corners
        (``ids[1:]``, barycentric ``weights`` ``(3, k)``) against it, so the gap closes by
        ``depth``; corrections meeting at a point are averaged. Returns which points were
        moved ``(N,)`` bool, or None for no contact."""
        if not depth.size:
            return None
        w = self.inv_mass
        gains = [np.ones_like(depth)] + [-weights[k] for k in range(3)]
        inv = [w[i] for i in ids]
        denom = inv[0] + sum(g * g * wi for g, wi in zip(gains[1:], inv[1:], strict=True))
        with np.errstate(invalid="ignore", divide="ignore"):
            scale = np.where(denom > 0, depth / denom, 0.0).astype(np.float32)
        n = self.point_count
        all_ids = np.concatenate(ids)
        count = np.bincount(all_ids, minlength=n).astype(np.float32)
        moved = np.zeros((n, 3), dtype=np.float32)
        for axis in range(3):
            amounts = np.concatenate(
                [g * wi * scale * normal[axis] for g, wi in zip(gains, inv, strict=True)]
            )
            moved[:, axis] = np.bincount(all_ids, weights=amounts, minlength=n)
        touched = count.nonzero()[0]
        pos[touched, :3] += moved[touched] / count[touched, None]
        return count > 0

    def _candidates(self, pos: np.ndarray, prev: np.ndarray, d: float) -> Candidates | None:
        """All pairs found again once any point moved beyond the slack (a moved corner
        changes its triangle's pairs with points that stayed put). Only motion beyond the
        cloth's best-fit rigid motion counts: a turn or a shift changes no distance within
        it (a cape turning with the body keeps its pairs)."""
        pairs = self._pairs
        if pairs is not None and pairs.reach == d and pairs.built is not None:
            # standing still is a rigid motion too: the plain motion first (a few calls), the
            # best fit (an SVD, ~80 calls) only when that is beyond the slack
            slack2 = self._slack * self._slack
            moved = pos[:, :3] - pairs.built
            if farthest2(moved) <= slack2:
                return pairs if pairs.count else None
            # a shift is a rigid motion: the mean's taken out before the best fit's SVD
            if farthest2(moved - moved.mean(axis=0)) <= slack2:
                return pairs if pairs.count else None
            if farthest_rigidly2(pairs.built, pos[:, :3]) <= slack2:
                return pairs if pairs.count else None
        upper = slack_for(pos, prev, d)
        slack = cheapest_slack(upper, d, self._reached, self._slack, self.point_count)
        self._slack = slack
        pairs = self._pairs = Candidates(self.triangles, d)

        def query(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            positions = np.asarray(pos[:, :3], dtype=np.float64)
            point, tri, dist = self._pairs_within(positions, d + 2.0 * slack)
            keep = dist < d + 2.0 * slack
            self._reached = np.sort(dist[keep])
            return point[keep], tri[keep], np.full(ids.size, slack, dtype=np.float32)

        pairs.refresh(pos, None, self._ids, query)
        self.rebuilds += 1
        return pairs if pairs.count else None


def _distinct(tri: np.ndarray) -> np.ndarray:
    """Which triangles ``(T, 3)`` have three distinct corners ``(T,)``."""
    return (tri[:, 0] != tri[:, 1]) & (tri[:, 1] != tri[:, 2]) & (tri[:, 0] != tri[:, 2])


def median_edge(triangles: np.ndarray, rest: np.ndarray) -> float:
    """The median length of the triangles' edges at ``rest`` ``(N, 3)`` (0 for none)."""
    if not len(triangles):
        return 0.0
    corners = rest[triangles]
    return float(np.median(np.linalg.norm(corners - np.roll(corners, 1, axis=1), axis=2)))


def excluded_at_rest(triangles: np.ndarray, rest: np.ndarray, distance: float) -> float:
    """The rest distance (in ``distance`` units) within which pairs are left out, from the
    mesh's median edge (see ``EXCLUDED_FINE``)."""
    if not len(triangles) or distance <= 0.0:
        return EXCLUDED_AT_REST
    edge = median_edge(triangles, rest) / distance
    ramp = np.clip((COARSE_EDGE - edge) / (COARSE_EDGE - FINE_EDGE), 0.0, 1.0)
    return float(EXCLUDED_AT_REST + ramp * (EXCLUDED_FINE - EXCLUDED_AT_REST))


def _planes(rows: np.ndarray, corners: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Unit normals ``(3, T)`` and plane offsets ``(T,)`` of triangles whose corners are
    the rows ``corners`` (three ``(T,)`` ids) of ``rows``."""
    a, b, c = (take_columns(rows, k) for k in corners)
    normals = unit_normals(a, b, c)
    return normals, dot(normals, a)


def _both_ends(
    own: np.ndarray, point: np.ndarray, slot: np.ndarray, n: int
) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """Ids into ``pos`` and ``prev`` stacked (``n`` rows each) for ``_resolve_pairs``: the
    corners of the triangles ``own`` at the end then at the start, the pairs' points
    likewise, and the pairs' triangles (``slot`` among ``own``) among those planes."""
    corners = [np.concatenate([own[:, k], own[:, k] + n]) for k in range(3)]
    points = np.concatenate([point, point + n])
    return corners, points, np.concatenate([slot, slot + len(own)])


def self_collision_for(
    model: ClothModel, settings: SimSettings, triangles: np.ndarray | None, warnings: list[str]
) -> tuple[SelfCollision, ...]:
    """The self-collision the settings ask for, as a one-entry collider tuple (or none)."""
    if not settings.self_collision or settings.self_distance <= 0.0:
        return ()
    if settings.solver != "XPBD":
        warnings.append("self-collision needs the XPBD solver: off")
        return ()
    tri = None if triangles is None else np.asarray(triangles).reshape(-1, 3)
    if tri is None or not _distinct(tri).any():
        warnings.append("self-collision needs the cloth's triangles: off")
        return ()
    return (SelfCollision(tri, model.rest_world, model.inverse_masses, settings.self_distance),)
