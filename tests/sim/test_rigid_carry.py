"""Pins that jump farther than the cloth can follow carry it rigidly (``rigid_carry.py``)."""

from __future__ import annotations

import math

import numpy as np

from addon.sim import SimSettings, Simulator
from addon.sim.rigid_carry import best_rigid_transform, carry, jump_too_far

from .helpers import grid_model, structural_stretch
from .threads import needs_proc, other_threads_ticks, settled_ticks


def _turn(axis: tuple[float, float, float], degrees: float) -> np.ndarray:
    """Rodrigues' formula, written out independently of the code under test."""
    x, y, z = np.asarray(axis, float) / np.linalg.norm(axis)
    c, s = math.cos(math.radians(degrees)), math.sin(math.radians(degrees))
    k = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
    return np.eye(3) + s * k + (1.0 - c) * (k @ k)


def test_best_fit_finds_a_known_turn_and_shift() -> None:
    old = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.3, 0.1, 1.5]])
    turn = _turn((1.0, 2.0, 0.5), 73.0)
    shift = np.array([1e4, -3.0, 7.5])
    rotation, translation = best_rigid_transform(old, old @ turn.T + shift)
    np.testing.assert_allclose(rotation, turn, atol=1e-12)
    np.testing.assert_allclose(translation, shift, atol=1e-9)


def test_one_pin_is_a_pure_shift() -> None:
    rotation, translation = best_rigid_transform([[1.0, 2.0, 3.0]], [[4.0, 0.0, 3.0]])
    np.testing.assert_array_equal(rotation, np.eye(3))
    np.testing.assert_allclose(translation, [3.0, -2.0, 0.0])


def test_two_pins_that_stay_give_no_turn() -> None:
    # fuzz find: an SVD of two fixed pins turned the cloth about the line through them
    old = np.array([[0.0, 0.0, 0.0], [1e6, 1e6, 1e6]])
    rotation, translation = best_rigid_transform(old, old)
    np.testing.assert_array_equal(rotation, np.eye(3))
    np.testing.assert_array_equal(translation, [0.0, 0.0, 0.0])
    rotation, _ = best_rigid_transform(np.zeros((2, 3)), np.array([[0, 0, 0], [1.0, 1, 1]]))
    np.testing.assert_array_equal(rotation, np.eye(3))  # pins in one place: a shift only


def test_two_pins_turned_give_the_smallest_turn() -> None:
    old = np.array([[0.0, 0.0, 0.0], [2.0, 0.0, 0.0]])
    new = np.array([[5.0, 5.0, 5.0], [5.0, 7.0, 5.0]])  # the line turned 90 degrees about z
    rotation, translation = best_rigid_transform(old, new)
    np.testing.assert_allclose(rotation, _turn((0.0, 0.0, 1.0), 90.0), atol=1e-12)
    np.testing.assert_allclose(rotation @ old.T + translation[:, None], new.T, atol=1e-12)
    back = np.array([[2.0, 0.0, 0.0], [0.0, 0.0, 0.0]])  # half a turn: still a rotation
    rotation, translation = best_rigid_transform(old, back)
    np.testing.assert_allclose(rotation @ old.T + translation[:, None], back.T, atol=1e-12)
    assert np.isclose(np.linalg.det(rotation), 1.0)


def test_carry_turns_velocities_and_moves_positions() -> None:
    pos = np.array([[1.0, 0.0, 0.0, 0.0]], np.float32)
    vel = np.array([[2.0, 0.0, 0.0, 0.0]], np.float32)
    carry(pos, vel, _turn((0.0, 0.0, 1.0), 90.0), np.array([0.0, 0.0, 5.0]))
    np.testing.assert_allclose(pos, [[0.0, 1.0, 5.0, 0.0]], atol=1e-6)
    np.testing.assert_allclose(vel, [[0.0, 2.0, 0.0, 0.0]], atol=1e-6)


def test_jump_threshold_is_half_the_speed_limit_over_the_frame() -> None:
    old = np.zeros((2, 3))
    limit = 0.5 * 1000.0 / 24.0  # 20.83 m in one frame at 24 fps, max_speed 1000 m/s
    assert not jump_too_far(old, old + np.array([20.8, 0.0, 0.0]), 1.0 / 24.0, 1000.0)
    assert jump_too_far(old, old + np.array([0.0, 0.0, limit + 0.01]), 1.0 / 24.0, 1000.0)
    assert not jump_too_far(np.zeros((0, 3)), np.zeros((0, 3)), 1.0 / 24.0, 1000.0)


def test_pinned_targets_teleported_and_turned_carry_the_cloth() -> None:
    model = grid_model(6, pins=(0, 5, 30, 35))  # four corners
    sim = Simulator(model, SimSettings.cloth())
    for _ in range(5):
        before = sim.step().positions
    turn = _turn((0.0, 0.0, 1.0), 90.0)
    shift = np.array([1e4, 2e4, -5e3])
    targets = model.rest_positions @ turn.T + shift
    after = sim.step(pinned_targets=targets[sim.pinned_ids]).positions.astype(np.float64)
    assert sim.recoveries == 0
    assert any("carried" in w for w in sim.warnings)
    np.testing.assert_allclose(after[[0, 5, 30, 35]], targets[[0, 5, 30, 35]], atol=2e-3)
    # one more frame of falling at most (a few cm), float32 at 1e4 m resolves ~1 mm
    carried = before.astype(np.float64) @ turn.T + shift
    assert np.abs(after - carried).max() < 0.05
    assert structural_stretch(model, after - shift).max() < 0.05


def test_a_recovery_carries_the_good_state_to_the_pins() -> None:
    model = grid_model(6, pins=(0, 5))
    sim = Simulator(model, SimSettings.cloth())
    for _ in range(3):
        good = sim.step().positions
    sim.pos[7, 0] = np.nan  # as if a solver bug produced it
    moved = model.rest_positions[sim.pinned_ids] + np.array([1.0, 0.0, 0.0])
    out = sim.step(pinned_targets=moved).positions
    assert sim.recoveries == 1
    np.testing.assert_allclose(out, good + np.float32([1.0, 0.0, 0.0]), atol=1e-5)
    # the recovered state is the guard's new reference: the next frame is no explosion
    sim.step(pinned_targets=moved)
    assert sim.recoveries == 1


@needs_proc
def test_carry_runs_on_one_thread() -> None:
    # a 40k x 3 x 3 product woke OpenBLAS's second thread; column updates do not
    rng = np.random.default_rng(4)
    pos = np.zeros((40_000, 4), dtype=np.float32)
    pos[:, :3] = rng.uniform(-1.0, 1.0, (40_000, 3))
    vel = np.zeros_like(pos)
    turn = _turn((0.0, 0.0, 1.0), 90.0)
    before = settled_ticks()
    for _ in range(200):
        carry(pos, vel, turn, np.zeros(3))
    assert other_threads_ticks() - before <= 5
