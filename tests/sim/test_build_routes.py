"""The solver parts' shortcuts against the routes they skip (tethers, limiter level pairs,
pass plans; the old code kept here as reference, or plain loops): the same arrays, bit for
bit, on the reference meshes of ``test_build_reference.py`` and on cases made to reach each
fallback. The springs' and the colouring's are in ``test_build_routes_springs.py`` and
``test_build_routes_colouring.py``."""

from __future__ import annotations

import math

import numpy as np
import pytest

from addon.sim import SimSettings, Simulator
from addon.sim.mesh.springs import (
    face_edges,
)
from addon.sim.model import ClothModel
from addon.sim.xpbd import limiter_chains, work_state
from addon.sim.xpbd import tethers as tethers_module
from addon.sim.xpbd.limiters import limiter_levels

from .grids import quad_grid
from .test_build_reference import Mesh, _jittered, _springs
from .test_build_routes_springs import _all_meshes


def test_a_prefix_check_probes_and_then_compares_everything() -> None:
    order = np.arange(300)
    assert work_state._starts_with(order, np.arange(200))
    head = np.arange(200)
    head[150] = 999
    assert not work_state._starts_with(order, head)
    assert not work_state._starts_with(order, np.arange(1, 10))
    assert not work_state._starts_with(order[:5], np.arange(10))


def test_two_pins_sort_as_the_stable_argsort() -> None:
    rng = np.random.default_rng(6)
    d2 = rng.integers(0, 4, (400, 2)).astype(np.float64)  # many ties
    d2[rng.random((400, 2)) < 0.2] = np.inf
    d2[rng.random((400, 2)) < 0.1] = np.nan
    order, values = tethers_module._sorted_pairs(d2)
    want = np.argsort(d2, axis=1, kind="stable")
    assert np.array_equal(order, want)
    assert np.array_equal(values, np.take_along_axis(d2, want, axis=1), equal_nan=True)


def test_tethers_to_two_pins_match_the_sorted_route(monkeypatch: pytest.MonkeyPatch) -> None:
    positions, sizes, corners = quad_grid(30, 20)
    edges = face_edges(sizes, corners)
    pinned = np.zeros(600, dtype=bool)
    pinned[[0, 29]] = True
    got = tethers_module.build_tethers(positions, pinned, edges)
    monkeypatch.setattr(tethers_module, "_sorted_pairs", _argsorted_pairs)
    want = tethers_module.build_tethers(positions, pinned, edges)
    for name in ("points", "pins", "lengths"):
        for g, w in zip(getattr(got, name), getattr(want, name), strict=True):
            assert np.array_equal(g, w)


@pytest.mark.parametrize("pins", [[0, 29], [0, 29, 300, 599, 17]])
def test_tethers_are_the_same_in_any_chunks(pins: list, monkeypatch: pytest.MonkeyPatch) -> None:
    positions, sizes, corners = quad_grid(30, 20)
    edges = face_edges(sizes, corners)
    pinned = np.zeros(600, dtype=bool)
    pinned[pins] = True
    got = tethers_module.build_tethers(positions, pinned, edges, k=3)
    monkeypatch.setattr(tethers_module, "CHUNK_ELEMENTS", 11)  # a few rows at a time
    want = tethers_module.build_tethers(positions, pinned, edges, k=3)
    for name in ("points", "pins", "lengths"):
        for g, w in zip(getattr(got, name), getattr(want, name), strict=True):
            assert np.array_equal(g, w)


