"""The classic solver reproduces the book's formulas, checked against steps worked by hand."""

from __future__ import annotations

import numpy as np
import pytest

from addon.sim import ClothModel, SimSettings, Simulator


def _two_points(masses: list[float], **settings: object) -> Simulator:
    model = ClothModel([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]], masses, [[0, 1]])
    base = dict(
        solver="CLASSIC",
        stiffness=10.0,
        spring_damping=2.0,
        damping=0.1,
        wind=(1.0, 0.0, 0.0),
        gravity=(0.0, 0.0, -10.0),
        drag=0.0,
        substeps=1,
        fps=10.0,
    )
    base.update(settings)
    return Simulator(model, SimSettings.cloth(**base))


def test_two_points_one_spring_two_steps() -> None:
    sim = _two_points([1.0, 2.0])
    sim.reset(np.array([[0.0, 0.0, 0.0], [1.5, 0.0, 0.0]]))  # rest 1, stretched by 0.5
    # step 1: f = 10 * 0.5 = 5 along +x on point 0, -x on point 1; v = F / m * 0.1
    # F0 = (0, 0, -10) + (1, 0, 0) + (5, 0, 0) -> v0 = (0.6, 0, -1), x0 = (0.06, 0, -0.1)
    # F1 = (0, 0, -20) + (1, 0, 0) - (5, 0, 0) -> v1 = (-0.2, 0, -1), x1 = (1.48, 0, -0.1)
    out = sim.step().positions
    assert out == pytest.approx(np.array([[0.06, 0, -0.1], [1.48, 0, -0.1]]), abs=1e-6)
    _, vel = sim.state()
    assert vel == pytest.approx(np.array([[0.6, 0, -1.0], [-0.2, 0, -1.0]]), abs=1e-12)
    # step 2: len 1.42, dot(v1 - v0, dir) = -0.8, f = 10 * 0.42 + 2 * (-0.8) = 2.6
    # F0 = (1 - 0.06 + 2.6, 0, -10 + 0.1) = (3.54, 0, -9.9) -> v0 = (0.954, 0, -1.99)
    # F1 = (1 + 0.02 - 2.6, 0, -20 + 0.1) = (-1.58, 0, -19.9) -> v1 = (-0.279, 0, -1.995)
    out = sim.step().positions
    pos, vel = sim.state()
    assert vel == pytest.approx(np.array([[0.954, 0, -1.99], [-0.279, 0, -1.995]]), abs=1e-12)
    assert pos == pytest.approx(np.array([[0.1554, 0, -0.299], [1.4521, 0, -0.2995]]), abs=1e-12)
    assert out.dtype == np.float32 and out.flags.c_contiguous


def test_pinned_point_does_not_move() -> None:
    sim = _two_points([0.0, 1.0], spring_damping=0.0, damping=0.0, wind=(0.0, 0.0, 0.0))
    sim.reset(np.array([[0.0, 0.0, 0.0], [1.5, 0.0, 0.0]]))
    # F1 = (0, 0, -10) - (5, 0, 0) -> v1 = (-0.5, 0, -1), x1 = (1.45, 0, -0.1)
    out = sim.step().positions
    assert out[0].tolist() == [0.0, 0.0, 0.0]
    assert out[1] == pytest.approx([1.45, 0.0, -0.1], abs=1e-6)


def test_gravity_only_two_substeps() -> None:
    model = ClothModel([[0.0, 0.0, 1.0]], [2.0], np.empty((0, 2), dtype=np.int64))
    settings = SimSettings.cloth(solver="CLASSIC", drag=0.0, substeps=2, fps=24.0)
    sim = Simulator(model, settings)
    out = sim.step().positions
    # dt = 1/48: v1 = -9.81/48, x1 = v1/48; v2 = 2 v1, x2 = x1 + v2/48 = -3 * 9.81 / 48^2
    assert out[0, 2] == pytest.approx(1.0 - 3 * 9.81 / 48**2, abs=1e-6)
    assert sim.state()[1][0, 2] == pytest.approx(-2 * 9.81 / 48, abs=1e-12)
