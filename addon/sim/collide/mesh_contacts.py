"""The narrow phase of a triangle-surface collider: from candidate point-triangle pairs,
each point's one contact over a substep (``MeshCollider.find``).

Every pair gets its closest point (closest feature: face, edge or vertex, whose normal is the
push direction) and a swept test: a point whose path crosses the triangle's plane inside the
triangle (both moving linearly over the substep) is pushed back to the side it came from,
whatever the distance it ended at. Each point takes its earliest crossing, else its nearest
triangle in reach.
"""

from __future__ import annotations

import numpy as np

from ..mesh.rows import take_columns
from ..mesh.triangle_geometry import closest_points, dot, inside_triangle
from .surface_pairs import AnchoredPairs
from .surface_pose import SurfacePose

TINY_DISTANCE = 1e-9
# triangles this close to a point's nearest one (squared distances: a share, and 1 um^2)
# tie for deciding its side
TIE_SHARE, TIE_SQUARED = 2e-3, 1e-12


def closest_contacts(
    pairs: AnchoredPairs,
    pos: np.ndarray,
    prev: np.ndarray | None,
    reach: float,
    limit: float,
    one_sided: bool,
    end: SurfacePose,
    start: SurfacePose,
    culled: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One contact per point of ``pairs`` in reach: ids ``(k,)``, outward normals ``(3, k)``,
    pushes ``(k,)`` and the surface's motion at the contact over the substep ``(3, k)``.

    ``end`` and ``start``: the surface's poses at the substep's end and start (the same
    object when it stands still); ``limit``: how far behind the surface a point is pushed
    out. Pairs whose point neither crossed the triangle's plane nor is within reach of both
    that plane and the triangle's bounding ball are dropped before the closest points.
    ``culled``: a still surface's pairs came from :func:`few_pairs`, which made its edge test.
    """
    dtype = pos.dtype
    tri = pairs.tri
    p1 = take_columns(pos, pairs.point).astype(np.float32, copy=False)
    planes = end.plane_columns(tri)
    n1 = planes[0:3]
    s1 = dot(n1, p1) - planes[3]
    p0 = p1 if prev is None else take_columns(prev, pairs.point).astype(np.float32)
    if prev is None:
        s0 = s1
    elif start is end:
        s0 = dot(n1, p0) - planes[3]
    else:
        planes0 = start.plane_columns(tri)
        s0 = dot(planes0[0:3], p0) - planes0[3]
    side = np.ones_like(s1) if one_sided else np.where(s0 >= 0, 1.0, -1.0).astype(s1.dtype)
    height = side * s1
    crossed = (side * s0 >= 0) & (height < 0)
    off_centre = p1 - planes[4:7]
    ball = planes[7] + np.float32(max(reach, limit))
    in_ball = dot(off_centre, off_centre) <= ball * ball
    live = (((height < reach) & (height > -limit) & in_ball) | crossed).nonzero()[0]
    p = p1[:, live]  # the live pairs' points at the end (and below, at the start), (3, k)
    p_start: np.ndarray | None = None
    if live.size and start is end and not culled:
        # a still surface: drop pairs whose path stays beyond an edge of the triangle by more
        # than the reach and the path (a large triangle's ball holds points over its
        # neighbour); they could not be nearer than a kept pair that makes a contact
        path = np.zeros(live.size, dtype=np.float32)
        p_start = p if prev is None else p0[:, live]
        if prev is not None:
            step = p - p_start
            path = np.sqrt(dot(step, step))
        near = ~end.beyond_edges(tri[live], p, p_start, _edge_margin(max(reach, limit), path))
        live, p = live[near], p[:, near]
        p_start = p if prev is None else p_start[:, near]
    if not live.size:
        return no_contacts(dtype)

    live_tri = tri[live]
    c1 = end.corner_columns(live_tri)
    c0 = c1 if start is end else start.corner_columns(live_tri)
    q, bary, on_face = closest_points(p, *c1)
    e = p - q
    dist = np.sqrt(dot(e, e))
    normal_live = n1[:, live]
    if one_sided or prev is None:
        side_live = side[live]
        h = height[live]
        crossed_live = crossed[live]
    else:  # a point's side of a two-sided surface: the same for all of its triangles
        if p_start is None:
            p_start = p0[:, live]
        side_live = _point_sides(pairs, live, p_start, c0, s0[live])
        h = side_live * s1[live]
        crossed_live = (side_live * s0[live] >= 0) & (h < 0)
    flat = on_face | (dist <= TINY_DISTANCE)
    # beside an edge or a corner: a one-sided surface's front is the normals' side; on a
    # two-sided one the side is ill-defined there (a point near the plane beyond an edge
    # flips sides with the slightest turn), so the push is along the feature, away
    proper = flat | (dot(e, normal_live) * side_live >= 0) | (not one_sided)
    gap = np.where(flat, h, np.where(proper, dist, -dist))
    key = np.full(live.size, np.inf, dtype=np.float32)
    cross_at = crossed_live.nonzero()[0]
    if cross_at.size:  # swept: where the path meets the moving plane, inside the triangle?
        c = live[cross_at]
        u = s0[c] / (s0[c] - s1[c])
        x = p0[:, c] + (p1[:, c] - p0[:, c]) * u
        corners = []
        for k in range(3):
            hi, lo = c1[k][:, cross_at], c0[k][:, cross_at]
            corners.append(lo + (hi - lo) * u)
        hit = inside_triangle(x, *corners)
        chosen = cross_at[hit]
        key[chosen] = u[hit] - 2.0  # the earliest crossing first
        gap[chosen] = h[chosen]  # back in front of the plane it crossed
        flat[chosen] = True
    reached = (gap < reach) & (gap > -limit) & np.isinf(key)
    key[reached] = np.abs(gap[reached])
    every = np.full(pairs.count, np.inf, dtype=np.float32)
    every[live] = key
    best_pairs = pairs.best(every)
    if not best_pairs.size:
        return no_contacts(dtype)
    b = np.searchsorted(live, best_pairs)
    normal = side_live[b] * normal_live[:, b]
    edge_like = ~flat[b]
    if edge_like.any():
        pick = b[edge_like]
        normal[:, edge_like] = e[:, pick] * (np.where(proper[pick], 1.0, -1.0) / dist[pick])
    push = (reach - gap[b]).astype(dtype)
    if start is end:
        motion = np.zeros((3, b.size), dtype=np.float32)
    else:
        w = bary[:, b]
        motion = sum((c1[k][:, b] - c0[k][:, b]) * w[k] for k in range(3))
    return pairs.point[best_pairs], normal.astype(dtype), push, motion.astype(dtype)


def few_pairs(
    pose: SurfacePose, pos: np.ndarray, prev: np.ndarray, ids: np.ndarray, reach: float
) -> tuple[np.ndarray, np.ndarray]:
    """The pairs (point, triangle), point-sorted, of points ``ids`` and a still surface of
    few triangles (a floor) whose path over the substep does not stay beyond a grown edge of
    the triangle by more than ``reach`` and the path: the still surface's edge test of
    :func:`closest_contacts`, the same arithmetic, made a triangle at a time before pairing
    (a point over a floor's quad is beyond the diagonal of one of its two triangles)."""
    p1 = take_columns(pos, ids).astype(np.float32, copy=False)
    p0 = take_columns(prev, ids).astype(np.float32)
    step = p1 - p0
    margin = _edge_margin(reach, np.sqrt(dot(step, step)))
    edges = pose.edge_planes
    near = np.empty((ids.size, len(edges)), dtype=bool)  # a row a point, as pairs are sorted
    for t, planes in enumerate(edges):
        far = np.zeros(ids.size, dtype=bool)
        for k in range(3):
            normal, offset = planes[4 * k : 4 * k + 3], planes[4 * k + 3] + margin
            far |= (dot(normal, p1) > offset) & (dot(normal, p0) > offset)
        near[:, t] = ~far
    point, tri = near.nonzero()
    return ids[point], tri.astype(np.int64)


def _edge_margin(reach: float, path: np.ndarray) -> np.ndarray:
    """How far beyond an edge a point's path must stay to be left out: the reach and the
    path, with a hundredth to spare for rounding."""
    return np.float32(1.01) * (np.float32(reach) + path) + np.float32(1e-6)


def _point_sides(
    pairs: AnchoredPairs,
    live: np.ndarray,
    p0: np.ndarray,
    c0: tuple[np.ndarray, np.ndarray, np.ndarray],
    s0: np.ndarray,
) -> np.ndarray:
    """Per live pair, the side of the surface its point started on: the side of the plane of
    the point's nearest live triangle at the start. A plane's own side misleads beyond the
    triangle's edges: a point outside a closed surface is behind the planes of faces it is
    not over, and would be pushed in through them. Nearest to an edge or a corner several
    triangles tie; the one whose plane the point is farthest from decides (the point under
    a box's edge lies on the side face's plane, so its sign there is rounding).

    A point whose live pairs all lie on one side of their planes (one pair, or a point well
    clear of an edge) takes that side, whichever pair decides: only points whose pairs
    disagree go through the closest points at the start (the demo cape's ~5 points a
    substep in reach of the walking body never did, over 42 frames)."""
    ahead = s0 >= 0
    sides = np.where(ahead, 1.0, -1.0).astype(s0.dtype)
    point = pairs.point[live]  # sorted: runs of one point's pairs
    differ = (point[1:] == point[:-1]) & (ahead[1:] != ahead[:-1])
    if not differ.any():
        return sides
    mixed = np.unique(point[1:][differ])
    some = np.isin(point, mixed).nonzero()[0]
    c0_some = (c0[0][:, some], c0[1][:, some], c0[2][:, some])
    sides[some] = _nearest_sides(pairs, live[some], p0[:, some], c0_some, s0[some])
    return sides


def _nearest_sides(
    pairs: AnchoredPairs,
    live: np.ndarray,
    p0: np.ndarray,
    c0: tuple[np.ndarray, np.ndarray, np.ndarray],
    s0: np.ndarray,
) -> np.ndarray:
    """:func:`_point_sides` for all the live pairs of some points: by the nearest triangle."""
    q0, _, _ = closest_points(p0, *c0)
    e0 = p0 - q0
    d2 = dot(e0, e0)
    key = np.full(pairs.count, np.inf, dtype=np.float32)
    key[live] = d2
    nearest = pairs.best(key)  # one pair a point with live pairs, sorted by point
    owner = np.searchsorted(pairs.point[nearest], pairs.point[live])
    closest = d2[np.searchsorted(live, nearest)][owner]
    tied = d2 <= closest * np.float32(1.0 + TIE_SHARE) + np.float32(TIE_SQUARED)
    key[:] = np.inf
    key[live[tied]] = -np.abs(s0[tied])
    deciding = pairs.best(key)  # again one pair a point, the same points
    sides = np.where(s0[np.searchsorted(live, deciding)] >= 0, 1.0, -1.0).astype(s0.dtype)
    return sides[owner]


def no_contacts(dtype: np.dtype) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    empty = np.zeros((3, 0), dtype=dtype)
    return np.zeros(0, dtype=np.int64), empty, np.zeros(0, dtype=dtype), empty.copy()
