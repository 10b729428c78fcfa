"""Review of the permuted pass, the Kempe recolouring, the guard, the colliders and the affine
inverse: edge cases the first tests did not reach.

Two bugs they found are fixed and guarded here: the explosion guard raised on a cloth without
points, and ``affine_inverse`` handed non-finite matrices to LAPACK (NaN raised, inf hung).
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from addon.sim import ClothModel, SimSettings, Simulator, face_edges
from addon.sim.collide.colliders import Plane, Scratch, Sphere, resolve_positions
from addon.sim.guard import ExplosionGuard
from addon.sim.mesh.affine import affine_inverse
from addon.sim.xpbd.coloring import MAX_TAIL_SPRINGS, colour_groups
from addon.sim.xpbd.constraint_pass import ConstraintGroup, Mode, PassBuffers, solve_group
from addon.sim.xpbd.solver import XpbdSolver, as_complex
from addon.sim.xpbd.tethers import TetherSlot
from addon.sim.xpbd.work_state import PassPlan, pass_plans

from .grids import quad_grid
from .helpers import grid_model

DT = 0.002

# -- the permuted pass ----------------------------------------------------------------------


def _group(pairs: np.ndarray, n: int, rng: np.random.Generator, mode: Mode) -> ConstraintGroup:
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    a, b = pairs[:, 0], pairs[:, 1]
    inv = rng.uniform(0.0, 2.0, n)
    g = ConstraintGroup(
        mode=mode,
        ends=np.concatenate([a, b]),
        rest=rng.uniform(0.1, 1.0, a.size).astype(np.float32),
        stiffness=rng.uniform(1e2, 1e5, a.size),
        inv_a=inv[a],
        inv_b=inv[b],
        limit=rng.uniform(0.5, 2.0, a.size).astype(np.float32)
        if mode == Mode.LIMITED_SPRING
        else None,
        hard_stiffness=np.full(a.size, 1e5) if mode == Mode.LIMITED_SPRING else None,
    )
    g.prepare(DT)
    return g


def _random_groups(rng: np.random.Generator, n: int, m: int) -> list[ConstraintGroup]:
    pairs = rng.integers(0, n, (m, 2))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    if not pairs.size:
        return []
    groups = []
    for members in colour_groups(pairs, n):
        g = _group(pairs[members], n, rng, Mode(int(rng.integers(0, 3))))
        if rng.random() < 0.4:
            g.period, g.phase = 2, int(rng.integers(0, 2))
        groups.append(g)
    return [groups[i] for i in rng.permutation(len(groups))]


def _natural(
    state: np.ndarray, groups: list[ConstraintGroup], slots: list[TetherSlot], residue: int = 0
) -> np.ndarray:
    """Each group by gather/scatter in the natural order, then each slot the same way."""
    out = state.copy()
    points = as_complex(out)
    buffers = PassBuffers(max((g.size for g in groups), default=0))
    for g in groups:
        if residue % g.period == g.phase:
            solve_group(points, g, buffers.views(g.size))
    for slot in slots:
        anchors = points[slot.pins].copy()
        moved = points[slot.points].copy()
        slot.project(moved, anchors)
        points[slot.points] = moved
    return out


def _state(rng: np.random.Generator, n: int) -> np.ndarray:
    return XpbdSolver.make_state(rng.normal(0.0, 1.0, (n, 3)))


def _plans(groups: list[ConstraintGroup], n: int, slots: list[TetherSlot]) -> list[PassPlan]:
    buffers = PassBuffers(max((g.size for g in groups), default=0))
    return pass_plans(groups, [buffers.views(g.size) for g in groups], n, slots)


def _slots(rng: np.random.Generator, n: int, pinned: np.ndarray, count: int) -> list[TetherSlot]:
    pins, free = np.flatnonzero(pinned), np.flatnonzero(~pinned)
    out = []
    for _ in range(count):
        points = free if rng.random() < 0.6 else free[rng.random(free.size) < 0.5]
        if points.size:
            chosen = pins[rng.integers(0, pins.size, points.size)]
            out.append(TetherSlot(points, chosen, rng.uniform(0.1, 1.0, points.size)))
    return out


def test_an_empty_plan_leaves_the_state_alone() -> None:
    rng = np.random.default_rng(0)
    for n in (0, 1, 5):
        plans = _plans([], n, [])
        assert len(plans) == 1 and not plans[0].steps and plans[0].back is None
        state = _state(rng, n)
        out = state.copy()
        plans[0].run(as_complex(out))
        assert np.array_equal(out, state)


def test_only_small_groups_never_leave_the_natural_order() -> None:
    rng = np.random.default_rng(1)
    n = 60
    groups = [_group([[0, 1], [2, 3]], n, rng, Mode.SPRING), _group([[1, 2]], n, rng, Mode.LIMITER)]
    plan = _plans(groups, n, [])[0]
    assert all(step.reorder is None and step.ids is not None for step in plan.steps)
    assert plan.back is None
    state = _state(rng, n)
    out = state.copy()
    plan.run(as_complex(out))
    assert np.array_equal(out, _natural(state, groups, []))


def test_a_group_covering_every_point_and_the_smallest_states() -> None:
    rng = np.random.default_rng(2)
    for n in (2, 4, 10):
        ids = rng.permutation(n)
        pairs = ids.reshape(-1, 2)  # a perfect matching: 2g == N, nothing left untouched
        groups = [_group(pairs, n, rng, mode) for mode in Mode]
        plan = _plans(groups, n, [])[0]
        assert all(step.ids is None for step in plan.steps)
        state = _state(rng, n)
        out = state.copy()
        for _ in range(3):
            plan.run(as_complex(out))
        expected = state
        for _ in range(3):
            expected = _natural(expected, groups, [])
        assert np.array_equal(out, expected)


def test_only_tether_slots() -> None:
    rng = np.random.default_rng(3)
    n = 30
    pinned = np.zeros(n, dtype=bool)
    pinned[[0, 7, 29]] = True
    slots = _slots(rng, n, pinned, 2)
    plans = _plans([], n, slots)
    assert len(plans) == 1
    state = _state(rng, n)
    out = state.copy()
    plans[0].run(as_complex(out))
    assert np.array_equal(out, _natural(state, [], slots))
    assert np.array_equal(out[pinned], state[pinned])


def test_a_residue_without_groups_still_runs_its_tethers() -> None:
    rng = np.random.default_rng(4)
    n = 24
    pairs = np.arange(n).reshape(-1, 2)
    groups = [_group(pairs, n, rng, Mode.SPRING), _group(pairs[:3], n, rng, Mode.LIMITER)]
    for g in groups:
        g.period, g.phase = 2, 1  # nothing on even substeps
    pinned = np.zeros(n, dtype=bool)
    pinned[[0, 5]] = True
    for slots in ([], _slots(rng, n, pinned, 2)):
        plans = _plans(groups, n, slots)
        assert len(plans) == 2
        assert not any(step.group is not None for step in plans[0].steps)
        state = _state(rng, n)
        for residue, plan in enumerate(plans):
            out = state.copy()
            plan.run(as_complex(out))
            assert np.array_equal(out, _natural(state, groups, slots, residue))


def test_random_plans_are_bit_identical_to_the_natural_order() -> None:
    rng = np.random.default_rng(5)
    for _ in range(250):
        n = int(rng.integers(1, 40))
        groups = _random_groups(rng, n, int(rng.integers(0, 80)))
        slots: list[TetherSlot] = []
        pinned = rng.random(n) < 0.3
        if rng.random() < 0.5 and pinned.any() and (~pinned).any():
            slots = _slots(rng, n, pinned, int(rng.integers(1, 3)))
        plans = _plans(groups, n, slots)
        state = _state(rng, n)
        for index in range(4):
            residue = index % len(plans)
            out = state.copy()
            plans[residue].run(as_complex(out))
            assert np.array_equal(out, _natural(state, groups, slots, residue))


@pytest.mark.parametrize(
    "model",
    [
        ClothModel(np.zeros((1, 3)), np.ones(1), np.empty((0, 2), dtype=np.int64)),
        ClothModel(np.zeros((1, 3)), np.zeros(1), np.empty((0, 2), dtype=np.int64)),
        ClothModel([[0.0, 0, 0], [1, 0, 0]], [0.0, 1.0], [[0, 1]]),
        grid_model(4, pins=tuple(range(16))),
        ClothModel(np.random.default_rng(0).random((5, 3)), np.ones(5), np.empty((0, 2), int)),
    ],
    ids=["one free point", "one pinned point", "two points", "all pinned", "no springs"],
)
def test_tiny_and_degenerate_cloths_step(model: ClothModel) -> None:
    sim = Simulator(model, SimSettings.cloth())
    for _ in range(3):
        out = sim.step(
            colliders=(Plane([0, 0, -0.5], [0, 0, 1]), Sphere([0, 0, 0.2], 0.1))
        ).positions
        assert np.isfinite(out).all()
    assert sim.recoveries == 0
    assert np.array_equal(out[model.pinned], model.rest_positions[model.pinned].astype(np.float32))


# -- colouring ------------------------------------------------------------------------------


def _check_partition(pairs: np.ndarray, groups: list[np.ndarray]) -> None:
    every = np.concatenate(groups) if groups else np.empty(0, dtype=np.int64)
    assert np.array_equal(np.sort(every), np.arange(pairs.shape[0]))
    for g in groups:
        assert g.size and np.array_equal(g, np.sort(g))
        ends = pairs[g].ravel()
        assert np.unique(ends).size == ends.size


def test_colouring_small_random_multigraphs() -> None:
    # repeated springs (both directions too); no self-loops: ClothModel and the limiters drop
    # them before colour_groups sees them
    rng = np.random.default_rng(6)
    for _ in range(1500):
        n = int(rng.integers(2, 30))
        pairs = rng.integers(0, n, (int(rng.integers(0, 60)), 2))
        pairs = pairs[pairs[:, 0] != pairs[:, 1]]
        if pairs.size and rng.random() < 0.4:
            repeat = pairs[rng.integers(0, len(pairs), 5)]
            pairs = np.concatenate([pairs, repeat, repeat[:, ::-1]])
        _check_partition(pairs, colour_groups(pairs, n))


def test_colouring_stars_and_odd_cycles() -> None:
    for spokes in (3, 32, 33, 40, 70):  # around MAX_COLOURS
        star = np.stack([np.zeros(spokes, np.int64), np.arange(1, spokes + 1)], axis=1)
        groups = colour_groups(star, spokes + 1)
        _check_partition(star, groups)
        assert len(groups) == spokes
        start = spokes + 1
        ring = np.arange(start, start + 7)
        cycle = np.stack([ring, np.roll(ring, -1)], axis=1)
        link = np.array([[1, start]])
        pairs = np.concatenate([star, cycle, link])
        groups = colour_groups(pairs, start + 7)
        _check_partition(pairs, groups)
        assert len(groups) == spokes  # the cycle's third colour fits in the star's


@pytest.mark.parametrize("nx", [100, 320])
def test_colouring_a_shuffled_grid_is_quick_and_small_tails_are_absorbed(nx: int) -> None:
    # an imported mesh has its vertices in any order: Kempe walks in Python place a tail of
    # up to MAX_TAIL_SPRINGS (100 x 100: 19,800 springs, 4 groups); a bigger one (320 x 320:
    # 204,160 springs, a tail of ~24k) keeps a group of its own instead of a 0.6 s walk
    _, sizes, corners = quad_grid(nx, nx)
    n = nx * nx
    perm = np.random.default_rng(7).permutation(n)
    shuffled = np.sort(perm[face_edges(sizes, corners)], axis=1)
    shuffled = shuffled[np.argsort(shuffled[:, 0] * n + shuffled[:, 1])]
    started = time.process_time()
    groups = colour_groups(shuffled, n)
    spent = time.process_time() - started
    assert len(groups) == (4 if nx == 100 else 5)
    assert groups[-1].size > MAX_TAIL_SPRINGS or nx == 100
    assert spent < 0.4, f"{spent:.2f} s CPU for {len(shuffled)} springs"  # 0.07 s here
    _check_partition(shuffled, groups)


# -- the guard ------------------------------------------------------------------------------


def _storage(points: np.ndarray, dtype: type) -> np.ndarray:
    out = np.zeros((points.shape[0], 4), dtype=dtype)
    out[:, :3] = points
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_guard_edge_cases_on_both_storages(dtype: type) -> None:
    pinned_all = grid_model(3, pins=tuple(range(9)))
    guard = ExplosionGuard(pinned_all, max_speed=10.0, max_stretch=2.0)
    pos = _storage(pinned_all.rest_positions * 50.0, dtype)  # pins follow the animation
    vel = _storage(np.full((9, 3), 1e6), dtype)
    assert guard.problem(pos, vel, pos * 0, 0.04) is None
    pos[4, 1] = np.inf
    assert guard.problem(pos, vel) == "non-finite positions or velocities"
    no_springs = ClothModel(np.zeros((3, 3)), np.ones(3), np.empty((0, 2), dtype=np.int64))
    guard = ExplosionGuard(no_springs, max_speed=10.0, max_stretch=2.0)
    pos = _storage(np.arange(9.0).reshape(3, 3) * 100.0, dtype)
    assert guard.problem(pos, np.zeros_like(pos)) is None
    vel = np.zeros_like(pos)
    vel[2, 0] = -11.0
    assert guard.problem(pos, vel).startswith("a point moves at 11")
    vel[2, 0] = np.nan
    assert guard.problem(pos, vel) == "non-finite positions or velocities"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_guard_accepts_a_cloth_without_points(dtype: type) -> None:
    empty = ClothModel(np.empty((0, 3)), np.empty(0), np.empty((0, 2), dtype=np.int64))
    guard = ExplosionGuard(empty, max_speed=10.0, max_stretch=2.0)
    rows = np.zeros((0, 4), dtype=dtype)
    assert guard.problem(rows, rows, rows, 0.04) is None


def test_a_simulator_without_points_steps() -> None:
    empty = ClothModel(np.empty((0, 3)), np.empty(0), np.empty((0, 2), dtype=np.int64))
    sim = Simulator(empty, SimSettings.cloth())
    assert sim.step().positions.shape == (0, 3)


# -- colliders ------------------------------------------------------------------------------


def _expected_plane(
    p: np.ndarray,
    before: np.ndarray,
    point: np.ndarray,
    normal: np.ndarray,
    margin: float,
    mu: float,
) -> np.ndarray:
    n = normal / np.linalg.norm(normal)
    height = p @ n - (point @ n + margin)
    if height >= 0.0:
        return p
    push = -height
    out = p + n * push
    moved = out - before
    tangential = moved - n * (moved @ n)
    slip = np.linalg.norm(tangential)
    cut = 1.0 if slip <= mu * push else mu * push / slip
    return out - tangential * cut


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "normal", [(0.0, 0.0, 1.0), (0.0, 0.0, -1.0), (1e-9, 0.0, 1.0), (0.3, -0.4, 0.8)]
)
def test_plane_contacts_match_the_rule_point_by_point(dtype: type, normal: tuple) -> None:
    rng = np.random.default_rng(8)
    before = rng.normal(0.0, 0.5, (40, 3))
    after = before + rng.normal(0.0, 0.1, (40, 3))
    movable = rng.random(40) < 0.8
    point = np.array([0.1, -0.2, 0.05])
    pos, prev = _storage(after, dtype), _storage(before, dtype)
    plane = Plane(point, normal)
    scratch = Scratch(40, dtype)
    count = resolve_positions((plane,), pos, prev, movable, 0.01, 0.4, scratch)
    tol = 2e-5 if dtype == np.float32 else 1e-12
    expected_count = 0
    for i in range(40):
        if not movable[i]:
            np.testing.assert_array_equal(pos[i], _storage(after[i : i + 1], dtype)[0])
            continue
        want = _expected_plane(after[i], before[i], point, np.array(normal), 0.01, 0.4)
        expected_count += int(not np.array_equal(want, after[i]))
        np.testing.assert_allclose(pos[i, :3], want, atol=tol)
    assert count == expected_count and np.all(pos[:, 3] == 0.0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_no_contacts_change_nothing(dtype: type) -> None:
    pos = _storage(np.full((5, 3), 3.0), dtype)
    keep = pos.copy()
    colliders = (Plane([0, 0, 0], [0, 0, 1]), Sphere([0, 0, 0], 1.0))
    assert resolve_positions(colliders, pos, pos.copy(), np.ones(5, bool), 0.01, 0.5) == 0
    assert np.array_equal(pos, keep)
    pos[:, 2] = -3.0  # below the plane, but none may move
    keep = pos.copy()
    assert resolve_positions(colliders, pos, pos.copy(), np.zeros(5, bool), 0.01, 0.5) == 0
    assert np.array_equal(pos, keep)


# -- affine_inverse -------------------------------------------------------------------------


def test_singular_matrices_give_finite_pseudo_inverses() -> None:
    for diagonal in ([0.0, 1.0, 1.0], [0.0, 0.0, 0.0], [1e-200, 1.0, 1.0]):
        m = np.eye(4)
        m[:3, :3] = np.diag(diagonal)
        m[:3, 3] = (1.0, 2.0, 3.0)
        inv = affine_inverse(m)
        assert np.isfinite(inv).all() and inv[3].tolist() == [0.0, 0.0, 0.0, 1.0]


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_a_non_finite_matrix_never_reaches_lapack(bad: float, monkeypatch) -> None:
    real = np.linalg.pinv

    def pinv(a, *args, **kwargs):  # the real one would hang on inf: fail fast instead
        if not np.isfinite(a).all():
            raise AssertionError("np.linalg.pinv called with a non-finite matrix")
        return real(a, *args, **kwargs)

    monkeypatch.setattr(np.linalg, "pinv", pinv)
    m = np.eye(4)
    m[0, 0] = bad
    out = affine_inverse(m)
    assert out.shape == (4, 4)
