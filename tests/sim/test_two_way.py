"""Two-way contact: a surface collider's vertices push a coarse cloth's triangles
(``collide/two_way.py``).

Issue figures: with only the cloth's points kept out of a surface, a 6 x 6 sheet draped
over a sphere mesh (radius 0.35 m, 1 m sheet) leaves 13 of the sphere's vertices on the
far side of the sheet at rest (the body shows through between its points). The far side
is measured here independently of the solver: for each collider vertex whose projection
falls inside a sheet triangle, its signed height over that triangle's plane, the plane's
normal turned away from the collider's centre (for a convex collider a vertex above a
triangle that does not cut the collider is never on that side).
"""

from __future__ import annotations

import numpy as np

from addon.sim import (
    ClothModel,
    MeshCollider,
    SimSettings,
    Simulator,
    bend_springs,
    face_edges,
    merge_with_kinds,
    shear_springs,
)
from addon.sim.collide.two_way import TwoWay, circumradii, cloth_triangles
from addon.sim.many.world import ObjectFrame, World

from .grids import quad_grid
from .meshes import capsule, grid_triangles, icosphere, intersecting_pairs, uv_sphere

SETTLE = 30  # frames before the sheet rests


def _sheet(
    n: int, size: float, height: float, pins: tuple[int, ...] = (), x: float = 0.0
) -> ClothModel:
    """An ``n`` x ``n`` sheet ``size`` wide centred over (x, 0) at ``height``."""
    pos, sizes, corners = quad_grid(n, n, size, height)
    pos[:, 0] += x - size / 2
    pos[:, 1] -= size / 2
    parts = [face_edges(sizes, corners), shear_springs(sizes, corners)]
    parts.append(bend_springs(sizes, corners, pos))
    springs, kinds = merge_with_kinds(*parts)
    masses = np.full(n * n, 0.3)
    masses[list(pins)] = 0.0
    return ClothModel(pos, masses, springs, kinds, face_sizes=sizes, face_corners=corners)


def far_side(
    points: np.ndarray, tris: np.ndarray, verts: np.ndarray, centre_of
) -> tuple[int, float]:
    """(collider vertices on the far side of a sheet triangle over them, the least height
    of a vertex under a triangle over its plane on the collider's side): float64, one
    triangle at a time. ``centre_of(point)``: the collider's centre seen from ``point``."""
    count, least = 0, np.inf
    for a, b, c in points[tris].astype(np.float64):
        normal = np.cross(b - a, c - a)
        normal /= np.linalg.norm(normal)
        if normal @ (a - centre_of((a + b + c) / 3.0)) < 0:
            normal = -normal
        height = (verts - a) @ normal
        x = verts - height[:, None] * normal
        e0, e1, ex = b - a, c - a, x - a
        d00, d01, d11 = e0 @ e0, e0 @ e1, e1 @ e1
        d20, d21 = ex @ e0, ex @ e1
        den = d00 * d11 - d01 * d01
        v = (d11 * d20 - d01 * d21) / den
        w = (d00 * d21 - d01 * d20) / den
        under = (v >= 0) & (w >= 0) & (v + w <= 1)
        count += int((under & (height > 0)).sum())
        if under.any():
            least = min(least, float(-height[under].max()))
    return count, least


def _drape(
    model: ClothModel, collider: MeshCollider, frames: int, centre_of, moves=None
) -> list[tuple[int, float]]:
    sim = Simulator(model, SimSettings.cloth())
    tris = grid_triangles(6, 6)
    out = []
    for frame in range(1, frames + 1):
        if moves is not None:
            collider.move_to(moves(frame))
        positions = sim.step(colliders=(collider,)).positions
        out.append(far_side(positions, tris, collider.vertex_path()[1], centre_of))
    assert not sim.warnings
    return out


def test_a_coarse_sheet_draped_over_a_sphere_mesh_hides_it() -> None:
    verts, tris = uv_sphere(16, 24, 0.35)
    collider = MeshCollider(verts, tris, outer=0.02)
    given = verts.copy()
    frames = _drape(_sheet(6, 1.0, 0.55), collider, 120, lambda p: np.zeros(3))
    for count, least in frames[SETTLE:]:
        assert count == 0
        assert least > 0.02  # the reach (outer + margin 0.025) less the solver's slop
    assert np.array_equal(verts, given)  # nothing of the given mesh written


def test_a_coarse_sheet_draped_over_a_capsule_mesh_hides_it() -> None:
    verts, tris = capsule(0.15, 0.5)

    def centre_of(p: np.ndarray) -> np.ndarray:
        return np.array([np.clip(p[0], -0.25, 0.25), 0.0, 0.0])

    collider = MeshCollider(verts, tris, outer=0.02)
    frames = _drape(_sheet(6, 1.0, 0.3), collider, 120, centre_of)
    for count, least in frames[SETTLE:]:
        assert count == 0
        assert least > 0.02


