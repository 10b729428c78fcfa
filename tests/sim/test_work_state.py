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
