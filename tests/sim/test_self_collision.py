"""Self-collision against numbers computed here: the shared correction of one contact, and
a cloth folded onto itself that must not pass through itself (counted by an independent
triangle-triangle test)."""

from __future__ import annotations

import numpy as np
import pytest

from addon.sim import ClothModel, SimSettings, Simulator
from addon.sim.mesh.springs import bend_springs, face_edges, merge_with_kinds, shear_springs
from addon.sim.self_collide.self_collision import SelfCollision
from addon.sim.self_collide.slack import cheapest_slack, farthest_rigidly2, moved_rigidly
from addon.sim.xpbd.solver import XpbdSolver

from .grids import folded_over, quad_grid
from .meshes import grid_triangles, intersecting_pairs
from .threads import needs_proc, other_threads_ticks, settled_ticks

D = 0.015


def _one_contact(inverse_masses: np.ndarray, depth: float) -> np.ndarray:
    """Point 3 above the centroid of triangle 0-1-2 (in z = 0) at ``D - depth``."""
    tri = np.array([[0.0, 0.0, 0.0], [0.3, 0.0, 0.0], [0.0, 0.3, 0.0]])
    point = np.array([[0.1, 0.1, D - depth]])
    rest = np.vstack([tri, point + np.array([5.0, 0.0, 0.0])])  # apart at rest: not excluded
    collision = SelfCollision(np.array([[0, 1, 2]]), rest, inverse_masses, D)
    now = np.vstack([tri, point])
    pos = XpbdSolver.make_state(now)
    prev = pos.copy()
    count = collision.resolve_positions(pos, prev, inverse_masses > 0, 0.0, 0.0)
    assert count == 1
    return pos[:, :3].astype(float) - now


def test_one_contact_is_shared_by_inverse_mass_and_barycentric_weight() -> None:
    depth = 0.006
    # equal masses, the point over the centroid (weights 1/3): the point takes
    # 1 / (1 + 3 / 9) = 3/4 of the depth, each corner 1/3 of that the other way
    moved = _one_contact(np.ones(4), depth)
    assert np.allclose(moved[3], [0, 0, 0.75 * depth], atol=1e-6)
    assert np.allclose(moved[:3], [[0, 0, -0.25 * depth]] * 3, atol=1e-6)
    # a pinned triangle: the point takes all of it; a pinned point: the triangle does
    moved = _one_contact(np.array([0.0, 0.0, 0.0, 1.0]), depth)
    assert np.allclose(moved[3], [0, 0, depth], atol=1e-6)
    assert np.allclose(moved[:3], 0, atol=1e-6)
    moved = _one_contact(np.array([1.0, 1.0, 1.0, 0.0]), depth)
    assert np.allclose(moved[:3], [[0, 0, -depth]] * 3, atol=1e-6)
    assert np.allclose(moved[3], 0, atol=1e-6)


def _folded_sheet(nx: int = 15, ny: int = 31, h: float = 0.04, r: float = 0.03):
    """A strip folded onto itself: rows along y go out flat (z = 0), round a half circle of
    radius ``r`` and come back over the first part at z = 2 r. The flat part is pinned."""
    positions, sizes, corners = quad_grid(nx, ny, h * (nx - 1))
    s = positions[:, 1].copy()  # arc length along the strip
    fold = 0.52
    positions[:, 1], positions[:, 2], _ = folded_over(s, fold, r)
    springs, kinds = merge_with_kinds(
        face_edges(sizes, corners),
        shear_springs(sizes, corners),
        bend_springs(sizes, corners, positions),
    )
    masses = np.where(s <= fold, 0.0, 0.3 / (nx * ny))
    return ClothModel(positions, masses, springs, kinds), grid_triangles(nx, ny)


def _run(
    self_collision: bool, frames: int = 36
) -> tuple[list[int], np.ndarray, ClothModel, list[np.ndarray]]:
    model, triangles = _folded_sheet()
    settings = SimSettings.cloth(self_collision=self_collision, self_distance=D, substeps=12)
    sim = Simulator(model, settings, triangles=triangles)
    counts, out, late = [], model.rest_positions, []
    for frame in range(frames):
        out = sim.step().positions
        if frame % 3 == 2:
            counts.append(intersecting_pairs(out, triangles))
        if frame >= frames // 2:
            late.append(out.copy())
    assert sim.recoveries == 0
    return counts, out, model, late