def test_a_collider_rising_through_a_pinned_coarse_sheet_lifts_it() -> None:
    """(Higher than the sheet pinned at its corners can stretch to, the ball goes through:
    the springs and tethers solved first have the last word.)"""
    verts, tris = icosphere(2, 0.2)

    def at(frame: int) -> np.ndarray:  # its top from -0.3 to 0.09: what the sheet can give
        return verts + np.array([0.05, 0.02, -0.5 + 0.03 * min(frame, 13)])

    collider = MeshCollider(at(0), tris, outer=0.02)
    pins = (0, 5, 30, 35)
    model = _sheet(6, 1.0, 0.0, pins)
    centre = [np.zeros(3)]

    def centre_of(p: np.ndarray) -> np.ndarray:
        return centre[0]

    sim = Simulator(model, SimSettings.cloth())
    positions = model.rest_positions
    for frame in range(1, 61):
        collider.move_to(at(frame))
        centre[0] = at(frame).mean(axis=0)
        positions = sim.step(colliders=(collider,)).positions
        count, _ = far_side(positions, grid_triangles(6, 6), at(frame), centre_of)
        assert count == 0, frame
        inside = np.linalg.norm(positions - centre[0], axis=1) < 0.2 * 0.95
        assert not inside.any()
    assert positions[14, 2] > 0.09  # lifted: the sheet rests on the ball (top at 0.09)
    assert not sim.warnings


def test_a_sheet_that_starts_crossed_works_its_way_out() -> None:
    """The sphere's top vertex starts 1 cm through the sheet's middle quad (the book's cape
    starts with 21 of 50 triangles crossed at rest)."""
    verts, tris = uv_sphere(16, 24, 0.35)
    collider = MeshCollider(verts, tris, outer=0.02)
    frames = _drape(_sheet(6, 1.0, 0.34), collider, 40, lambda p: np.zeros(3))
    assert frames[0][0] == 0 or frames[0][1] < 0.02  # not out at once
    for count, _ in frames[10:]:
        assert count == 0


def test_body_and_sheet_triangles_do_not_cross() -> None:
    """Edges: no sheet triangle crossed by a sphere triangle's edge, nor the reverse
    (counted by an independent triangle-triangle test)."""
    verts, tris = uv_sphere(16, 24, 0.35)
    collider = MeshCollider(verts, tris, outer=0.02)
    sim = Simulator(_sheet(6, 1.0, 0.55), SimSettings.cloth())
    sheet = grid_triangles(6, 6)
    for frame in range(60):
        positions = sim.step(colliders=(collider,)).positions
        if frame >= SETTLE:
            both = np.vstack([positions, verts])
            crossing = intersecting_pairs(both, np.vstack([sheet, tris + 36]))
            crossing -= intersecting_pairs(positions, sheet)
            assert crossing == 0


def test_fine_cloth_takes_no_part_and_pinned_triangles_do_not_move() -> None:
    fine = _sheet(40, 0.5, 0.0)
    tri = cloth_triangles(fine.face_sizes, fine.face_corners)
    assert len(tri) == 2 * 39 * 39
    radius = circumradii(fine.rest_positions, tri)
    assert np.allclose(radius, 0.5 / 39 / np.sqrt(2))  # half a right triangle's hypotenuse
    verts, tris = uv_sphere(8, 12, 0.1, (0.0, 0.0, -0.09))
    collider = MeshCollider(verts, tris)
    two_way = TwoWay(tri, fine.rest_positions, fine.inverse_masses)
    state = np.zeros((fine.point_count, 4), np.float32)
    state[:, :3] = fine.rest_positions
    before = state.copy()
    assert two_way.resolve((collider,), state, state.copy(), 0.005, 0.3) == 0
    assert two_way.queries == 0 and np.array_equal(state, before)
    # one big triangle over the sphere's top, all of it pinned: found, but nothing moves
    big = np.array([[-1.0, -1.0, 0.0], [1.0, -1.0, 0.0], [0.0, 1.0, 0.0]])
    pinned = TwoWay(np.array([[0, 1, 2]]), big, np.zeros(3))
    state = np.zeros((3, 4), np.float32)
    state[:, :3] = big
    assert pinned.resolve((collider,), state, state.copy(), 0.005, 0.3) == 0
    assert np.array_equal(state[:, :3], big.astype(np.float32))
    # free: the top vertex starts 0.01 through it, worked out half a reach a substep
    free = TwoWay(np.array([[0, 1, 2]]), big, np.ones(3))
    least = []
    for _ in range(6):
        free.resolve((collider,), state, state.copy(), 0.005, 0.3)
        _, gap = far_side(state[:, :3], np.array([[0, 1, 2]]), verts, lambda p: verts[-1])
        least.append(gap)
    assert least[0] < 0.0  # half a reach is not enough at once
    assert all(gap > 0.025 - 1e-5 for gap in least[3:])  # then the reach under the plane


