"""Soft body: back to rest after a push, and the same result whatever the substep count."""

from __future__ import annotations

import numpy as np
import pytest

from addon.sim import ClothModel, SimSettings, Simulator

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


def _turned(angle: float, shift: tuple[float, float, float]) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    m = np.eye(4)
    m[:3, :3] = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]) @ np.diag([1.5, 0.7, 1.2])
    m[:3, 3] = shift
    return m


@pytest.mark.parametrize("kind", ["CLOTH", "SOFT"])
def test_object_space_rest_with_the_build_matrix_is_the_world_rest(kind: str) -> None:
    """The contract's one convention (rest in object space, ``matrix_world`` every frame)
    against the world rest it replaced (``matrix_now @ inverse(matrix_at_build)``): the
    same lengths (a scaled object's cloth is as big as it looks) and the same motion up to
    rounding, for a turned, non-uniformly scaled object that moves."""
    local = grid_model(8, pins=(0, 7))
    build = _turned(0.4, (1.0, -2.0, 0.5))
    world_rest = local.rest_positions @ build[:3, :3].T + build[:3, 3]
    make = SimSettings.soft_body if kind == "SOFT" else SimSettings.cloth
    settings = make(stiffness=1.0e4)
    parts = (local.masses, local.springs, local.kinds)
    ours = Simulator(ClothModel(local.rest_positions, *parts, matrix=build), settings)
    old = Simulator(ClothModel(world_rest, *parts), settings)
    np.testing.assert_allclose(ours.model.rest_lengths, old.model.rest_lengths, rtol=1e-12)
    np.testing.assert_allclose(ours.positions(), old.positions(), atol=1e-6)
    inverse = np.linalg.inv(build)
    for frame in range(1, 13):
        now = _turned(0.4 + 0.02 * frame, (1.0 + 0.01 * frame, -2.0, 0.5))
        a = ours.step(object_matrix=now).positions
        b = old.step(object_matrix=now @ inverse).positions
        np.testing.assert_allclose(a, b, atol=1e-5)
    assert np.abs(a - ours.model.rest_world).max() > 0.01  # it moved: the check means something
