"""Closed and open triangle meshes for the collision tests and benchmarks, and an independent
triangle-triangle intersection count (Moller-Trumbore on every edge against every triangle)."""

from __future__ import annotations

import numpy as np


def uv_sphere(
    rings: int, segments: int, radius: float = 1.0, centre: tuple[float, float, float] = (0, 0, 0)
) -> tuple[np.ndarray, np.ndarray]:
    """A closed UV sphere: vertices ``(V, 3)`` and outward (counter-clockwise) triangles."""
    theta = np.linspace(0.0, np.pi, rings + 1)[1:-1]
    phi = 2.0 * np.pi * np.arange(segments) / segments
    t, p = np.meshgrid(theta, phi, indexing="ij")
    ring = np.stack([np.sin(t) * np.cos(p), np.sin(t) * np.sin(p), np.cos(t)], axis=-1)
    verts = np.vstack([[0, 0, 1], ring.reshape(-1, 3), [0, 0, -1]]) * radius + np.asarray(centre)
    top, bottom = 0, len(verts) - 1

    def vid(r: int, s: np.ndarray) -> np.ndarray:
        return 1 + r * segments + s % segments

    s = np.arange(segments)
    tris = [np.stack([np.full(segments, top), vid(0, s), vid(0, s + 1)], axis=1)]
    for r in range(rings - 2):
        a, b, c, d = vid(r, s), vid(r, s + 1), vid(r + 1, s + 1), vid(r + 1, s)
        tris += [np.stack([a, d, c], axis=1), np.stack([a, c, b], axis=1)]
    r = rings - 2
    tris.append(np.stack([vid(r, s), np.full(segments, bottom), vid(r, s + 1)], axis=1))
    return verts, np.vstack(tris).astype(np.int64)


def grid_triangles(nx: int, ny: int) -> np.ndarray:
    """The triangles ``(2 (nx-1)(ny-1), 3)`` of ``grids.quad_grid``'s quads, split 0-1-2, 0-2-3."""
    i, j = np.meshgrid(np.arange(nx - 1), np.arange(ny - 1))
    v0 = (j * nx + i).ravel()
    v1, v2, v3 = v0 + 1, v0 + 1 + nx, v0 + nx
    return np.vstack([np.stack([v0, v1, v2], 1), np.stack([v0, v2, v3], 1)]).astype(np.int64)


def _segment_hits(
    p: np.ndarray, q: np.ndarray, a: np.ndarray, b: np.ndarray, c: np.ndarray
) -> np.ndarray:
    """Whether segment p-q crosses triangle a-b-c (rows of ``(k, 3)`` arrays), Moller-Trumbore,
    float64; a segment lying in the triangle's plane counts as not crossing."""
    d = q - p
    e1, e2 = b - a, c - a
    h = np.cross(d, e2)
    det = np.einsum("ij,ij->i", e1, h)
    ok = np.abs(det) > 1e-14
    inv = np.where(ok, 1.0 / np.where(ok, det, 1.0), 0.0)
    s = p - a
    u = inv * np.einsum("ij,ij->i", s, h)
    qv = np.cross(s, e1)
    v = inv * np.einsum("ij,ij->i", d, qv)
    t = inv * np.einsum("ij,ij->i", e2, qv)
    return ok & (u >= 0) & (v >= 0) & (u + v <= 1) & (t >= 0) & (t <= 1)