def test_a_vertex_passing_through_a_triangle_within_a_substep_is_caught() -> None:
    """A small ball jumps 0.3 m up through a big free triangle in one substep: the swept
    test puts the triangle back above it."""
    big = np.array([[-1.0, -1.0, 0.0], [1.0, -1.0, 0.0], [0.0, 1.0, 0.0]])
    verts, tris = icosphere(1, 0.05)
    below, above = verts + np.array([0, 0, -0.2]), verts + np.array([0, 0, 0.1])
    collider = MeshCollider(above, tris, previous=below)
    collider.begin_substep(0.0, 1.0)
    two_way = TwoWay(np.array([[0, 1, 2]]), big, np.ones(3))
    state = np.zeros((3, 4), np.float32)
    state[:, :3] = big
    assert two_way.resolve((collider,), state, state.copy(), 0.005, 0.0) > 0
    centre = np.array([0.0, 0.0, 0.1])
    count, least = far_side(state[:, :3], np.array([[0, 1, 2]]), above, lambda p: centre)
    assert count == 0 and least > 0.0  # over the ball again (the reach in later substeps)


def test_a_world_merging_coarse_sheets_gives_each_what_it_gets_alone() -> None:
    def scene() -> list[Simulator]:
        sims = []
        for i, n in enumerate((6, 7, 6)):
            model = _sheet(n, 1.0, 0.55 - 0.1 * i, (), x=1.2 * i)
            settings = SimSettings.cloth(friction=0.1 * i)
            sims.append(Simulator(model, settings))
        return sims

    verts, tris = uv_sphere(16, 24, 0.35)
    shared = [MeshCollider(verts + np.array([1.2 * i, 0.0, 0.0]), tris) for i in range(3)]
    rising = MeshCollider(verts + np.array([1.2, 0, -1.0]), tris)  # rises into the middle one
    alone = scene()
    own = [MeshCollider(verts + np.array([1.2 * i, 0.0, 0.0]), tris) for i in range(3)]
    own_rising = MeshCollider(verts + np.array([1.2, 0, -1.0]), tris)
    world = World(scene(), processes=0)
    for frame in range(1, 41):
        lift = verts + np.array([1.2, 0.0, -1.0 + 0.03 * frame])
        rising.move_to(lift)
        own_rising.move_to(lift)
        frames = [ObjectFrame(colliders=(shared[0],)), ObjectFrame(colliders=(shared[1], rising))]
        frames.append(ObjectFrame(colliders=(shared[2], shared[0])))
        together = world.step(frames)
        inputs = [(own[0],), (own[1], own_rising), (own[2], own[0])]
        for sim, colliders, result in zip(alone, inputs, together, strict=True):
            assert np.array_equal(sim.step(colliders=colliders).positions, result.positions)
    assert world._batches is not None and len(world._batches) == 1
    assert world._batches[0].solver.two_way.queries > 0


def test_helper_processes_give_the_same_coarse_sheets_as_one_process() -> None:
    from addon.sim.many import parallel

    def scene() -> list[Simulator]:  # 4,320 points: split between this process and a helper
        return [Simulator(_sheet(12, 1.0, 0.55, (0, 11), x=1.2 * i)) for i in range(30)]

    verts, tris = uv_sphere(16, 24, 0.35)
    here_ball = MeshCollider(verts + np.array([1.2 * 25, -0.6, -1.0]), tris)
    split_ball = MeshCollider(verts + np.array([1.2 * 25, -0.6, -1.0]), tris)
    here = World(scene(), processes=0)
    split = World(scene(), processes=1)
    split.pace.helpers = lambda: True  # type: ignore[method-assign]
    try:
        for frame in range(1, 31):
            lift = verts + np.array([1.2 * 25, -0.6, -1.0 + 0.04 * frame])  # into a helper's sheets
            here_ball.move_to(lift)
            split_ball.move_to(lift)
            a = [r.positions for r in here.step([ObjectFrame(colliders=(here_ball,))] * 30)]
            b = [r.positions for r in split.step([ObjectFrame(colliders=(split_ball,))] * 30)]
            for x, y in zip(a, b, strict=True):
                assert np.array_equal(x, y)
        assert split._batches is not None and split._batches[1].remote is not None
        assert here._batches is not None and here._batches[0].solver.two_way.queries > 0
        gap = np.linalg.norm(a[25] - [1.2 * 25, -0.6, 0.2], axis=1) - 0.35
        assert gap.min() > 0.02 and gap.min() < 0.03  # resting on the ball
    finally:
        split.close()
        parallel.shutdown()
