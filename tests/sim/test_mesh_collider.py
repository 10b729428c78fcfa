"""Triangle-surface colliders against numbers computed here: closest features, the one- and
two-sided rules, the swept test, friction on a moving surface, and whole simulations."""

from __future__ import annotations

import numpy as np
import pytest

from addon.sim import ClothModel, SimSettings, Simulator
from addon.sim.collide.colliders import begin_substep, resolve_positions
from addon.sim.collide.mesh_collider import MeshCollider
from addon.sim.xpbd.solver import XpbdSolver

from .helpers import grid_model
from .meshes import icosphere

TRI = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
FACES = np.array([[0, 1, 2]])
OUTER, MARGIN = 0.02, 0.005
REACH = OUTER + MARGIN


def _state(points: np.ndarray) -> np.ndarray:
    return XpbdSolver.make_state(np.asarray(points, dtype=float))


def _resolve(collider: MeshCollider, after: np.ndarray, before: np.ndarray, mu: float = 0.0):
    pos, prev = _state(after), _state(before)
    movable = np.ones(len(after), dtype=bool)
    count = collider.resolve_positions(pos, prev, movable, MARGIN, mu)
    return pos[:, :3].astype(float), count


def _closest_on_unit_triangle(p: np.ndarray) -> np.ndarray:
    """Closest point of the triangle TRI (in z = 0) by cases, written out for this test."""
    x, y = p[0], p[1]
    if x >= 0 and y >= 0 and x + y <= 1:
        return np.array([x, y, 0.0])
    best = None
    for a, b in ((TRI[0], TRI[1]), (TRI[1], TRI[2]), (TRI[2], TRI[0])):
        d = b - a
        t = np.clip((p - a) @ d / (d @ d), 0.0, 1.0)
        q = a + t * d
        if best is None or np.linalg.norm(p - q) < np.linalg.norm(p - best):
            best = q
    return best


def test_points_in_reach_go_to_the_reach_along_their_closest_feature() -> None:
    collider = MeshCollider(TRI, FACES, outer=OUTER)
    points = np.array(
        [
            [0.2, 0.3, 0.01],  # above the face
            [0.5, -0.01, 0.005],  # beside edge ab
            [-0.01, -0.012, 0.003],  # beside corner a
            [0.51, 0.51, 0.01],  # beside edge bc
            [0.2, 0.3, 0.5],  # out of reach
            [3.0, 3.0, 0.0],  # far away
        ]
    )
    out, count = _resolve(collider, points, points)
    assert count == 4
    for i, p in enumerate(points):
        q = _closest_on_unit_triangle(p)
        d = np.linalg.norm(p - q)
        expected = q + (p - q) / d * REACH if d < REACH else p
        assert np.allclose(out[i], expected, atol=1e-6), i


def test_one_sided_surface_pushes_points_out_from_behind() -> None:
    collider = MeshCollider(TRI, FACES, outer=OUTER, inner=0.05)
    points = np.array([[0.2, 0.3, -0.03], [0.2, 0.3, -0.08]])  # 3 cm and 8 cm behind
    out, count = _resolve(collider, points, points)
    assert count == 1
    assert np.allclose(out[0], [0.2, 0.3, REACH], atol=1e-6)
    assert np.allclose(out[1], points[1])


def test_two_sided_surface_keeps_points_on_their_side() -> None:
    collider = MeshCollider(TRI, FACES, outer=OUTER)
    before = np.array([[0.2, 0.3, -0.05], [0.3, 0.3, 0.05]])
    after = np.array([[0.2, 0.3, -0.01], [0.3, 0.3, 0.01]])
    out, count = _resolve(collider, after, before)
    assert count == 2
    assert np.allclose(out[0], [0.2, 0.3, -REACH], atol=1e-6)
    assert np.allclose(out[1], [0.3, 0.3, REACH], atol=1e-6)


def _wall(x: float) -> np.ndarray:
    """A 4 m square wall in the plane x = ``x``, facing -x (two triangles)."""
    return np.array([[x, -2.0, -2.0], [x, 2.0, -2.0], [x, 2.0, 2.0], [x, -2.0, 2.0]])


WALL_FACES = np.array([[0, 2, 1], [0, 3, 2]])  # normals toward -x


