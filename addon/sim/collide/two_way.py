"""Two-way contact for coarse cloth: a surface collider's vertices push the cloth's triangles.

Point contacts keep the cloth's points out of a surface; a coarse cloth (a 6 x 6 cape) still
lets a body's vertices through between its points, and the body shows through. Here each
collider vertex whose projection falls on a cloth triangle is kept ``reach`` (the collider's
outer thickness plus the margin) on its side of that triangle: the triangle's three points
move along its normal by their barycentric weights and inverse masses (the collider is
kinematic), and the corrections meeting at a point are averaged.

The side a vertex is kept on:

- the side away from where the surface's normal at the vertex points (the cloth lies in
  front of the body) when the vertex started the substep there, or behind the triangle by
  less than ``depth`` (``max(inner, DEPTH * reach)``, the vertex's normal not along the
  triangle's plane): a crossing the cloth started with (a knee through a cape at rest) is
  worked out, at most ``WORK_STEP`` reaches a substep;
- else the side it started the substep on (a vertex deeper behind, such as the near side
  of an arm lying on a sheet, is the far side of something thin: the sheet stays below it).

A vertex that crossed a triangle during the substep (inside it where the two met, both
moving linearly) is put back on the side it came from, however deep it went.

Only coarse triangles take part: one whose circumradius is below the reach has every point
within the reach of a corner, so no vertex gets through it while its corners keep the reach;
up to ``COARSE`` reaches a vertex gets through by less than a reach, and the candidates'
cost is not worth it (the demo's 19 x 27 cape, 1.0 to 1.7 reaches, then cost 230 ms a frame
on a loaded 2-core machine, more than the rest of the frame; the bench's 100 x 100 cape is
finer still; a 6 x 6 cape of the same size is some 6 reaches).

Candidates (vertex, triangle) come from a grid of the triangles' boxes grown by the reach,
the depth, a slack and the farthest vertex travel over a window of the frame; they hold
until the window ends, the surface is posed again or a cloth point moves beyond the slack.
Each substep checks every candidate exactly, so the contacts do not depend on when the
candidates were found (a ``World`` merging several cloths gives each what it gets alone).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..mesh.triangle_geometry import closest_points, cross, dot
from .broad_phase import BoxGrid
from .colliders import Collider, friction_of
from .inside import INSIDE, way_out, winding_numbers
from .mesh_collider import MeshCollider

COARSE = 2.0  # triangles of a circumradius at rest below this many reaches take no part
DEPTH = 3.0  # crossings the cloth started with are worked out up to this many reaches deep
WORK_STEP = 0.5  # a started crossing moves the triangle at most this many reaches a substep
ALIGN = 0.3  # ... when the vertex's normal is at least this much along the triangle's
SLACK = 1.0  # cloth points may move this many reaches before the candidates are found again
WINDOW = 0.25  # candidates are found for this much of a frame at most
FOOTPRINT = 1e-3  # barycentric tolerance of "the projection falls on the triangle"


def cloth_triangles(face_sizes: np.ndarray, face_corners: np.ndarray) -> np.ndarray:
    """Fan triangles ``(T, 3)`` int64 of polygons (sizes ``(F,)``, corners ``(C,)``)."""
    sizes = np.asarray(face_sizes, dtype=np.int64)
    corners = np.asarray(face_corners, dtype=np.int64)
    if not sizes.size:
        return np.zeros((0, 3), dtype=np.int64)
    starts = np.cumsum(sizes) - sizes
    fans = np.maximum(sizes - 2, 0)
    face = np.repeat(np.arange(sizes.size), fans)
    k = np.arange(face.size) - np.repeat(np.cumsum(fans) - fans, fans)
    first = corners[starts[face]]
    tri = np.stack([first, corners[starts[face] + k + 1], corners[starts[face] + k + 2]], 1)
    distinct = (tri[:, 0] != tri[:, 1]) & (tri[:, 1] != tri[:, 2]) & (tri[:, 0] != tri[:, 2])
    return np.ascontiguousarray(tri[distinct])


def circumradii(points: np.ndarray, tri: np.ndarray) -> np.ndarray:
    """Circumradius ``(T,)`` of each triangle (inf for a degenerate one)."""
    a, b, c = (points[tri[:, k]] for k in range(3))
    la = np.linalg.norm(b - c, axis=1)
    lb = np.linalg.norm(c - a, axis=1)
    lc = np.linalg.norm(a - b, axis=1)
    area2 = np.linalg.norm(np.cross(b - a, c - a), axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = la * lb * lc / (2.0 * area2)
    return np.where(area2 > 0, r, np.inf)


def vertex_normals(vertices: np.ndarray, tri: np.ndarray) -> np.ndarray:
    """Area-weighted unit vertex normals ``(V, 3)`` float32 (counter-clockwise = front)."""
    a, b, c = (vertices[tri[:, k]] for k in range(3))
    face = np.cross(b - a, c - a)
    out = np.zeros((len(vertices), 3))
    for axis in range(3):
        w = np.repeat(face[:, axis], 3)
        out[:, axis] = np.bincount(tri.ravel(), weights=w, minlength=len(vertices))
    length = np.linalg.norm(out, axis=1, keepdims=True)
    out /= np.where(length > 0, length, 1.0)
    return out.astype(np.float32)


@dataclass
class _Candidates:
    """Candidate pairs for one collider and one set of cloth triangles."""

    collider: MeshCollider
    poses: int
    reach: float
    vert: np.ndarray  # (k,) collider vertex ids
    tri: np.ndarray  # (k,) cloth triangle ids
    ends: float  # the window's end (fraction of the frame)
    rows: np.ndarray  # the cloth points of the triangles taken part
    anchor: np.ndarray  # (m, 4) their positions when found
    slack: float
    subset: np.ndarray | None  # the ``rows`` they were found for (held: its id is the key)
    verts: np.ndarray  # the distinct vertices and triangles of the pairs, and each pair's
    vert_at: np.ndarray  # place among them
    tris: np.ndarray
    tri_at: np.ndarray


class TwoWay:
    """Collider vertices against a cloth's triangles ``(T, 3)`` (rows of the solver's
    state), pushing the cloth; see the module."""

    def __init__(self, triangles: np.ndarray, rest: np.ndarray, inv_mass: np.ndarray) -> None:
        self.triangles = np.ascontiguousarray(triangles, dtype=np.int64).reshape(-1, 3)
        self.radius = circumradii(np.asarray(rest, dtype=np.float64), self.triangles)
        self.inv_mass = np.asarray(inv_mass, dtype=np.float32)
        self.free = self.inv_mass[self.triangles].max(axis=1, initial=0.0) > 0
        self._candidates: dict[tuple[int, int], _Candidates] = {}
        self._normals: dict[int, tuple[MeshCollider, int, np.ndarray]] = {}
        self.queries = 0  # candidate searches so far (for tests and benchmarks)
        self.contacts = 0  # contacts of the last substep
        self.left_inside = 0  # points moved out of a closed collider so far (``inside.py``)

    def __getstate__(self) -> dict[str, object]:
        """Pickled for a helper process without the candidates (found there anew)."""
        state = dict(self.__dict__)
        state["_candidates"], state["_normals"] = {}, {}
        return state

    @property
    def active(self) -> bool:
        return bool(self.triangles.size)

    def resolve(
        self,
        colliders: Sequence[Collider],
        pos: np.ndarray,
        prev: np.ndarray,
        margin: float,
        friction: float,
        rows: np.ndarray | None = None,
        key: int = 0,
    ) -> int:
        """Push the cloth's triangles off the vertices of the surface colliders among
        ``colliders`` (``pos`` and ``prev``: the ``(N, 4)`` state at the substep's end and
        start), with Coulomb friction on the triangles' slip past the vertices (the collider's,
        else ``friction``). ``rows`` ``(N,)`` bool: only triangles with a point flagged take part;
        ``key`` tells such subsets apart. Returns the number of contacts."""
        total = 0
        for collider in colliders:
            surface = collider.surface()
            if surface is not None:
                mu = friction_of(surface.friction, friction)
                total += self._resolve(surface, pos, prev, margin, mu, rows, key)
        self.contacts = total
        return total

    # ------------------------------------------------------------------------------------

    def _leave_inside(
        self,
        collider: MeshCollider,
        pos: np.ndarray,
        prev: np.ndarray,
        vertices: np.ndarray,
        reach: float,
        rows: np.ndarray | None,
    ) -> None:
        """Free points of the coarse triangles that start the frame inside the closed
        ``collider`` (at ``vertices``) go ``reach`` beyond its nearest surface point, start
        and end of the substep alike (their velocity kept); point contacts keep points on
        the side they start on, so one inside would stay there."""
        ids = np.unique(self.triangles[self._taking_part(reach, rows)])
        ids = ids[self.inv_mass[ids] > 0]
        if not ids.size or not len(vertices):
            return
        at = prev[ids, :3].astype(np.float64)
        near = np.all((at >= vertices.min(axis=0)) & (at <= vertices.max(axis=0)), axis=1)
        ids, at = ids[near], at[near]
        if not ids.size:
            return
        a, b, c = (vertices[collider.triangles[:, k]] for k in range(3))
        inside = np.abs(winding_numbers(at, a, b, c)) > INSIDE
        if not inside.any():
            return
        ids, at = ids[inside], at[inside]
        shift = (way_out(at, a, b, c, reach) - at).astype(np.float32)
        prev[ids, :3] += shift
        pos[ids, :3] += shift
        self.left_inside += int(ids.size)

    def _taking_part(self, reach: float, rows: np.ndarray | None) -> np.ndarray:
        keep = self.free & (self.radius >= COARSE * reach)
        if rows is not None:
            keep &= rows[self.triangles].any(axis=1)
        return np.flatnonzero(keep)

    def _resolve(
        self,
        collider: MeshCollider,
        pos: np.ndarray,
        prev: np.ndarray,
        margin: float,
        mu: float,
        rows: np.ndarray | None,
        key: int,
    ) -> int:
        reach = collider.outer + max(float(margin), 0.0)
        depth = max(collider.inner, DEPTH * reach)
        start, end, t0, t1 = collider.vertex_path()
        if t0 == 0.0 and collider.closed:  # a frame's first substep
            self._leave_inside(collider, pos, prev, start, reach, rows)
        found = self._candidates.get((id(collider), key))
        if not self._valid(found, collider, reach, pos, t1, rows):
            tris = self._taking_part(reach, rows)
            if not tris.size:
                self._candidates.pop((id(collider), key), None)
                return 0
            found = self._find(collider, tris, pos, prev, start, end, t0, reach, depth, rows)
            self._candidates[(id(collider), key)] = found
        assert found is not None
        if not found.vert.size:
            return 0
        return self._push(collider, found, pos, prev, (start, end, t0, t1), reach, depth, mu)

    def _valid(
        self,
        found: _Candidates | None,
        collider: MeshCollider,
        reach: float,
        pos: np.ndarray,
        t1: float,
        rows: np.ndarray | None,
    ) -> bool:
        if found is None or found.collider is not collider or found.subset is not rows:
            return False
        if found.poses != collider.poses:
            return False
        if found.reach != reach or t1 > found.ends + 1e-9:
            return False
        if not found.rows.size:
            return True
        moved = np.abs(pos[found.rows] - found.anchor).max()
        return bool(moved <= found.slack)

    def _find(
        self,
        collider: MeshCollider,
        tris: np.ndarray,
        pos: np.ndarray,
        prev: np.ndarray,
        start: np.ndarray,
        end: np.ndarray,
        t0: float,
        reach: float,
        depth: float,
        rows: np.ndarray | None,
    ) -> _Candidates:
        """Pairs of a vertex and a triangle that may meet until the window ends."""
        self.queries += 1
        ends = min(t0 + WINDOW, 1.0)
        v_start = start + (end - start) * t0
        v_end = start + (end - start) * ends
        travel = float(np.abs(v_end - v_start).max(initial=0.0))
        slack = SLACK * reach
        grow = max(reach, depth) + slack + travel + 1e-4
        corners = self.triangles[tris]
        lo = np.full((tris.size, 3), np.inf)
        hi = np.full((tris.size, 3), -np.inf)
        for state in (pos, prev):  # this substep's path, then within the slack of ``pos``
            for k in range(3):
                p = state[corners[:, k], :3].astype(np.float64)
                np.minimum(lo, p, out=lo)
                np.maximum(hi, p, out=hi)
        lo -= grow
        hi += grow
        point, box = BoxGrid(lo, hi).query(v_start)
        # then by distance: the vertex may come within ``max(reach, depth)`` of the triangle
        # while it travels, the triangle's points stay within the slack (per axis) and
        # this substep's own motion, from ``pos``, is covered
        step = float(np.abs(pos[corners.ravel()] - prev[corners.ravel()]).max(initial=0.0))
        limit = max(reach, depth) + np.sqrt(3.0) * (slack + travel + step) + 1e-4
        at = corners[box]
        abc = [np.ascontiguousarray(pos[at[:, k], :3].T, dtype=np.float64) for k in range(3)]
        p = np.ascontiguousarray(v_start[point].T)
        q, _, _ = closest_points(p, *abc)
        e = p - q
        near = dot(e, e) <= limit * limit
        point, box = point[near], box[near]
        order = np.lexsort((tris[box], point))
        points = np.unique(corners)
        vert, tri = point[order], tris[box][order]
        verts, vert_at = np.unique(vert, return_inverse=True)
        tri_ids, tri_at = np.unique(tri, return_inverse=True)
        return _Candidates(
            collider,
            collider.poses,
            reach,
            vert,
            tri,
            ends,
            points,
            pos[points].copy(),
            slack,
            rows,
            verts,
            vert_at.reshape(-1),
            tri_ids,
            tri_at.reshape(-1),
        )

    def _vertex_normals(self, collider: MeshCollider, end: np.ndarray) -> np.ndarray:
        known = self._normals.get(id(collider))
        if known is not None and known[0] is collider and known[1] == collider.poses:
            return known[2]
        normals = vertex_normals(end, collider.triangles)
        self._normals[id(collider)] = (collider, collider.poses, normals)
        return normals

    def _near_planes(
        self,
        found: _Candidates,
        pos: np.ndarray,
        prev: np.ndarray,
        path: tuple[np.ndarray, np.ndarray, float, float],
        limit: float,
    ) -> np.ndarray:
        """The candidates whose vertex is within ``limit`` of the triangle's plane at the
        substep's end, or changed sides of it (or was on it) over the substep: per
        distinct vertex and triangle, then one gather a pair. Generous by a rounding
        margin: ``_push`` decides on its own figures."""
        start, end, t0, t1 = path
        s, e = start[found.verts], end[found.verts]
        v0 = (s + (e - s) * t0).astype(np.float32)[found.vert_at]
        v1 = (s + (e - s) * t1).astype(np.float32)[found.vert_at]
        corners = self.triangles[found.tris]
        n0, d0 = _planes(prev, corners)
        n1, d1 = _planes(pos, corners)
        at = found.tri_at
        s0 = _heights(n0[at], d0[at], v0)
        s1 = _heights(n1[at], d1[at], v1)
        tolerance = np.float32(1e-4 * (1.0 + limit))
        keep = np.abs(s1) <= np.float32(limit) + tolerance
        keep |= (s0 < tolerance) != (s1 < -tolerance)
        keep |= np.abs(s0) <= tolerance
        return np.flatnonzero(keep)

    def _push(
        self,
        collider: MeshCollider,
        found: _Candidates,
        pos: np.ndarray,
        prev: np.ndarray,
        path: tuple[np.ndarray, np.ndarray, float, float],
        reach: float,
        depth: float,
        mu: float,
    ) -> int:
        """Check every candidate at this substep and move the triangles in contact."""
        f32 = np.float32
        start, end, t0, t1 = path
        chosen = self._near_planes(found, pos, prev, path, max(reach, depth))
        if not chosen.size:
            return 0
        vert, tri = found.vert[chosen], found.tri[chosen]
        s, e = start[vert], end[vert]
        v0 = np.ascontiguousarray((s + (e - s) * t0).astype(np.float32).T)
        v1 = np.ascontiguousarray((s + (e - s) * t1).astype(np.float32).T)
        normal_v = self._vertex_normals(collider, end)[vert].T
        corners = self.triangles[tri]
        a1, b1, c1 = (np.ascontiguousarray(pos[corners[:, k], :3].T) for k in range(3))
        a0, b0, c0 = (np.ascontiguousarray(prev[corners[:, k], :3].T) for k in range(3))
        n1 = _unit(cross(b1 - a1, c1 - a1))
        n0 = _unit(cross(b0 - a0, c0 - a0))
        s1 = dot(n1, v1 - a1)
        s0 = dot(n0, v0 - a0)
        along = dot(n1, normal_v)
        good = np.where(along > 0, f32(-1.0), f32(1.0))  # the vertex behind the cloth
        gs0 = good * s0
        working = (gs0 < 0) & (gs0 > -depth) & (np.abs(along) >= ALIGN)
        side = np.where((gs0 >= 0) | working, good, np.where(s0 >= 0, f32(1.0), f32(-1.0)))
        h0, h1 = side * s0, side * s1
        # in reach on its side (or a started crossing being worked out) over the triangle
        near = (h1 < reach) & ((h1 >= 0) | (working & (h1 > -depth)))
        crossed = (h0 >= 0) & (h1 < 0) & ~working
        live = np.flatnonzero(near | crossed)
        if not live.size:
            return 0
        x1 = v1[:, live] - n1[:, live] * s1[live]  # the vertex projected on the plane
        w = _barycentric(x1, a1[:, live], b1[:, live], c1[:, live])
        over = (w >= -FOOTPRINT).all(axis=0)
        swept = np.flatnonzero(crossed[live] & ~near[live])
        if swept.size:  # where the path met the moving plane, inside the triangle then?
            c = live[swept]
            u = h0[c] / (h0[c] - h1[c])
            x = v0[:, c] + (v1[:, c] - v0[:, c]) * u
            at = [lo[:, c] + (hi[:, c] - lo[:, c]) * u for lo, hi in ((a0, a1), (b0, b1), (c0, c1))]
            over[swept] = (_barycentric(x, *at) >= -FOOTPRINT).all(axis=0)
        hit = live[over]
        if not hit.size:
            return 0
        w = np.clip(w[:, over], 0.0, 1.0)
        w /= w.sum(axis=0)
        push = reach - h1[hit]
        limit = np.where(working[hit], f32(WORK_STEP * reach), f32(np.inf))
        np.minimum(push, limit, out=push)
        ids = corners[hit].T  # (3, h)
        im = self.inv_mass[ids]
        denominator = (w * w * im).sum(axis=0)
        ok = denominator > 0
        if not ok.all():
            hit, w, push, ids, im, denominator = (
                hit[ok],
                w[:, ok],
                push[ok],
                ids[:, ok],
                im[:, ok],
                denominator[ok],
            )
        if not hit.size:
            return 0
        # the triangle moves along -side * normal: the vertex ends ``reach`` on its side
        normal = n1[:, hit]
        move = normal * -(side[hit] * push)  # (3, h): how the contact point moves
        if mu > 0.0:  # Coulomb: its slip past the vertex shortened by up to mu x the push
            pairs = ((a0, a1), (b0, b1), (c0, c1))
            slip = sum((hi[:, hit] - lo[:, hit]) * w[k] for k, (lo, hi) in enumerate(pairs))
            slip -= v1[:, hit] - v0[:, hit]
            slip -= normal * dot(normal, slip)
            length = np.sqrt(dot(slip, slip)) + f32(1e-30)
            move -= slip * np.minimum(f32(mu) * push / length, f32(1.0))
        move /= denominator
        flat_ids = ids.ravel()
        weight = (w * im).ravel()
        count = np.bincount(flat_ids, weights=(weight > 0).astype(np.float64), minlength=len(pos))
        touched = np.flatnonzero(count)
        for axis in range(3):
            step = (weight * np.repeat(move[axis][None, :], 3, axis=0).ravel()).astype(np.float64)
            total = np.bincount(flat_ids, weights=step, minlength=len(pos))
            column = pos[:, axis]
            column[touched] += (total[touched] / count[touched]).astype(pos.dtype)
        return int(hit.size)


def _planes(state: np.ndarray, corners: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unit normals ``(m, 3)`` float32 and plane offsets ``(m,)`` of triangles ``corners``
    ``(m, 3)`` of the ``(N, 4)`` rows ``state`` (elementwise: a row's values never depend on
    the others')."""
    a, b, c = (state[corners[:, k], :3].astype(np.float32) for k in range(3))
    n = np.cross(b - a, c - a)
    length = np.sqrt(n[:, 0] * n[:, 0] + n[:, 1] * n[:, 1] + n[:, 2] * n[:, 2])
    n /= np.where(length > 0, length, np.inf)[:, None]
    return n, n[:, 0] * a[:, 0] + n[:, 1] * a[:, 1] + n[:, 2] * a[:, 2]


def _heights(n: np.ndarray, d: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Signed heights of points ``v`` ``(k, 3)`` over planes ``n`` ``(k, 3)``, ``d`` ``(k,)``."""
    return n[:, 0] * v[:, 0] + n[:, 1] * v[:, 1] + n[:, 2] * v[:, 2] - d


def _unit(n: np.ndarray) -> np.ndarray:
    length = np.sqrt(dot(n, n))
    with np.errstate(invalid="ignore", divide="ignore"):
        return n / np.where(length > 0, length, np.inf)


def _barycentric(x: np.ndarray, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Barycentric weights ``(3, k)`` of ``x`` projected on triangles (a, b, c) (NaN for a
    degenerate one)."""
    ab, ac, ax = b - a, c - a, x - a
    aa, abc, cc = dot(ab, ab), dot(ab, ac), dot(ac, ac)
    d1, d2 = dot(ab, ax), dot(ac, ax)
    with np.errstate(invalid="ignore", divide="ignore"):
        denominator = aa * cc - abc * abc
        v = (cc * d1 - abc * d2) / denominator
        w = (aa * d2 - abc * d1) / denominator
    return np.stack([1.0 - v - w, v, w])