def intersecting_pairs(positions: np.ndarray, triangles: np.ndarray) -> int:
    """How many pairs of triangles sharing no vertex intersect (an edge of one crosses the
    other). Pairs whose boxes overlap (sweep along x: boxes sorted by their low x), then
    Moller-Trumbore on every edge; independent of the solver's code."""
    pos = np.asarray(positions, dtype=np.float64)
    tri = np.asarray(triangles)
    corners = pos[tri]
    lo, hi = corners.min(axis=1), corners.max(axis=1)
    order = np.argsort(lo[:, 0], kind="stable")
    lo_x = lo[order, 0]
    first = np.arange(len(tri)) + 1  # later boxes in the sorted order ...
    last = np.searchsorted(lo_x, hi[order, 0], side="right")  # ... starting before my end
    counts = np.maximum(last - first, 0)
    count = 0
    start = 0
    while start < len(tri):
        stop = start + 1
        budget = counts[start]
        while stop < len(tri) and budget + counts[stop] <= 2_000_000:
            budget += counts[stop]
            stop += 1
        rows = np.arange(start, stop)
        n = counts[rows]
        a_sorted = np.repeat(rows, n)
        b_sorted = np.repeat(first[rows] - (np.cumsum(n) - n), n) + np.arange(int(n.sum()))
        ii, jj = order[a_sorted], order[b_sorted]
        keep = ((lo[ii, 1:] <= hi[jj, 1:]) & (hi[ii, 1:] >= lo[jj, 1:])).all(axis=1)
        ii, jj = ii[keep], jj[keep]
        shared = (tri[ii][:, :, None] == tri[jj][:, None, :]).any(axis=(1, 2))
        ii, jj = ii[~shared], jj[~shared]
        hit = np.zeros(ii.size, dtype=bool)
        for one, other in ((ii, jj), (jj, ii)):
            ca, cb = corners[one], corners[other]
            for e0, e1 in ((0, 1), (1, 2), (2, 0)):
                hit |= _segment_hits(ca[:, e0], ca[:, e1], cb[:, 0], cb[:, 1], cb[:, 2])
        count += int(hit.sum())
        start = stop
    return count


def icosphere(
    level: int, radius: float = 1.0, centre: tuple[float, float, float] = (0, 0, 0)
) -> tuple[np.ndarray, np.ndarray]:
    """A closed sphere of ``20 * 4**level`` nearly equal triangles (a subdivided
    icosahedron), outward (counter-clockwise) winding."""
    g = (1.0 + 5.0**0.5) / 2.0
    verts = np.array(
        [[-1, g, 0], [1, g, 0], [-1, -g, 0], [1, -g, 0], [0, -1, g], [0, 1, g],
         [0, -1, -g], [0, 1, -g], [g, 0, -1], [g, 0, 1], [-g, 0, -1], [-g, 0, 1]], dtype=float
    )  # fmt: skip
    tris = np.array(
        [[0, 11, 5], [0, 5, 1], [0, 1, 7], [0, 7, 10], [0, 10, 11], [1, 5, 9], [5, 11, 4],
         [11, 10, 2], [10, 7, 6], [7, 1, 8], [3, 9, 4], [3, 4, 2], [3, 2, 6], [3, 6, 8],
         [3, 8, 9], [4, 9, 5], [2, 4, 11], [6, 2, 10], [8, 6, 7], [9, 8, 1]], dtype=np.int64
    )  # fmt: skip
    for _ in range(level):
        edges = np.sort(np.concatenate([tris[:, [0, 1]], tris[:, [1, 2]], tris[:, [2, 0]]]), 1)
        unique, inverse = np.unique(edges, axis=0, return_inverse=True)
        mids = len(verts) + inverse.reshape(3, -1)  # mid-vertex of edges 01, 12, 20
        verts = np.vstack([verts, verts[unique].mean(axis=1)])
        a, b, c = tris.T
        ab, bc, ca = mids
        tris = np.vstack(
            [np.stack(t, axis=1) for t in ((a, ab, ca), (b, bc, ab), (c, ca, bc), (ab, bc, ca))]
        )
    verts = verts / np.linalg.norm(verts, axis=1, keepdims=True)
    return verts * radius + np.asarray(centre, dtype=float), tris


def capsule(
    radius: float, length: float, rings: int = 16, segments: int = 24
) -> tuple[np.ndarray, np.ndarray]:
    """A closed capsule along x centred at the origin (a UV sphere whose halves are moved
    ``length / 2`` apart), outward (counter-clockwise) triangles."""
    verts, tris = uv_sphere(rings, segments, radius)
    verts = verts[:, [2, 0, 1]]  # the poles on the x axis (a cyclic swap keeps the winding)
    verts[:, 0] += np.where(verts[:, 0] > 0, length / 2, -length / 2)
    return verts, tris
