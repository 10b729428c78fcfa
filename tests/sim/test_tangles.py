"""A cloth caught through itself (``tangles.TangleFinder``) and self-collision letting it
back out. The scene: a floor sheet A (z = 0) and a wall sheet B (x = 0.525, between A's
columns) whose lower rows are through A; which of B's points are below A is known from the
positions alone."""

from __future__ import annotations

import numpy as np

from addon.sim import ClothModel, SimSettings, Simulator
from addon.sim.mesh.springs import bend_springs, face_edges, merge_with_kinds, shear_springs
from addon.sim.self_collide.tangles import TangleFinder
from addon.sim.xpbd.solver import XpbdSolver

from .grids import quad_grid
from .meshes import grid_triangles, intersecting_pairs

N = 21  # points across each sheet
D = 0.015


def _sheets(depth: float) -> tuple[np.ndarray, np.ndarray, int]:
    """Floor A over [0, 1]^2 at z = 0 (points 0..N^2-1), wall B over y 0.3-0.7 and z from
    ``-depth`` up 0.5 (points N^2..); positions, triangles, B's first point."""
    floor, _, _ = quad_grid(N, N, 1.0)
    wall, _, _ = quad_grid(N, N, 0.4)
    wall = np.stack(
        [np.full(N * N, 0.525), 0.3 + wall[:, 0], wall[:, 1] * 0.5 / 0.4 - depth], axis=1
    )
    tri = np.vstack([grid_triangles(N, N), grid_triangles(N, N) + N * N])
    return np.vstack([floor, wall]), tri, N * N


def _pairs(pos: np.ndarray, tri: np.ndarray, reach: float):
    """Every point-triangle pair (triangle not containing the point) with the point within
    ``reach`` of the triangle's plane, and its signed height over it."""
    point = np.repeat(np.arange(len(pos)), len(tri))
    t = np.tile(np.arange(len(tri)), len(pos))
    own = (tri[t] == point[:, None]).any(axis=1)
    point, t = point[~own], t[~own]
    a, b, c = (pos[tri[t, k]] for k in range(3))
    normal = np.cross(b - a, c - a)
    normal /= np.linalg.norm(normal, axis=1, keepdims=True)
    height = ((pos[point] - a) * normal).sum(axis=1)
    near = np.abs(height) < reach
    return point[near], t[near], height[near].astype(np.float32)


def test_the_part_of_a_sheet_through_another_is_found() -> None:
    pos, tri, first_b = _sheets(0.1125)  # B's rows at z = -0.1125 + 0.025 k: 5 below A
    state = XpbdSolver.make_state(pos)
    finder = TangleFinder(tri, len(pos))
    tangled = finder.tangled(*_pairs(pos, tri, 0.1), state, tri)
    assert tangled is not None
    below = np.zeros(len(pos), dtype=bool)
    below[first_b:] = pos[first_b:, 2] < 0
    assert below.sum() == 5 * N
    assert np.array_equal(tangled, below)
    # A's cut (its edges through B) ends inside A, so A stays whole and free; B's cut is
    # its 21 upright and 20 diagonal edges across z = 0, which split B
    assert finder.cut_edges > 41


def test_sheets_apart_or_touching_are_not_tangled() -> None:
    for depth in (-0.05, 0.0):  # above A; B's lowest row on A (no edge passes through)
        pos, tri, _ = _sheets(depth)
        finder = TangleFinder(tri, len(pos))
        assert finder.tangled(*_pairs(pos, tri, 0.1), XpbdSolver.make_state(pos), tri) is None


def test_the_same_pairs_over_substeps_give_a_fresh_finders_answer() -> None:
    # self-collision keeps its candidates over several substeps: the finder links their
    # pairs once, then each substep only the sides change; B moves down through A and back
    # up with the pairs kept, and every answer is that of a finder seeing them first
    pos, tri, first_b = _sheets(-0.05)
    point, t, _ = _pairs(pos, tri, 0.3)
    kept = TangleFinder(tri, len(pos))
    answers = []
    for depth in (-0.05, 0.0625, 0.1125, 0.0375, -0.05):
        moved, _, _ = _sheets(depth)
        a, b, c = (moved[tri[t, k]] for k in range(3))
        normal = np.cross(b - a, c - a)
        normal /= np.linalg.norm(normal, axis=1, keepdims=True)
        side = ((moved[point] - a) * normal).sum(axis=1).astype(np.float32)
        state = XpbdSolver.make_state(moved)
        got = kept.tangled(point, t, side, state, tri)
        want = TangleFinder(tri, len(pos)).tangled(point, t, side, state, tri)
        assert (got is None) == (want is None)
        if got is not None and want is not None:
            assert np.array_equal(got, want)
            assert np.array_equal(got[first_b:], moved[first_b:, 2] < 0)
        answers.append(got is not None)
    assert answers == [False, True, True, True, False]


def _model(pos: np.ndarray, first_b: int) -> ClothModel:
    sizes = np.full(2 * (N - 1) ** 2, 4, dtype=np.int64)
    quads = quad_grid(N, N)[2]
    corners = np.concatenate([quads, quads + N * N])
    springs, kinds = merge_with_kinds(
        face_edges(sizes, corners),
        shear_springs(sizes, corners),
        bend_springs(sizes, corners, pos),
    )
    masses = np.where(np.arange(len(pos)) < first_b, 0.0, 0.3 / (N * N))  # A pinned
    return ClothModel(pos, masses, springs, kinds)


def test_a_sheet_caught_through_another_comes_back_out() -> None:
    """Regression: self-collision kept every point on the side of each triangle it started
    on, so B's rows below A stayed below it for good while the rest of B rose (gravity up):
    B stretched across A instead of coming out."""
    pos, tri, first_b = _sheets(0.1125)
    rest = pos.copy()
    rest[first_b:, 2] += 0.3  # apart at rest, so no pair of A and B is left out as neighbours
    settings = SimSettings.cloth(
        self_collision=True, self_distance=D, gravity=np.array([0.0, 0.0, 2.0]), tethers=False
    )
    sim = Simulator(_model(rest, first_b), settings, triangles=tri)
    sim.reset(pos)
    for _ in range(24):
        out = sim.step().positions
    assert sim.recoveries == 0
    wall = out[first_b:]
    assert wall[:, 2].min() > D  # all of B came up through A and clear of it
    assert intersecting_pairs(out, tri) == 0
    # B rose as one sheet: its upright edges (rest 0.025 m) stayed within 10 % of their rest
    ids = np.arange(N * (N - 1))
    length = np.linalg.norm(wall[ids + N] - wall[ids], axis=1)
    assert np.abs(length / 0.025 - 1.0).max() < 0.1


def test_a_sheet_resting_on_another_still_collides() -> None:
    """The control: B dropped onto A (gravity down) from above is held on it."""
    pos, tri, first_b = _sheets(-0.05)
    sim = Simulator(
        _model(pos, first_b),
        SimSettings.cloth(self_collision=True, self_distance=D, tethers=False),
        triangles=tri,
    )
    for _ in range(24):
        out = sim.step().positions
    assert out[first_b:, 2].min() > 0.3 * D
    # no pair of A and B crosses (B crumpling on its edge may fold through itself where
    # its rest neighbours are left out: that is not what this tests)
    wall = tri[len(tri) // 2 :]
    assert intersecting_pairs(out, tri) == intersecting_pairs(out, wall)
