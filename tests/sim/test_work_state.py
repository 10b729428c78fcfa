"""The permuted pass gives, bit for bit, what solving each group in the natural order gives."""

from __future__ import annotations

import numpy as np

from addon.sim.xpbd.coloring import colour_groups
from addon.sim.xpbd.constraint_pass import ConstraintGroup, Mode, PassBuffers, solve_group
from addon.sim.xpbd.solver import XpbdSolver, as_complex
from addon.sim.xpbd.tethers import TetherSlot
from addon.sim.xpbd.work_state import PassPlan, pass_plans
from tests.sim.grids import quad_grid

DT = 0.002


def _groups(pairs: np.ndarray, rest: np.ndarray, n: int, inv: np.ndarray) -> list[ConstraintGroup]:
    groups = []
    for members in colour_groups(pairs, n):
        a, b = pairs[members, 0], pairs[members, 1]
        g = ConstraintGroup(
            mode=Mode.LIMITER if len(groups) % 3 == 1 else Mode.SPRING,
            ends=np.concatenate([a, b]),
            rest=rest[members].astype(np.float32),
            stiffness=np.full(members.size, 1e4),
            inv_a=inv[a],
            inv_b=inv[b],
        )
        g.prepare(DT)
        groups.append(g)
    return groups


def _scene(seed: int) -> tuple[np.ndarray, list[ConstraintGroup], int]:
    positions, _sizes, corners = quad_grid(12, 9, 1.0, 0.0)
    n = positions.shape[0]
    quads = corners.reshape(-1, 4)
    edges = np.concatenate([quads[:, [0, 1]], quads[:, [1, 2]], quads[:, [0, 2]]])
    edges = np.unique(np.sort(edges, axis=1), axis=0)
    rng = np.random.default_rng(seed)
    shaken = positions + rng.normal(0.0, 0.02, positions.shape)
    rest = np.linalg.norm(positions[edges[:, 1]] - positions[edges[:, 0]], axis=1)
    inv = rng.uniform(0.5, 3.0, n)
    inv[[0, 11]] = 0.0
    extra = rng.integers(0, n, (7, 2))  # a small group of its own: solved by gather/scatter
    extra = extra[extra[:, 0] != extra[:, 1]][:3]
    groups = _groups(edges, rest, n, inv)
    groups.append(_groups(extra[:1], np.array([0.3]), n, inv)[0])
    groups = groups[:2] + groups[-1:] + groups[2:-1]  # the small one between big ones
    return XpbdSolver.make_state(shaken), groups, n


def _natural(state: np.ndarray, groups: list[ConstraintGroup]) -> np.ndarray:
    out = state.copy()
    buffers = PassBuffers(max(g.size for g in groups))
    for g in groups:
        solve_group(as_complex(out), g, buffers.views(g.size))
    return out


def test_permuted_pass_is_bit_identical_to_the_natural_order() -> None:
    for seed in range(3):
        state, groups, n = _scene(seed)
        buffers = PassBuffers(max(g.size for g in groups))
        plan = PassPlan(groups, [buffers.views(g.size) for g in groups], n)
        assert sum(step.ids is None for step in plan.steps) >= 2
        assert sum(step.ids is not None for step in plan.steps) >= 1
        out = state.copy()
        for _ in range(3):  # the plan is reused pass after pass
            plan.run(as_complex(out))
        expected = state
        for _ in range(3):
            expected = _natural(expected, groups)
        assert np.array_equal(out, expected)
        assert not np.array_equal(out, state)


def test_plans_per_substep_residue_pick_their_groups() -> None:
    _state, groups, n = _scene(0)
    groups[1].period, groups[1].phase = 2, 1
    buffers = PassBuffers(max(g.size for g in groups))
    views = [buffers.views(g.size) for g in groups]
    plans = pass_plans(groups, views, n)
    assert len(plans) == 2
    assert [s.group for s in plans[0].steps] == [g for g in groups if g is not groups[1]]
    assert [s.group for s in plans[1].steps] == groups