def test_swept_test_catches_a_fast_wall_that_a_static_test_misses() -> None:
    # the wall moves from x = -0.5 to x = +0.5 in one substep past a point resting at x = 0
    point = np.array([[0.0, 0.1, 0.2]])
    collider = MeshCollider(_wall(0.5), WALL_FACES, previous=_wall(-0.5), outer=OUTER)
    collider.begin_substep(0.0, 1.0)
    idx, _, _ = collider.contacts(_state(point), MARGIN)  # static: the point is 0.5 m off
    assert idx.size == 0
    out, count = _resolve(collider, point, point)
    assert count == 1  # swept: the wall passed it; it goes back to the side it was on (+x)
    assert np.allclose(out[0], [0.5 + REACH, 0.1, 0.2], atol=1e-5)


def test_swept_test_catches_a_fast_point_through_a_static_sheet() -> None:
    collider = MeshCollider(_wall(0.0), WALL_FACES, outer=OUTER)
    before, after = np.array([[-0.3, 0.5, 0.5]]), np.array([[0.4, 0.6, 0.5]])
    assert collider.contacts(_state(after), MARGIN)[0].size == 0
    out, count = _resolve(collider, after, before)
    assert count == 1
    assert np.allclose(out[0], [-REACH, 0.6, 0.5], atol=1e-5)


def test_friction_carries_a_point_with_a_moving_floor() -> None:
    floor = np.array([[-5.0, -5.0, 0.0], [5.0, -5.0, 0.0], [5.0, 5.0, 0.0], [-5.0, 5.0, 0.0]])
    faces = np.array([[0, 1, 2], [0, 2, 3]])
    shift = np.array([0.01, 0.0, 0.0])  # the floor slides 1 cm in the substep
    collider = MeshCollider(floor + shift, faces, previous=floor, outer=OUTER)
    collider.begin_substep(0.0, 1.0)
    before = np.array([[0.0, 0.0, REACH], [1.0, 0.0, REACH]])
    after = before - [0.0, 0.0, 0.02]  # pressed 2 cm into the floor's reach
    out, _ = _resolve(collider, after, before, mu=1.0)
    # static friction (slip 1 cm <= mu x push 2 cm): the point moves with the floor
    assert np.allclose(out, before + shift, atol=1e-6)
    out, _ = _resolve(collider, after, before, mu=0.0)
    assert np.allclose(out, before, atol=1e-6)


