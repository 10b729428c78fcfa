"""The Simulator at its edges: tiny, degenerate and empty cloths step."""

from __future__ import annotations

import numpy as np
import pytest

from addon.sim import ClothModel, Plane, SimSettings, Simulator, Sphere

from .helpers import grid_model


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


def test_a_simulator_without_points_steps() -> None:
    empty = ClothModel(np.empty((0, 3)), np.empty(0), np.empty((0, 2), dtype=np.int64))
    sim = Simulator(empty, SimSettings.cloth())
    assert sim.step().positions.shape == (0, 3)