def test_a_folded_cloth_does_not_pass_through_itself() -> None:
    counts, _, model, late = _run(True)
    assert counts == [0] * len(counts)
    # the flap came down and lies on the pinned part, about the distance above it; it still
    # bounces there (its middle's height swings 0.026-0.038 from frame to frame), so the
    # heights are judged over the second half of the run, not at one frame
    flap = model.rest_positions[:, 2] > 0.059
    middle = flap & (np.abs(model.rest_positions[:, 1] - 0.25) < 0.05)
    assert np.median([out[flap, 2].max() for out in late]) < 0.06
    assert min(out[middle, 2].min() for out in late) > 0.3 * D  # never much closer
    assert np.median([out[middle, 2].mean() for out in late]) < 0.035  # came down from 0.06


def test_without_self_collision_the_same_fold_passes_through() -> None:
    counts, out, model, _ = _run(False)
    assert max(counts) > 0  # the control: the scene above needs self-collision
    flap = model.rest_positions[:, 2] > 0.059
    assert out[flap, 2].min() < -0.05


def test_self_collision_setting_needs_triangles_and_the_xpbd_solver() -> None:
    model, triangles = _folded_sheet(5, 9)
    sim = Simulator(model, SimSettings.cloth(self_collision=True))
    assert any("needs the cloth's triangles" in w for w in sim.warnings)
    sim = Simulator(model, SimSettings.cloth(self_collision=True, solver="CLASSIC"), triangles)
    assert any("needs the XPBD solver" in w for w in sim.warnings)


def test_cloth_of_collapsed_triangles_only_turns_self_collision_off_with_a_warning() -> None:
    # every triangle with a repeated corner: the patch tree had nothing to hold and the
    # build stopped with an IndexError in ``minimum.reduceat``
    model, _ = _folded_sheet(5, 9)
    collapsed = np.array([[0, 0, 1], [2, 3, 3]])
    sim = Simulator(model, SimSettings.cloth(self_collision=True), triangles=collapsed)
    assert any("needs the cloth's triangles" in w for w in sim.warnings)
    with pytest.raises(ValueError, match="three distinct corners"):
        SelfCollision(collapsed, model.rest_positions, np.ones(len(model.rest_positions)), D)


@pytest.mark.parametrize("dense", [False, True], ids=["tree", "dense"])
def test_a_point_is_never_paired_with_its_own_triangle(dense: bool) -> None:
    # a 3 x 3 sheet far apart at rest, then every point crumpled into a 1 mm ball: the pairs
    # found are exactly the point-triangle pairs without a shared vertex (the own pairs
    # dropped through the excluded keys, nothing else excluded)
    rest = np.stack(np.meshgrid(np.arange(3.0), np.arange(3.0), [0.0]), -1).reshape(-1, 3)
    triangles = grid_triangles(3, 3)
    collision = SelfCollision(triangles, rest, np.ones(len(rest)), D, dense=dense)
    crumpled = np.random.default_rng(3).uniform(0.0, 0.001, rest.shape)
    point, tri, _ = collision._pairs_within(crumpled, D)
    found = set(zip(point.tolist(), tri.tolist(), strict=True))
    expected = {(p, t) for p in range(9) for t in range(len(triangles)) if p not in triangles[t]}
    assert found == expected


def _point_triangle_distances(p: np.ndarray, a: np.ndarray, b: np.ndarray, c: np.ndarray):
    """Exact distances (float64) from points to triangles, rows of ``(k, 3)`` arrays: the
    plane's when the projection falls inside, else the nearest of the three segments."""
    n = np.cross(b - a, c - a)
    n /= np.linalg.norm(n, axis=1, keepdims=True)
    h = np.einsum("ij,ij->i", p - a, n)
    x = p - h[:, None] * n
    inside = np.ones(len(p), dtype=bool)
    for u, v in ((a, b), (b, c), (c, a)):
        inside &= np.einsum("ij,ij->i", np.cross(v - u, x - u), n) >= 0
    best = np.where(inside, np.abs(h), np.inf)
    for u, v in ((a, b), (b, c), (c, a)):
        t = np.clip(np.einsum("ij,ij->i", p - u, v - u) / np.einsum("ij,ij->i", v - u, v - u), 0, 1)
        best = np.minimum(best, np.linalg.norm(p - (u + t[:, None] * (v - u)), axis=1))
    return best


