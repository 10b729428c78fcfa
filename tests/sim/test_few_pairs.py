"""A still floor of few triangles pairs each point only with the triangles its path comes
near (``mesh_contacts.few_pairs``): checked against float64 brute force."""

from __future__ import annotations

import numpy as np

from addon.sim.collide.mesh_collider import MeshCollider
from addon.sim.collide.mesh_contacts import few_pairs
from addon.sim.xpbd.solver import XpbdSolver

from .test_triangle_geometry import _reference as _closest  # float64, by cases

# a 2 x 2 m quad at z = 0 in two triangles (sharing the diagonal from (-1, -1) to (1, 1))
QUAD = np.array([[-1.0, -1.0, 0.0], [1.0, -1.0, 0.0], [1.0, 1.0, 0.0], [-1.0, 1.0, 0.0]])
FACES = np.array([[0, 1, 2], [0, 2, 3]])
OUTER, MARGIN = 0.02, 0.005
REACH = OUTER + MARGIN


def _points(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Points over the quad and beyond its edges, many near the diagonal, at heights in and
    out of reach, each moving a few millimetres (never through the floor)."""
    xy = rng.uniform(-1.1, 1.1, (n, 2))
    xy[: n // 3, 1] = xy[: n // 3, 0] + rng.normal(0.0, 0.01, n // 3)  # about the diagonal
    z = rng.uniform(0.004, 0.06, n)
    after = np.column_stack([xy, z])
    before = after + rng.normal(0.0, 0.003, (n, 3))
    before[:, 2] = np.maximum(before[:, 2], 0.003)
    return after, before


def test_few_pairs_keep_every_triangle_a_path_comes_within_reach_of() -> None:
    rng = np.random.default_rng(11)
    after, before = _points(rng, 800)
    collider = MeshCollider(QUAD, FACES, outer=OUTER)
    pos, prev = XpbdSolver.make_state(after), XpbdSolver.make_state(before)
    ids = np.arange(len(after))
    point, tri = few_pairs(collider._static, pos, prev, ids, REACH)
    kept = set(zip(point.tolist(), tri.tolist(), strict=True))
    assert np.all(np.diff(point) >= 0)  # sorted by point, as the pairs are kept
    left_out = 0
    for i in range(len(after)):
        for t, face in enumerate(FACES):
            # the path's nearest approach to the triangle, sampled finely (float64)
            path = before[i] + np.linspace(0.0, 1.0, 33)[:, None] * (after[i] - before[i])
            nearest = min(np.linalg.norm(x - _closest(x, *QUAD[face])) for x in path)
            if (i, t) not in kept:
                left_out += 1
                assert nearest > REACH, (i, t, nearest)
    assert left_out > 500  # most points are over one triangle only: half the pairs go


def test_contacts_on_a_still_quad_are_the_brute_force_ones() -> None:
    rng = np.random.default_rng(12)
    after, before = _points(rng, 2000)
    collider = MeshCollider(QUAD, FACES, outer=OUTER)
    pos, prev = XpbdSolver.make_state(after), XpbdSolver.make_state(before)
    count = collider.resolve_positions(pos, prev, np.ones(len(after), dtype=bool), MARGIN, 0.0)
    out = pos[:, :3].astype(float)
    expected_count = 0
    for i, p in enumerate(after):
        q = min(
            (_closest(p, *QUAD[face]) for face in FACES), key=lambda x: float(np.linalg.norm(p - x))
        )
        d = float(np.linalg.norm(p - q))
        if d < REACH:
            expected_count += 1
            expected = q + (p - q) / d * REACH
        else:
            expected = p
        assert np.allclose(out[i], expected, atol=2e-6), (i, out[i], expected)
    assert count == expected_count > 500


def _bumpy_sheet(n: int = 12) -> tuple[np.ndarray, np.ndarray]:
    """A 1 x 1 m sheet of 2 n^2 triangles with a gentle bump (many triangles: the grid path)."""
    from .meshes import grid_triangles

    x, y = np.meshgrid(np.linspace(0.0, 1.0, n + 1), np.linspace(0.0, 1.0, n + 1))
    z = 0.05 * np.sin(np.pi * x) * np.sin(np.pi * y)
    return np.column_stack([x.ravel(), y.ravel(), z.ravel()]), grid_triangles(n + 1, n + 1)


def _height_above(p: np.ndarray, verts: np.ndarray, faces: np.ndarray) -> float:
    return min(float(np.linalg.norm(p - _closest(p, *verts[f]))) for f in faces)


def _slide(collider: MeshCollider, frames: int, substeps: int, start: np.ndarray) -> list[float]:
    """Points slid 0.5 m across the surface over the frames, pressed to 1 cm above it every substep;
    the distance each ends at after its push, every substep."""
    verts, faces = collider._cur, collider.source_triangles
    p = start.copy()
    out = []
    for frame in range(frames):
        if frame:
            collider.move_to(verts)
        for k in range(substeps):
            collider.begin_substep(k / substeps, (k + 1) / substeps)
            before = p.copy()
            after = p + np.array([0.5, 0.3, 0.0]) / (frames * substeps)
            for i in range(len(after)):  # 1 cm above the surface, below its reach
                q = min((_closest(after[i], *verts[f]) for f in faces), key=lambda x: x[2])
                after[i, 2] = q[2] + 0.01
            pos, prev = XpbdSolver.make_state(after), XpbdSolver.make_state(before)
            collider.resolve_positions(pos, prev, np.ones(len(p), dtype=bool), MARGIN, 0.0)
            p = pos[:, :3].astype(float)
            out += [_height_above(x, verts, faces) for x in p]
    return out


def test_points_sliding_far_over_a_still_surface_keep_their_contacts() -> None:
    """Still since its pairs were made, a surface's anchors stay put: a point's slide is its
    motion, and a point sliding past its slack is asked again (else it would lose its
    contact and stay at 1 cm, inside the reach)."""
    verts, faces = _bumpy_sheet()
    collider = MeshCollider(verts, faces, outer=OUTER)
    start = np.array([[0.1, 0.1, 0.2], [0.2, 0.15, 0.2], [0.15, 0.3, 0.2]])
    heights = np.array(_slide(collider, 3, 8, start))
    # pushed out to the reach of their nearest triangle (a little beyond it over the bump's
    # ridges); a point that lost its pairs would stay at 1 cm
    assert heights.min() > REACH - 5e-5 and heights.max() < REACH + 1e-3, heights
    assert collider._pairs_still


def test_a_surface_that_stops_after_a_rigid_move_keeps_its_points_in_contact() -> None:
    """Pairs kept through a rigid move hold anchors placed at the moving poses: after the
    surface stops they are not taken as still (the contacts stay right either way)."""
    verts, faces = _bumpy_sheet()
    collider = MeshCollider(verts + np.array([0.0, 0.0, -0.01]), faces, previous=verts, outer=OUTER)
    start = np.array([[0.1, 0.1, 0.2], [0.2, 0.15, 0.2]])
    _slide(collider, 1, 8, start)  # its one moving frame (checked loosely: it moves)
    moved = collider._cur.copy()
    collider.move_to(moved)  # stands still from here
    assert not collider.moving and not collider._pairs_still
    heights = np.array(_slide(collider, 2, 8, start + np.array([0.2, 0.2, 0.0])))
    assert heights.min() > REACH - 5e-5 and heights.max() < REACH + 1e-3, heights
