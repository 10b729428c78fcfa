"""Soft body: back to rest after a push, and the same result whatever the substep count."""

from __future__ import annotations

import numpy as np

from addon.sim import SimSettings, Simulator

from .helpers import grid_model

RETURN_FRAMES = 30  # with the soft-body defaults (shape stiffness 0.5, drag 3/s)


def _displaced(substeps: int, solver: str = "XPBD") -> Simulator:
    model = grid_model(8, extra=False)
    settings = SimSettings.soft_body(
        gravity=(0.0, 0.0, 0.0),
        substeps=substeps,
        shape_stiffness=0.5,
        solver=solver,
        stiffness=1.0e3,
    )
    sim = Simulator(model, settings)
    pushed = model.rest_positions.copy()
    pushed[:, 2] += 0.2 * pushed[:, 0]  # a shear, not just a move
    sim.reset(pushed)
    return sim


def test_returns_to_rest_within_stated_frames() -> None:
    sim = _displaced(3)
    for _ in range(RETURN_FRAMES):
        out = sim.step().positions
    assert np.abs(out - sim.model.rest_positions).max() < 1e-3


def test_follows_object_matrix() -> None:
    sim = _displaced(3)
    matrix = np.eye(4)
    matrix[:3, 3] = (1.0, 2.0, 3.0)
    for _ in range(RETURN_FRAMES + 15):  # a 3.7 m jump of the target, not a 0.2 m push
        out = sim.step(object_matrix=matrix).positions
    shift = np.array([1.0, 2.0, 3.0])
    assert np.abs(out - (sim.model.rest_positions + shift)).max() < 1e-3


def test_substep_count_does_not_change_the_result() -> None:
    one, eight = _displaced(1), _displaced(8)
    for _ in range(2):
        a, b = one.step().positions, eight.step().positions
    offset = np.abs(a - one.model.rest_positions).max()
    assert offset > 1e-2  # still far from rest: the comparison means something
    assert np.abs(a - b).max() < 0.1 * offset