def _brute_pairs(
    x: np.ndarray, rest: np.ndarray, triangles: np.ndarray, reach: float, excluded: float
):
    """Every (point, triangle without it) within ``reach`` now and beyond ``excluded`` at
    rest (a margin of 0.1 % either side of the rest bound, where float32 may round)."""
    point, tri = np.meshgrid(np.arange(len(x)), np.arange(len(triangles)), indexing="ij")
    point, tri = point.ravel(), tri.ravel()
    corners = triangles[tri]
    free = ~(corners == point[:, None]).any(axis=1)
    point, tri, corners = point[free], tri[free], corners[free]
    now = _point_triangle_distances(x[point], *(x[corners[:, k]] for k in range(3)))
    then = _point_triangle_distances(rest[point], *(rest[corners[:, k]] for k in range(3)))
    sure = (now < reach) & (then >= excluded * 1.001)
    unsure = (now < reach) & (np.abs(then - excluded) < excluded * 0.001)
    return set(zip(point[sure].tolist(), tri[sure].tolist(), strict=True)), set(
        zip(point[unsure].tolist(), tri[unsure].tolist(), strict=True)
    )


def _sheet_shapes(n: int, h: float):
    rest, _, _ = quad_grid(n, n, h * (n - 1))
    s, width = rest[:, 1], rest[:, 0]
    shapes = {}
    for radius in (0.006, 0.012):  # rolled up along y: layers a few mm apart
        angle = s / radius
        shapes[f"rolled {radius}"] = np.stack(
            [width, radius * np.sin(angle), radius * (1 - np.cos(angle)) + 0.0015 * angle], 1
        )
    y, z, _ = folded_over(s, 0.5 * s.max(), 0.006)  # folded flat over itself
    shapes["folded"] = np.stack([width, y, z], 1)
    shapes["crumpled"] = 0.3 * rest + np.random.default_rng(5).normal(0.0, 0.004, rest.shape)
    return rest, shapes


@pytest.mark.parametrize("dense", [False, True], ids=["tree", "dense"])
def test_the_search_finds_every_pair_a_brute_force_search_finds(dense: bool) -> None:
    # a fine sheet (5 mm grid, the distance three edges) rolled, folded and crumpled: the
    # pairs within the query's reach and beyond the exclusion at rest are those of a
    # search over all point-triangle pairs with its own distance formula, by the patch
    # tree and by the all-pairs pass of small cloths
    n, h = 20, 0.005
    rest, shapes = _sheet_shapes(n, h)
    triangles = grid_triangles(n, n)
    collision = SelfCollision(triangles, rest, np.ones(len(rest)), D, dense=dense)
    assert abs(collision.excluded - 4 * D) < 1e-9  # edges a third of the distance: a fine mesh
    reach = 2 * D
    for name, x in shapes.items():
        point, tri, dist = collision._pairs_within(x, reach)
        found = set(zip(point.tolist(), tri.tolist(), strict=True))
        sure, unsure = _brute_pairs(x, rest, triangles, reach, collision.excluded)
        assert sure, name  # the shape does bring rest-far pairs near
        assert sure <= found <= sure | unsure, name
        assert np.all(dist < reach)


def test_the_all_pairs_pass_gives_the_tree_search_bit_for_bit() -> None:
    # the same pairs, in the same order, with the same float32 distances: a small cloth's
    # contacts (and so its positions) do not depend on which search found them
    n, h = 20, 0.005
    rest, shapes = _sheet_shapes(n, h)
    triangles = grid_triangles(n, n)
    tree = SelfCollision(triangles, rest, np.ones(len(rest)), D, dense=False)
    dense = SelfCollision(triangles, rest, np.ones(len(rest)), D, dense=True)
    for name, x in shapes.items():
        for reach in (D, 2 * D, 3 * D):
            got, want = dense._pairs_within(x, reach), tree._pairs_within(x, reach)
            assert want[0].size, name
            for a, b in zip(got, want, strict=True):
                assert a.dtype == b.dtype and np.array_equal(a, b), (name, reach)


