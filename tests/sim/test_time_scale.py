"""The speed multiplier: time scale 2 over N frames is time scale 1 over 2N frames."""

from __future__ import annotations

import numpy as np
import pytest

from addon.sim import ClothModel, SimSettings, Simulator
from addon.sim.soft_body import substep_fraction

from .helpers import grid_model


def _falling() -> ClothModel:
    return ClothModel([[0.0, 0.0, 10.0], [1.0, 0.0, 10.0]], [1.0, 2.0], np.empty((0, 2)))


@pytest.mark.parametrize("solver", ["XPBD", "CLASSIC"])
def test_free_fall_at_double_speed(solver: str) -> None:
    fast = Simulator(_falling(), SimSettings.cloth(solver=solver, time_scale=2.0, substeps=24))
    slow = Simulator(_falling(), SimSettings.cloth(solver=solver, time_scale=1.0, substeps=12))
    for _ in range(10):
        fast.step()
    for _ in range(20):
        slow.step()
    # the same substep length, so the same sequence: equal to rounding
    assert fast.state()[0] == pytest.approx(slow.state()[0], abs=1e-5)
    # and both fell as far as 20 frames of drag-damped gravity: z = 10 - ~0.5 g t^2 (t = 0.83 s)
    assert float(slow.state()[0][0, 2]) < 10.0 - 0.8 * 0.5 * 9.81 * (20 / 24) ** 2


def test_pinned_cloth_at_double_speed_matches_within_tolerance() -> None:
    model = grid_model(10, size=1.0, height=1.0, pins=(0, 9))
    fast = Simulator(model, SimSettings.cloth(time_scale=2.0))
    slow = Simulator(model, SimSettings.cloth())
    for _ in range(12):
        fast.step()
    for _ in range(24):
        slow.step()
    gap = np.linalg.norm(fast.positions() - slow.positions(), axis=1).max()
    moved = np.linalg.norm(slow.positions() - model.rest_positions, axis=1).max()
    assert moved > 0.5
    assert gap < 0.05 * moved  # twice the substep length: a few percent of the motion


def test_soft_body_pull_follows_simulated_time() -> None:
    # the remaining offset after one frame is (1 - s) ** time_scale
    for scale in (0.5, 1.0, 2.0):
        part = substep_fraction(0.4, 6, scale)
        assert (1.0 - part) ** 6 == pytest.approx(0.6**scale, rel=1e-12)


def test_time_scale_is_clamped() -> None:
    settings, notes = SimSettings.cloth(time_scale=-1.0).validated()
    assert settings.time_scale == pytest.approx(1e-3) and notes