def test_tether_slots_pull_back_only_points_beyond_their_limit() -> None:
    state, groups, n = _scene(1)
    rng = np.random.default_rng(5)
    pins = np.array([0, 11])
    free = np.setdiff1d(np.arange(n), pins)
    first = TetherSlot(free, pins[rng.integers(0, 2, free.size)], rng.uniform(0.1, 1.0, free.size))
    second = TetherSlot(free, pins[rng.integers(0, 2, free.size)], rng.uniform(0.1, 1.0, free.size))
    buffers = PassBuffers(max(g.size for g in groups))
    plan = PassPlan(groups, [buffers.views(g.size) for g in groups], n, [first, second])
    slot_steps = [step for step in plan.steps if step.slot is not None]
    assert slot_steps[0].reorder is not None and slot_steps[1].reorder is None  # same points
    out = state.copy()
    plan.run(as_complex(out))
    expected = _natural(state, groups)[:, :3].astype(np.float64)
    for slot in (first, second):  # one tether after the other, as a loop would
        for p, q, limit in zip(slot.points, slot.pins, slot.limits, strict=True):
            d = expected[p] - expected[q]
            length = np.linalg.norm(d)
            if length > limit:
                expected[p] = expected[q] + d * (limit / length)
    assert np.allclose(out[:, :3], expected, atol=2e-6)
    assert np.array_equal(out[pins], state[pins])


# -- edge cases: random plans, tethers only, empty plans -------------------------------------


DT = 0.002


def _random_group(
    pairs: np.ndarray, n: int, rng: np.random.Generator, mode: Mode
) -> ConstraintGroup:
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
        g = _random_group(pairs[members], n, rng, Mode(int(rng.integers(0, 3))))
        if rng.random() < 0.4:
            g.period, g.phase = 2, int(rng.integers(0, 2))
        groups.append(g)
    return [groups[i] for i in rng.permutation(len(groups))]


def _natural_with_slots(
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
    groups = [
        _random_group([[0, 1], [2, 3]], n, rng, Mode.SPRING),
        _random_group([[1, 2]], n, rng, Mode.LIMITER),
    ]
    plan = _plans(groups, n, [])[0]
    assert all(step.reorder is None and step.ids is not None for step in plan.steps)
    assert plan.back is None
    state = _state(rng, n)
    out = state.copy()
    plan.run(as_complex(out))
    assert np.array_equal(out, _natural_with_slots(state, groups, []))


def test_a_group_covering_every_point_and_the_smallest_states() -> None:
    rng = np.random.default_rng(2)
    for n in (2, 4, 10):
        ids = rng.permutation(n)
        pairs = ids.reshape(-1, 2)  # a perfect matching: 2g == N, nothing left untouched
        groups = [_random_group(pairs, n, rng, mode) for mode in Mode]
        plan = _plans(groups, n, [])[0]
        assert all(step.ids is None for step in plan.steps)
        state = _state(rng, n)
        out = state.copy()
        for _ in range(3):
            plan.run(as_complex(out))
        expected = state
        for _ in range(3):
            expected = _natural_with_slots(expected, groups, [])
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
    assert np.array_equal(out, _natural_with_slots(state, [], slots))
    assert np.array_equal(out[pinned], state[pinned])


def test_a_residue_without_groups_still_runs_its_tethers() -> None:
    rng = np.random.default_rng(4)
    n = 24
    pairs = np.arange(n).reshape(-1, 2)
    groups = [
        _random_group(pairs, n, rng, Mode.SPRING),
        _random_group(pairs[:3], n, rng, Mode.LIMITER),
    ]
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
            assert np.array_equal(out, _natural_with_slots(state, groups, slots, residue))


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
            assert np.array_equal(out, _natural_with_slots(state, groups, slots, residue))