@needs_proc
def test_the_all_pairs_pass_runs_on_one_thread() -> None:
    # it was a matrix product, which OpenBLAS spread over a second thread that then spun:
    # make demo's cape took 127 ms of CPU a 64 ms frame; 200 passes here gave the other
    # thread 1.94 s of CPU (194 ticks), now none
    n, h = 24, 0.02  # 576 points, 1,058 triangles: about the demo cape's pass
    rest, shapes = _sheet_shapes(n, h)
    collision = SelfCollision(grid_triangles(n, n), rest, np.ones(len(rest)), D, dense=True)
    x = shapes["crumpled"]
    collision._pairs_within(x, 2 * D)
    before = settled_ticks()
    for _ in range(200):
        collision._pairs_within(x, 2 * D)
    assert other_threads_ticks() - before <= 5


@needs_proc
def test_the_rigid_fit_of_a_big_cloth_runs_on_one_thread() -> None:
    # its covariance and turn were matrix products: 40k points, 200 fits gave OpenBLAS's
    # thread 132 ticks; the fit still takes out a turn and a shift exactly
    rng = np.random.default_rng(2)
    built = rng.uniform(-1.0, 1.0, (40_000, 3))
    c, s = np.cos(0.3), np.sin(0.3)
    here = built @ np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]).T + [0.5, -0.2, 0.1]
    before = settled_ticks()
    for _ in range(200):
        moved = moved_rigidly(built, here)
        farthest = farthest_rigidly2(built, here)
    assert other_threads_ticks() - before <= 5
    assert np.abs(moved).max() < 1e-5 and farthest < 1e-10


def test_the_motion_beyond_the_rigid_fit_is_kabschs() -> None:
    # against a Kabsch fit written here (matrix products over 300 points): a cloud turned,
    # shifted and bent; the farthest point's squared motion beyond the fit, and every row
    rng = np.random.default_rng(7)
    built = rng.uniform(-0.3, 0.3, (300, 3))
    c, s = np.cos(1.1), np.sin(1.1)
    turn = np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])
    bent = built + np.stack([0 * built[:, 0], 0 * built[:, 0], 0.2 * built[:, 0] ** 2], 1)
    here = bent @ turn.T + [0.4, 0.1, -0.7]
    b, x = built - built.mean(axis=0), here - here.mean(axis=0)
    u, _, vt = np.linalg.svd(b.T @ x)
    if np.linalg.det(u @ vt) < 0:
        u[:, -1] = -u[:, -1]
    expected = x @ (u @ vt).T - b
    assert np.allclose(moved_rigidly(built, here), expected, atol=1e-6)
    want = float((expected**2).sum(axis=1).max())
    assert want > 1e-4  # the bend is not a rigid motion
    assert abs(farthest_rigidly2(built, here) - want) < 1e-12


def test_the_search_is_the_all_pairs_pass_up_to_a_million_pairs() -> None:
    rest, _, _ = quad_grid(20, 20, 0.1)  # 400 points, 722 triangles: 288,800 pairs
    assert SelfCollision(grid_triangles(20, 20), rest, np.ones(400), D)._all_pairs is not None
    rest, _, _ = quad_grid(40, 40, 0.2)  # 1,600 points, 3,042 triangles: 4.9M pairs
    assert SelfCollision(grid_triangles(40, 40), rest, np.ones(1600), D)._all_pairs is None


def test_a_flat_sheet_squeezed_or_tilted_looks_at_no_pair() -> None:
    # flat patches drop out whole: not one point-triangle pair is enumerated for a tilted
    # sheet squeezed to 80 % along one side, nor for a gentle wave (a slope under 25 degrees)
    n, h = 40, 0.005
    rest, _, _ = quad_grid(n, n, h * (n - 1))
    triangles = grid_triangles(n, n)
    collision = SelfCollision(triangles, rest, np.ones(len(rest)), D, dense=False)
    tilt = np.array([[1.0, 0.0, 0.0], [0.0, 0.6, 0.8], [0.0, -0.8, 0.6]])
    squeezed = (rest * [0.8, 1.0, 1.0]) @ tilt.T
    wave = rest + np.stack([0 * rest[:, 0], 0 * rest[:, 0], 0.01 * np.sin(rest[:, 0] / 0.03)], 1)
    for x in (squeezed, wave):
        point, _, _ = collision._pairs_within(x, 2 * D)
        assert point.size == 0 and collision.raw_pairs == 0


def test_the_exclusion_widens_on_fine_meshes_only() -> None:
    # median edge >= half the distance: the distance plus twice the largest slack (2 D);
    # <= a third of it: 4 D; linear between
    for edge, expected in ((0.02, 2.0), (0.0075, 2.0), (0.005, 4.0), (0.002, 4.0), (0.00625, 3.0)):
        rest, _, _ = quad_grid(5, 5, edge * 4)
        got = SelfCollision(grid_triangles(5, 5), rest, np.ones(25), D).excluded / D
        assert abs(got - expected) < 1e-6, (edge, got)


