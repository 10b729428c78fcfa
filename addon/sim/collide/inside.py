"""Cloth points inside a closed collider surface, and where they leave it.

Point contacts keep each cloth point on the side of a surface it started on, so a point that
starts inside a body (a cape whose rest shape goes through the knees) stays inside. For a
closed surface, inside is known exactly: the generalized winding number (the solid angles of
the triangles seen from the point, over 4 pi) is 1 inside and 0 outside, whatever the
triangles' winding, and for a closed surface whose vertices are split along seams too. A
point found inside is moved to its nearest surface point and ``reach`` beyond it.
"""

from __future__ import annotations

import numpy as np

from ..mesh.triangle_geometry import closest_points, cross, dot

PAIRS_PER_PASS = 1 << 15  # point-triangle pairs at once: the temporaries stay in the cache
INSIDE = 0.5  # winding number above which a point is inside


def closed_surface(vertices: np.ndarray, triangles: np.ndarray) -> bool:
    """Whether the triangles ``(T, 3)`` over ``vertices`` ``(V, 3)`` close a volume: with
    vertices at the same place taken as one (seams split them), every edge is shared by an
    even number of triangles."""
    tri = np.asarray(triangles, dtype=np.int64).reshape(-1, 3)
    if not tri.size:
        return False
    _, welded = np.unique(np.asarray(vertices, dtype=np.float64), axis=0, return_inverse=True)
    corners = welded.reshape(-1)[tri]
    edges = np.concatenate([corners[:, [0, 1]], corners[:, [1, 2]], corners[:, [2, 0]]])
    edges = edges[edges[:, 0] != edges[:, 1]]  # a collapsed edge bounds nothing
    edges.sort(axis=1)
    _, counts = np.unique(edges, axis=0, return_counts=True)
    return bool(counts.size) and bool(np.all(counts % 2 == 0))


def winding_numbers(points: np.ndarray, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Generalized winding number ``(P,)`` of each point ``(P, 3)`` for triangles with
    corners ``a``, ``b``, ``c`` ``(T, 3)`` (Van Oosterom and Strackee's solid angle), in
    float32 (far from 0.5 wherever a point is not on the surface) and summed in float64."""
    out = np.zeros(len(points))
    corners = [
        np.ascontiguousarray(np.asarray(x, dtype=np.float32).T)[:, None, :] for x in (a, b, c)
    ]
    at = np.asarray(points, dtype=np.float32)
    step = max(1, PAIRS_PER_PASS // max(len(a), 1))
    for first in range(0, len(at), step):
        p = at[first : first + step].T[:, :, None]  # (3, p, 1) against (3, 1, T)
        u, v, w = (x - p for x in corners)
        lu, lv, lw = (np.sqrt(dot(x, x)) for x in (u, v, w))
        det = dot(u, cross(v, w))
        den = lu * lv * lw + dot(u, v) * lw + dot(u, w) * lv + dot(v, w) * lu
        out[first : first + step] = np.arctan2(det, den).sum(axis=1, dtype=np.float64) / (2 * np.pi)
    return out


def way_out(
    points: np.ndarray, a: np.ndarray, b: np.ndarray, c: np.ndarray, reach: float
) -> np.ndarray:
    """Per point ``(P, 3)`` inside the surface: the place ``reach`` outside its nearest
    surface point, along the way from the point to it ``(P, 3)``."""
    points = np.asarray(points, dtype=np.float64)
    out = np.empty_like(points)
    corners = [np.asarray(x, dtype=np.float64).T for x in (a, b, c)]  # (3, T)
    for i, p in enumerate(points):
        q, _, _ = closest_points(np.repeat(p[:, None], len(a), axis=1), *corners)
        gap = q - p[:, None]
        d2 = dot(gap, gap)
        k = int(np.argmin(d2))
        if d2[k] > 1e-24:
            direction = gap[:, k] / np.sqrt(d2[k])
        else:  # on the surface: along the face's normal, to the side that is outside
            direction = cross(
                corners[1][:, k] - corners[0][:, k], corners[2][:, k] - corners[0][:, k]
            )
            direction /= max(float(np.sqrt(dot(direction, direction))), 1e-30)
            probe = (q[:, k] + direction * reach)[None]
            if abs(winding_numbers(probe, a, b, c)[0]) > INSIDE:
                direction = -direction
        out[i] = q[:, k] + direction * reach
    return out
