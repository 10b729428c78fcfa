"""Cloth points that start inside a closed collider leave it (``collide/inside.py``).

Issue figure: a 6 x 6 cape on the walking body with its lower rows moved 0.1 m into the body
starts with 25 of its 50 triangles crossed by the body's and stayed at 15-21 over frames
20-60: point contacts keep a point on the side it starts on, inside included. Inside is
checked here without the code under test: a point is inside a convex polyhedron when it is
behind the plane of every face.
"""

from __future__ import annotations

import numpy as np

from addon.sim import MeshCollider, SimSettings, Simulator
from addon.sim.collide.inside import closed_surface, way_out, winding_numbers
from addon.sim.many.world import ObjectFrame, World

from .meshes import grid_triangles, icosphere, intersecting_pairs, uv_sphere
from .test_two_way import _sheet


def behind_every_face(points: np.ndarray, verts: np.ndarray, tris: np.ndarray) -> np.ndarray:
    """Inside a convex polyhedron of outward triangles: behind every face's plane."""
    a, b, c = (verts[tris[:, k]] for k in range(3))
    normals = np.cross(b - a, c - a)
    heights = np.einsum("pk,tk->pt", points, normals) - np.einsum("tk,tk->t", a, normals)
    return np.all(heights < 0, axis=1)


def test_closed_surfaces_seams_included() -> None:
    verts, tris = uv_sphere(8, 12, 1.0)
    assert closed_surface(verts, tris)
    assert not closed_surface(verts, tris[:-1])  # a hole
    # split along a seam (each triangle its own corners, as a file with UVs has them)
    split = verts[tris.ravel()]
    assert closed_surface(split, np.arange(len(split)).reshape(-1, 3))
    floor = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], dtype=float)
    assert not closed_surface(floor, np.array([[0, 1, 2], [0, 2, 3]]))


def test_winding_numbers_tell_inside_from_outside() -> None:
    verts, tris = icosphere(2, 0.5, (0.1, -0.2, 0.3))
    points = np.random.default_rng(3).uniform(-0.6, 0.8, size=(2000, 3))
    w = winding_numbers(points, *(verts[tris[:, k]] for k in range(3)))
    inside = behind_every_face(points, verts, tris)
    assert 200 < inside.sum() < 1800
    assert np.array_equal(np.abs(w) > 0.5, inside)
    assert np.allclose(np.abs(w), inside.astype(float), atol=1e-5)
    flipped = winding_numbers(points, *(verts[tris[:, k]] for k in (0, 2, 1)))
    assert np.allclose(flipped, -w, atol=1e-5)  # the triangles' winding only flips the sign


def test_the_way_out_is_reach_beyond_the_nearest_face() -> None:
    verts, tris = icosphere(2, 0.5)
    a, b, c = (verts[tris[:, k]] for k in range(3))
    points = np.array([[0.0, 0.0, 0.3], [0.1, -0.2, 0.05], [0.0, 0.0, 0.0]])
    out = way_out(points, a, b, c, 0.02)
    assert not behind_every_face(out, verts, tris).any()
    normals = np.cross(b - a, c - a)
    normals /= np.linalg.norm(normals, axis=1)[:, None]
    heights = np.einsum("pk,tk->pt", out, normals) - np.einsum("tk,tk->t", a, normals)
    assert np.allclose(heights.max(axis=1), 0.02, atol=1e-6)  # reach in front of a face


def _started_inside(frames: int, collider: MeshCollider) -> list[np.ndarray]:
    """A 6 x 6 sheet 1 m wide at z = 0.3, pinned at its corners, through a 0.35 m ball: its
    four middle points start inside."""
    sim = Simulator(_sheet(6, 1.0, 0.3, (0, 5, 30, 35)), SimSettings.cloth())
    out = [sim.step(colliders=(collider,)).positions for _ in range(frames)]
    assert not sim.warnings
    return out


def test_points_that_start_inside_a_closed_collider_leave_it() -> None:
    verts, tris = icosphere(3, 0.35)
    start = _sheet(6, 1.0, 0.3).rest_positions
    assert behind_every_face(start, verts, tris).sum() == 4
    frames = _started_inside(40, MeshCollider(verts, tris, outer=0.02))
    for positions in frames:
        assert not behind_every_face(positions, verts, tris).any()
    sheet = grid_triangles(6, 6)
    for positions in frames[10:]:
        both = np.vstack([positions, verts])
        crossing = intersecting_pairs(both, np.vstack([sheet, tris + 36]))
        assert crossing - intersecting_pairs(positions, sheet) == 0


def test_an_open_surface_has_no_inside() -> None:
    verts, tris = icosphere(3, 0.35)
    open_tris = tris[verts[tris].mean(axis=1)[:, 2] > -0.1]  # the bowl's bottom cut off
    collider = MeshCollider(verts, open_tris, outer=0.02)
    assert not collider.closed
    sim = Simulator(_sheet(6, 1.0, 0.3, (0, 5, 30, 35)), SimSettings.cloth())
    sim.step(colliders=(collider,))
    assert sim.solver.two_way.left_inside == 0


def test_a_world_gives_a_sheet_that_starts_inside_what_it_gets_alone() -> None:
    verts, tris = icosphere(3, 0.35)

    def scene() -> list[Simulator]:
        return [
            Simulator(_sheet(6, 1.0, 0.3 + 0.4 * i, (0, 5, 30, 35)), SimSettings.cloth())
            for i in range(2)
        ]

    alone, shared, own = scene(), MeshCollider(verts, tris), MeshCollider(verts, tris)
    world = World(scene(), processes=0)
    for _ in range(15):
        together = world.step([ObjectFrame(colliders=(shared,))] * 2)
        for sim, result in zip(alone, together, strict=True):
            assert np.array_equal(sim.step(colliders=(own,)).positions, result.positions)
    assert alone[0].solver.two_way.left_inside == 4