def _turn(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _folding(rest: np.ndarray, theta: float, radius: float = 0.006) -> np.ndarray:
    """``rest`` (a sheet in z = 0) bent up by ``theta`` round a line across y at its middle:
    an arc of ``radius``, then straight on along the arc's end tangent."""
    s, width = rest[:, 1], rest[:, 0]
    fold = 0.5 * s.max()
    y, z = s.copy(), np.zeros_like(s)
    angle = np.clip((s - fold) / radius, 0.0, theta)
    on = s > fold
    y[on] = fold + radius * np.sin(angle[on])
    z[on] = radius * (1 - np.cos(angle[on]))
    beyond = s - fold - radius * theta
    past = beyond > 0
    y[past] += beyond[past] * np.cos(theta)
    z[past] += beyond[past] * np.sin(theta)
    return np.stack([width, y, z], 1)


def test_kept_pairs_hold_every_pair_within_the_distance_at_every_substep() -> None:
    # a fine sheet folding over onto itself while it turns half round and moves: at every
    # substep the kept candidates hold every pair a brute-force search finds within the
    # distance (and beyond the exclusion at rest), though found again far less often
    n, h = 16, 0.005
    rest, _, _ = quad_grid(n, n, h * (n - 1))
    triangles = grid_triangles(n, n)
    collision = SelfCollision(triangles, rest, np.ones(len(rest)), D)
    steps = 36
    prev = XpbdSolver.make_state(rest)
    for step in range(1, steps + 1):
        u = step / steps
        x = _folding(rest, np.pi * min(1.0, 1.2 * u)) @ _turn(np.pi * u).T + [0.3 * u, 0, 0]
        pos = XpbdSolver.make_state(x)
        pairs = collision._candidates(pos, prev, D)
        found = set()
        if pairs is not None:
            found = set(zip(pairs.point.tolist(), pairs.tri.tolist(), strict=True))
        sure, _ = _brute_pairs(x, rest, triangles, D, collision.excluded)
        assert sure <= found, step
        prev = pos
    assert len(sure) > 50  # the fold did bring rest-far pairs within the distance
    assert collision.rebuilds < steps / 3, collision.rebuilds


def test_a_sheet_turning_and_moving_as_a_whole_keeps_its_pairs() -> None:
    # folded, then turned by a quarter and moved by 0.2 m over 12 substeps without changing
    # shape: no distance within it changes, so its pairs are found once
    n, h = 16, 0.005
    rest, _, _ = quad_grid(n, n, h * (n - 1))
    triangles = grid_triangles(n, n)
    collision = SelfCollision(triangles, rest, np.ones(len(rest)), D)
    folded = _folding(rest, np.pi)
    prev = XpbdSolver.make_state(folded)
    counts = []
    for step in range(1, 13):
        u = step / 12
        pos = XpbdSolver.make_state(folded @ _turn(0.5 * np.pi * u).T + [0.2 * u, 0.1 * u, 0])
        pairs = collision._candidates(pos, prev, D)
        counts.append(0 if pairs is None else pairs.count)
        prev = pos
    assert collision.rebuilds == 1
    assert counts[0] > 50 and counts == [counts[0]] * 12


def test_a_sheet_moving_within_the_slack_keeps_its_pairs_without_the_rigid_fit(
    monkeypatch,
) -> None:
    # every point moved less than the slack as it stands: the pairs hold (standing still is
    # a rigid motion too) and the best-fit rotation is not looked for
    from addon.sim.self_collide import self_collision

    n, h = 16, 0.005
    rest, _, _ = quad_grid(n, n, h * (n - 1))
    collision = SelfCollision(grid_triangles(n, n), rest, np.ones(len(rest)), D)
    folded = _folding(rest, np.pi)
    start = XpbdSolver.make_state(folded)
    first = collision._candidates(start, start, D)
    assert first is not None and collision.rebuilds == 1
    slack = collision._slack  # 0.25-0.5 distances: 3.75-7.5 mm

    def no_fit(built: np.ndarray, here: np.ndarray) -> float:
        raise AssertionError("the rigid fit was looked for")

    monkeypatch.setattr(self_collision, "farthest_rigidly2", no_fit)
    wobble = np.random.default_rng(5).uniform(-1.0, 1.0, folded.shape) * (0.5 * slack / 2.0)
    moved = XpbdSolver.make_state(folded + wobble)  # each point at most 0.87 slack away
    assert collision._candidates(moved, start, D) is first
    assert collision.rebuilds == 1


def test_the_slack_shrinks_where_pairs_crowd_just_beyond_the_distance() -> None:
    # slacks tried: 0.25 D .. 0.5 D in steps of 0.05 D (reaches 1.5 D .. 2 D). 200k pairs
    # between 1.65 D and 2 D: the reaches up to 1.6 D hold none, and of those the widest
    # slack (0.3 D) lasts longest for the fixed cost (4 pairs a point, 1,000 points)
    crowd = np.sort(np.random.default_rng(2).uniform(1.65 * D, 2.0 * D, 200_000))
    assert abs(cheapest_slack(0.5 * D, D, crowd, 0.5 * D, 1000) - 0.3 * D) < 1e-12
    # ten pairs: the fixed cost decides, the widest slack; no query yet: the widest too
    few = np.sort(np.random.default_rng(2).uniform(1.0 * D, 2.0 * D, 10))
    assert cheapest_slack(0.5 * D, D, few, 0.5 * D, 1000) == 0.5 * D
    assert cheapest_slack(0.4 * D, D, None, 0.0, 1000) == 0.4 * D
    # beyond the last reach (1.5 D) the count is grown at its last rate, at least cubic:
    # 1,000 pairs reached uniformly over 1.0-1.5 D grow to >= 1000 (2 / 1.5) ** 3 = 2,370
    # at 2 D, so the cost (1000 + 2370) / 0.5 D beats (1000 + 1000) / 0.25 D: not 0.25 D
    even = np.linspace(1.0 * D, 1.5 * D, 1000, endpoint=False)
    assert cheapest_slack(0.5 * D, D, even, 0.25 * D, 250) > 0.25 * D


def test_contacts_through_the_kept_pairs_are_those_of_every_pair(monkeypatch) -> None:
    # a sheet folding onto itself while it turns and moves, pressed a little each step: the
    # positions resolved through the patch tree's kept pairs are those resolved through every
    # pair (point, triangle without it, beyond the exclusion at rest), substep by substep
    from addon.sim.collide.candidates import Candidates

    n, h = 16, 0.005
    rest, _, _ = quad_grid(n, n, h * (n - 1))
    triangles = grid_triangles(n, n)
    steps = 24

    def shape(step: int) -> np.ndarray:
        u = step / steps
        x = _folding(rest, np.pi * min(1.0, 1.2 * u), radius=0.004)
        return x @ _turn(np.pi * u).T + [0.3 * u, 0, 0]

    def run(every: bool) -> tuple[list[np.ndarray], int]:
        collision = SelfCollision(triangles, rest, np.ones(len(rest)), D)
        if every:
            point, tri = np.meshgrid(np.arange(len(rest)), np.arange(len(triangles)), indexing="ij")
            point, tri = point.ravel(), tri.ravel()
            corners = triangles[tri]
            free = ~(corners == point[:, None]).any(axis=1)
            point, tri, corners = point[free], tri[free], corners[free]
            then = _point_triangle_distances(rest[point], *(rest[corners[:, k]] for k in range(3)))
            apart = then >= collision.excluded
            all_pairs = Candidates(collision.triangles, D)
            all_pairs.refresh(
                XpbdSolver.make_state(rest),
                None,
                np.arange(len(rest)),
                lambda ids: (point[apart], tri[apart], np.zeros(ids.size, dtype=np.float32)),
            )
            monkeypatch.setattr(collision, "_candidates", lambda pos, prev, d: all_pairs)
        out, contacts = [], 0
        prev = XpbdSolver.make_state(shape(0))
        for step in range(1, steps + 1):
            pos = XpbdSolver.make_state(shape(step))
            movable = np.ones(len(rest), dtype=bool)
            contacts += collision.resolve_positions(pos, prev, movable, 0.0, 0.0)
            out.append(pos[:, :3].copy())
            prev = pos
        return out, contacts

    (kept, found), (every, all_found) = run(False), run(True)
    assert found == all_found and found > 100  # the fold brought many pairs into contact
    for a, b in zip(kept, every, strict=True):
        assert np.abs(a - b).max() < 1e-6