def _outside_margin(points: np.ndarray, verts: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """Signed distance to a convex closed mesh (positive outside): the largest plane
    distance over the faces is exact inside and a lower bound outside."""
    a, b, c = (verts[faces[:, k]] for k in range(3))
    n = np.cross(b - a, c - a)
    n /= np.linalg.norm(n, axis=1, keepdims=True)
    return ((points[:, None, :] - a[None]) * n[None]).sum(axis=2).max(axis=1)


def test_no_point_inside_a_fast_moving_sphere_mesh_at_any_substep() -> None:
    # a 10 cm sphere mesh crosses a hanging sheet at 6 m/s: 2.1 cm per substep, more than
    # its 1 cm thickness, so only the swept test can keep the sheet out of it
    model = grid_model(21, size=1.0, height=0.0, pins=tuple(range(21)))
    rest = model.rest_positions.copy()
    rest[:, 2] = -rest[:, 1]  # hang it vertically in the xz plane at y = 0
    rest[:, 1] = 0.0
    model = ClothModel(rest, model.masses, model.springs, model.kinds)
    settings = SimSettings.cloth(substeps=12, gravity=np.zeros(3))
    solver = XpbdSolver(model, settings)
    pos, vel = solver.make_state(rest), solver.make_state(np.zeros_like(rest))
    verts, faces = icosphere(2, 0.1)
    speed, dt = 6.0, 1.0 / 24.0
    collider = None
    worst = np.inf
    for frame in range(8):
        y0, y1 = -0.4 + speed * dt * frame, -0.4 + speed * dt * (frame + 1)
        centre0, centre1 = np.array([0.5, y0, -0.5]), np.array([0.5, y1, -0.5])
        if collider is None:
            collider = MeshCollider(verts + centre1, faces, previous=verts + centre0, outer=0.01)
        else:
            collider.move_to(verts + centre1)
        for k in range(settings.substeps):
            t0, t1 = k / settings.substeps, (k + 1) / settings.substeps
            begin_substep((collider,), t0, t1)
            solver.substep(pos, vel, dt / settings.substeps, None, (collider,), k)
            centre = centre0 + (centre1 - centre0) * t1
            d = _outside_margin(pos[:, :3].astype(float), verts + centre, faces)
            worst = min(worst, float(d.min()))
    assert worst > 0.0  # nobody inside the mesh after any substep
    assert worst > 0.005  # and nearly all of the thickness kept


def test_static_only_collision_lets_the_same_sphere_through() -> None:
    """The control for the test above: without the swept test points end up inside."""
    verts, faces = icosphere(2, 0.1)
    rng = np.random.default_rng(1)
    points = rng.uniform(-0.15, 0.15, (400, 3))
    points[:, 1] = 0.101  # just in front of the sphere, which moves 2.1 cm into them
    shift = np.array([0.0, 0.021, 0.0])
    collider = MeshCollider(verts + shift, faces, previous=verts, outer=0.01)
    collider.begin_substep(0.0, 1.0)
    state = _state(points)
    idx, normals, push = collider.contacts(state, 0.0)
    static = points.copy()
    static[idx] += (normals * push).T
    inside_static = _outside_margin(static, verts + shift, faces) < 0
    swept, _ = _resolve(collider, points, points)
    assert inside_static.sum() > 0
    assert (_outside_margin(swept, verts + shift, faces) >= 0).all()


def test_cloth_rests_on_a_sphere_mesh_outside_its_thickness() -> None:
    model = grid_model(25, size=1.0, height=0.5)
    model.rest_positions[:, :2] -= 0.5
    sim = Simulator(model, SimSettings.cloth())
    sim.reset(model.rest_positions)
    verts, faces = icosphere(3, 0.3, (0.0, 0.0, 0.0))
    collider = MeshCollider(verts, faces, outer=0.01, inner=0.02)
    for _ in range(48):
        out = sim.step(colliders=(collider,)).positions
        assert _outside_margin(out.astype(float), verts, faces).min() > 0.005
    assert sim.recoveries == 0
    top = np.linalg.norm(out[:, :2], axis=1) < 0.05  # the middle rests on the top: its
    # distance from the centre, not its height (up to 4 mm lower 5 cm off the axis)
    assert np.allclose(np.linalg.norm(out[top], axis=1), 0.3 + 0.01 + 0.005, atol=0.004)


def test_bad_meshes_are_refused_with_a_clear_message() -> None:
    with pytest.raises(ValueError, match="out of range"):
        MeshCollider(TRI, np.array([[0, 1, 3]]))
    with pytest.raises(ValueError, match="non-finite"):
        MeshCollider(np.array([[0, 0, np.nan], [1, 0, 0], [0, 1, 0]]), FACES)
    with pytest.raises(ValueError, match="differ in shape"):
        MeshCollider(TRI, FACES, previous=TRI[:2])
    # a degenerate triangle (repeated corner) is dropped, the rest still collides
    collider = MeshCollider(TRI, np.array([[0, 1, 1], [0, 1, 2]]))
    assert collider.triangles.shape == (1, 3)


def test_a_point_beyond_a_faces_edge_is_pushed_out_of_a_closed_two_sided_surface() -> None:
    # a two-sided sphere mesh standing still: the point starts outside it (1 cm in front of
    # the body) but behind the plane of face F, which it is not over, and ends 3 mm in front
    # of F; judged by F's plane alone it came from behind and was pushed 1.3 cm in (the
    # fast sphere through a coarse sheet showed it); its side is that of its nearest face
    verts, faces = icosphere(2, 0.1)
    tri = verts[faces]
    centroid = tri.mean(axis=1)
    normal = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    normal /= np.linalg.norm(normal, axis=1, keepdims=True)
    normal *= np.sign((normal * centroid).sum(axis=1))[:, None]  # outward

    def outside(p: np.ndarray) -> float:  # a convex body: the largest plane distance
        return float(((p[None] - tri[:, 0]) * normal).sum(axis=1).max())

    f = 0
    j = next(k for k in range(len(faces)) if k != f and len(set(faces[k]) & set(faces[f])) == 2)
    p0 = centroid[j] + 2.0 * (centroid[j] - centroid[f]) + 0.003 * normal[j]
    p1 = centroid[f] + 0.003 * normal[f]
    assert (p0 - tri[f, 0]) @ normal[f] < -1e-3 < 0.01 < outside(p0)  # behind F, outside
    assert min(outside(p0 + t * (p1 - p0)) for t in np.linspace(0.0, 1.0, 101)) > 0.002
    collider = MeshCollider(verts, faces, outer=0.01)
    pos, prev = np.zeros((1, 4), np.float32), np.zeros((1, 4), np.float32)
    pos[0, :3], prev[0, :3] = p1, p0
    begin_substep((collider,), 0.0, 1.0)
    assert resolve_positions((collider,), pos, prev, np.ones(1, bool), 0.0, 0.0) == 1
    assert outside(pos[0, :3].astype(float)) == pytest.approx(0.01, abs=1e-5)  # on the shell


def _slab() -> tuple[np.ndarray, np.ndarray]:
    """A box over x -1..1, y -0.2..0.2, z -0.1..0.1 in 12 triangles: Blender's scaled
    default cube, its vertices and loop triangles in Blender's order."""
    verts = np.array(
        [[x, y, z] for x in (-1.0, 1.0) for y in (-0.2, 0.2) for z in (-0.1, 0.1)], dtype=float
    )
    loops = ((0, 1, 3), (0, 3, 2), (2, 3, 7), (2, 7, 6), (6, 7, 5), (6, 5, 4))
    loops += ((4, 5, 1), (4, 1, 0), (2, 6, 4), (2, 4, 0), (7, 3, 1), (7, 1, 5))
    faces = np.array(loops, dtype=np.int64)
    return verts, faces


def test_a_point_under_a_box_edge_is_pushed_out_below_it() -> None:
    # regression: a draped cloth's point under the box's lower edge, 0.3 um inside the plane
    # of the side face and at the same distance from the side and the bottom faces: its
    # side was the side face plane's, "behind", so the bottom face's pair pushed it 3 cm up
    # into the box (a 12 x 12 sheet over a lying figure in Blender, recorded there, ended a
    # point 8.5 cm inside it)
    verts, faces = _slab()
    collider = MeshCollider(verts, faces, outer=0.01)
    pos, prev = np.zeros((1, 4), np.float32), np.zeros((1, 4), np.float32)
    prev[0, :3] = (-0.49984235, -0.19999969, -0.115)
    pos[0, :3] = (-0.4998594, -0.19873372, -0.11474731)
    begin_substep((collider,), 0.0, 1.0)
    resolve_positions((collider,), pos, prev, np.ones(1, bool), 0.005, 0.0)
    x, y, z = pos[0, :3].astype(float)
    assert max(abs(x) - 1.0, abs(y) - 0.2, abs(z) - 0.1) > 0.0  # outside the box
    assert z == pytest.approx(-0.1 - 0.01 - 0.005, abs=1e-4)  # on the shell under the bottom


def test_a_point_whose_pairs_agree_on_its_side_needs_no_closest_points_at_the_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a two-sided surface takes a point's side from its nearest triangle at the substep's
    # start, unless all its live pairs start on one side of their planes: then that side,
    # without closest points (over the middle of the slab's top: both top triangles in
    # front); under the box's edge the pairs disagree and the nearest decides as before
    from addon.sim.collide import mesh_contacts

    calls = []
    real = mesh_contacts.closest_points

    def counted(*args: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        calls.append(args[0].shape[1])
        return real(*args)

    monkeypatch.setattr(mesh_contacts, "closest_points", counted)
    verts, faces = _slab()
    collider = MeshCollider(verts, faces, outer=0.01)
    pos, prev = np.zeros((1, 4), np.float32), np.zeros((1, 4), np.float32)
    prev[0, :3] = (0.1, 0.02, 0.108)
    pos[0, :3] = (0.1, 0.02, 0.104)  # 4 mm above the top face, moving down
    begin_substep((collider,), 0.0, 1.0)
    assert resolve_positions((collider,), pos, prev, np.ones(1, bool), 0.005, 0.0) == 1
    assert pos[0, 2] == pytest.approx(0.1 + 0.01 + 0.005, abs=1e-6)  # out to the reach
    assert len(calls) == 1  # the contacts' closest points only
    calls.clear()
    collider = MeshCollider(verts, faces, outer=0.01)  # the box-edge regression's point
    prev[0, :3] = (-0.49984235, -0.19999969, -0.115)
    pos[0, :3] = (-0.4998594, -0.19873372, -0.11474731)
    begin_substep((collider,), 0.0, 1.0)
    resolve_positions((collider,), pos, prev, np.ones(1, bool), 0.005, 0.0)
    assert len(calls) == 2  # and the start's, for the side
    assert pos[0, 2] == pytest.approx(-0.1 - 0.01 - 0.005, abs=1e-4)