def _argsorted_pairs(d2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(d2, axis=1, kind="stable")
    return order, np.take_along_axis(d2, order, axis=1)


def test_rows_of_one_run_are_a_view_of_the_same_values() -> None:
    from addon.sim.model import rows_of as _rows

    values = np.arange(40).reshape(20, 2)
    for ids in (np.arange(3, 11), np.array([2, 3, 5]), np.arange(0), np.array([7])):
        got = _rows(values, ids)
        assert np.array_equal(got, values[ids])
        run = ids.size > 0 and ids[-1] - ids[0] + 1 == ids.size
        assert np.shares_memory(got, values) == run


# the independent reference: a plain loop over the chains, for the vectorised level pairs
def _plain_level_pairs(chains: limiter_chains.Chains, src: np.ndarray) -> dict:
    """Every valid chain's pair (not one point at both ends) and its smallest limit, by a
    loop: leaving a chain to its mirror (same ends, no larger limit) changes neither."""
    best: dict[tuple[int, int], float] = {}
    for i in range(src.size):
        a, b = int(src[i]), int(chains.end[i])
        if chains.valid[i] and a != b:
            key = (min(a, b), max(a, b))
            best[key] = min(best.get(key, np.inf), float(chains.total[i]))
    return best


@pytest.mark.parametrize("chunk", [limiter_chains.CHUNK, 7])
@pytest.mark.parametrize("name", sorted(_all_meshes()))
def test_level_pairs_match_every_valid_chain(
    name: str, chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The mirror check (only kept backward chains look theirs up) drops no pair and keeps
    each pair's smallest limit, at every level, also when the chains go in many chunks."""
    monkeypatch.setattr(limiter_chains, "CHUNK", chunk)
    positions, sizes, corners = _all_meshes()[name]
    edges = face_edges(sizes, corners, positions.shape[0])
    lengths = np.linalg.norm(positions[edges[:, 1]] - positions[edges[:, 0]], axis=1)
    real = limiter_chains.level_pairs
    seen = []

    def checked(chains: limiter_chains.Chains, src: np.ndarray, n: int) -> tuple:
        pairs, limits = real(chains, src, n)
        want = _plain_level_pairs(chains, src)
        assert [tuple(p) for p in pairs.tolist()] == sorted(want)
        assert limits.tolist() == [want[k] for k in sorted(want)]
        seen.append(chains.mirrors)
        return pairs, limits

    monkeypatch.setattr(limiter_chains, "level_pairs", checked)
    limiter_levels(edges, lengths, positions, 4)
    assert seen


class _OldPlan:
    """``work_state.PassPlan``'s build as it was: the whole order concatenated, and every
    move's positions scattered at once (the reference for the parts and the lazy updates)."""

    def __init__(self, groups: list, point_count: int, slots: list, orders: dict) -> None:
        self.n = point_count
        self.order: np.ndarray | None = None
        self.position: np.ndarray | None = None
        self.head = 0
        self.steps: list[tuple] = []
        for g in groups:
            if g.ends.size >= work_state.IN_PLACE_MIN_FRACTION * point_count:
                self.steps.append((self.enter(g.ends, orders), None, None))
            else:
                self.steps.append((None, self.here(g.ends), None))
        for slot in slots:
            self.steps.append((self.enter(slot.points, orders), None, self.here(slot.pins)))
        self.back = self.position

    def here(self, ids: np.ndarray) -> np.ndarray:
        here = ids if self.position is None else self.position[ids]
        return np.ascontiguousarray(here, dtype=np.intp)

    def enter(self, head: np.ndarray, orders: dict) -> np.ndarray | None:
        n = self.n
        if self.order is not None and work_state._starts_with(self.order, head):
            return None
        untouched = np.ones(n, dtype=bool)
        untouched[head] = False
        order = np.concatenate([head, np.flatnonzero(untouched)]).astype(np.intp, copy=False)
        key = (self.head, id(head))
        reorder = orders.get(key)
        if reorder is None:
            reorder = order if self.position is None else self.position[order]
            orders[key] = reorder
        self.order = order
        self.position = np.empty(n, dtype=np.intp)
        self.position[order] = np.arange(n)
        self.head = id(head)
        return reorder


def _same_array(got: np.ndarray | None, want: np.ndarray | None) -> bool:
    if got is None or want is None:
        return got is None and want is None
    return got.dtype == want.dtype and np.array_equal(got, want)


def _plan_meshes() -> dict[str, Mesh]:
    return {
        **_all_meshes(),
        "grid60": quad_grid(60, 40, 2.0, 1.0),
        "sheet": _jittered(50, 45, 0.01, 5),
    }


@pytest.mark.parametrize("name", sorted(_plan_meshes()))
def test_pass_plans_match_the_old_route(name: str) -> None:
    """Every move, translated index set and way back equal the old build's; the plans of
    one solver share the moves, translations and ways back they have in common."""
    positions, sizes, corners = _plan_meshes()[name]
    n = positions.shape[0]
    springs, kinds = _springs((positions, sizes, corners))
    masses = np.full(n, 0.3)
    masses[[0, n // 3]] = 0.0
    sim = Simulator(ClothModel(positions, masses, springs, kinds), SimSettings.cloth())
    solver = sim.solver
    groups, tethers = solver.groups, solver.tethers
    cycle = math.lcm(*(g.period for g in groups)) if groups else 1
    orders: dict = {}
    shared = 0
    for residue, plan in enumerate(solver._plans):
        chosen = [g for g in groups if residue % g.period == g.phase]
        old = _OldPlan(chosen, n, tethers, orders)
        assert len(plan.steps) == len(old.steps)
        for step, (reorder, ids, anchors) in zip(plan.steps, old.steps, strict=True):
            assert _same_array(step.reorder, reorder)
            assert _same_array(step.ids, ids)
            assert _same_array(step.anchors, anchors)
        assert _same_array(plan.back, old.back)
        if residue:
            first = solver._plans[0]
            shared += plan.back is first.back
            ends = zip(plan.steps[-2:], first.steps[-2:], strict=True)
            shared += sum(s.anchors is f.anchors for s, f in ends)
    assert len(solver._plans) == cycle
    if name in ("grid60", "sheet"):
        assert cycle == 2 and shared == 3
