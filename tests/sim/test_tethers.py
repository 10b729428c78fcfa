"""Tethers: pieces, nearest pins and rest distances worked out by hand; build time."""

from __future__ import annotations

import time

import numpy as np

from addon.sim import SimSettings, Simulator
from addon.sim.mesh.neighbours import components
from addon.sim.xpbd.solver import XpbdSolver
from addon.sim.xpbd.tethers import build_tethers

from .helpers import grid_model


def test_components_of_separate_pieces() -> None:
    # 0-1-2 and 3-4 are two pieces; 5 is alone
    label = components(np.array([[1, 2], [0, 1], [3, 4]]), 6)
    assert label.tolist() == [0, 0, 0, 3, 3, 5]


def test_components_of_a_long_chain_numbered_backwards() -> None:
    n = 1000
    chain = np.stack([np.arange(n - 1, 0, -1), np.arange(n - 2, -1, -1)], axis=1)
    assert (components(chain, n) == 0).all()


def test_nearest_pins_of_the_same_piece() -> None:
    # piece A: 0-1-2-3 on the x axis (x = 0, 1, 2, 3), pins 0 and 3
    # piece B: 4-5 at x = 10, 11, pin 5; point 6 alone (no pin on its piece)
    rest = np.array([[0.0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 0], [10, 0, 0], [11, 0, 0]])
    rest = np.vstack([rest, [[1.5, 0, 0]]])
    pinned = np.array([True, False, False, True, False, True, False])
    springs = np.array([[0, 1], [1, 2], [2, 3], [4, 5]])
    t = build_tethers(rest, pinned, springs, k=2)
    first, second = (
        {int(p): (int(q), float(x)) for p, q, x in zip(*slot, strict=True)}
        for slot in zip(t.points, t.pins, t.lengths, strict=True)
    )
    assert first == {1: (0, 1.0), 2: (3, 1.0), 4: (5, 1.0)}
    assert second == {1: (3, 2.0), 2: (0, 2.0)}  # 4 has only one pin on its piece
    assert t.count == 5


def test_tethers_hold_a_hanging_point() -> None:
    # a 2-point "cloth": pin 0, point 1 hanging 1 m below on a very soft spring
    model = grid_model(2, size=1.0, pins=(0, 1))
    sim = Simulator(model, SimSettings.cloth(stiffness=1.0, shear_stiffness=1.0))
    for _ in range(48):
        out = sim.step().positions
    distance = np.linalg.norm(out[2] - model.rest_positions[0])
    assert distance <= 1.0 + 1e-5  # its rest distance to pin 0 (the spring alone would sag)
    assert out[2, 2] < 1.0 - 0.5  # it did swing down


def test_building_a_40k_cloth_takes_under_a_second() -> None:
    model = grid_model(200, size=2.0, pins=(0, 199))
    start = time.process_time()  # CPU time: the machine is shared
    sim = Simulator(model, SimSettings.cloth())
    assert time.process_time() - start < 1.0
    assert isinstance(sim.solver, XpbdSolver)
    assert [t.points.size for t in sim.solver.tethers] == [200 * 200 - 2] * 2


def test_slot_projection_is_the_plain_max_formula_bit_for_bit() -> None:
    """``TetherSlot.project`` takes ``max(f, 0)`` as ``h + |h|`` with ``h = f / 2``; it must
    give what ``p - (p - q) * max(1 - limit / |p - q|, 0)`` gives in float32, exactly,
    for points inside, on and beyond their limit (and a point on its anchor)."""
    from addon.sim.xpbd.tethers import TetherSlot

    rng = np.random.default_rng(7)
    count = 5000
    p = np.zeros((count, 4), np.float32)
    q = np.zeros((count, 4), np.float32)
    p[:, :3] = rng.normal(0.0, 1.0, (count, 3))
    q[:, :3] = rng.normal(0.0, 1.0, (count, 3))
    p[0, :3] = q[0, :3]  # on its anchor: no correction, no NaN
    d = p[:, :3] - q[:, :3]
    # lengths computed as the pass does, then limits around them: slack, taut, stretched
    length = np.sqrt(d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1] + d[:, 2] * d[:, 2] + 1e-18)
    limits = (length * rng.choice([0.5, 1.0, 2.0], count)).astype(np.float32)
    limits[0] = 0.25
    factor = np.maximum(np.float32(1.0) - limits / length.astype(np.float32), np.float32(0.0))
    expected = p[:, :3] - d * factor[:, None]

    slot = TetherSlot(np.arange(count), np.arange(count), limits)
    moved = p.copy()
    slot.project(moved.view(np.complex128).reshape(-1), q.view(np.complex128).reshape(-1))
    assert moved[:, :3].tobytes() == expected.tobytes()
    assert np.array_equal(moved[0], p[0])
    assert (factor > 0).sum() > count // 4 and (factor == 0).sum() > count // 4
