"""Bad input and unstable settings never give non-finite or exploded output."""

from __future__ import annotations

import numpy as np
import pytest

from addon.sim import ClothModel, SimSettings, Simulator, Sphere
from addon.sim.guard import ExplosionGuard

from .helpers import grid_model, storage_rows


def _run(sim: Simulator, frames: int = 10, **kwargs: object) -> np.ndarray:
    out = sim.positions()
    for _ in range(frames):
        out = sim.step(**kwargs).positions  # type: ignore[arg-type]
        assert np.isfinite(out).all()
        assert out.dtype == np.float32 and out.flags.c_contiguous
    return out


def test_nan_injected_into_the_state_is_recovered() -> None:
    sim = Simulator(grid_model(6, pins=(0, 5)), SimSettings.cloth())
    _run(sim, 3)
    good = sim.positions()
    sim.pos[7, 0] = np.nan  # as if a solver bug produced it
    out = sim.step().positions
    assert np.isfinite(out).all()
    assert np.array_equal(out, good)  # the last good state, not a half-broken one
    assert any("unstable" in w for w in sim.warnings)
    _run(sim, 5)


def test_nan_set_state_and_targets_are_refused() -> None:
    model = grid_model(5, pins=(0, 4))
    sim = Simulator(model, SimSettings.cloth())
    bad = model.rest_positions.copy()
    bad[3] = np.nan
    sim.set_state(bad, np.zeros_like(bad))
    assert np.isfinite(sim.positions()).all()
    targets = model.rest_positions[sim.pinned_ids]  # (P, 3): points 0 and 4
    targets[0] = (np.inf, 0.0, 0.0)
    out = sim.step(pinned_targets=targets).positions
    assert np.array_equal(out[0], model.rest_positions[0].astype(np.float32))
    matrix = np.full((4, 4), np.nan)
    _run(sim, 3, object_matrix=matrix)
    assert len(sim.warnings) >= 3


@pytest.mark.parametrize("solver", ["CLASSIC", "XPBD"])
def test_huge_stiffness(solver: str) -> None:
    model = grid_model(8, pins=(0, 7))
    sim = Simulator(model, SimSettings.cloth(solver=solver, stiffness=1e12, substeps=2))
    out = _run(sim, 10)
    assert np.abs(out).max() < 100.0
    assert sim.recoveries == 0  # XPBD is stable at any stiffness; classic is softened
    if solver == "CLASSIC":
        assert any("softened" in w for w in sim.warnings)


def test_zero_length_springs_and_coincident_points() -> None:
    positions = np.array([[0, 0, 1], [0, 0, 1], [1, 0, 1], [1, 0, 1], [0.5, 0, 1]], float)
    springs = [[0, 1], [1, 2], [2, 3], [3, 4], [0, 4]]
    model = ClothModel(positions, [0, 1, 1, 1, 1], springs)
    for solver in ("XPBD", "CLASSIC"):
        sim = Simulator(model, SimSettings.cloth(solver=solver))
        _run(sim, 10)
        sim.reset(np.zeros((5, 3)))  # every point on top of each other
        _run(sim, 10, colliders=(Sphere((0, 0, 0), 0.1),))


def test_all_points_pinned() -> None:
    model = grid_model(4, pins=tuple(range(16)))
    sim = Simulator(model, SimSettings.cloth())
    out = _run(sim, 5)
    assert np.array_equal(out, model.rest_positions.astype(np.float32))


def test_zero_negative_and_nan_masses_pin_and_report() -> None:
    model = ClothModel(
        np.array([[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 0]], float),
        [0.0, -1.0, np.nan, 1.0],
        [[0, 1], [1, 2], [2, 3]],
    )
    assert model.pinned.tolist() == [True, True, True, False]
    assert any("negative" in w for w in model.warnings)
    assert any("non-finite" in w for w in model.warnings)
    sim = Simulator(model, SimSettings.cloth())
    out = _run(sim, 5)
    assert np.array_equal(out[:3], model.rest_positions[:3].astype(np.float32))
    assert out[3, 2] < 0.0 or out[3, 0] != 3.0  # the free one moved


def test_bad_springs_are_dropped_and_reported() -> None:
    model = ClothModel(np.zeros((3, 3)), [1, 1, 1], [[0, 1], [1, 1], [2, 7], [-1, 0]])
    assert model.springs.tolist() == [[0, 1]]
    assert any("dropped" in w for w in model.warnings)


def test_bad_settings_are_clamped() -> None:
    settings = SimSettings.cloth(substeps=0, friction=3.0, stiffness=float("nan"))
    sim = Simulator(grid_model(3), settings)
    assert sim.settings.substeps == 1 and sim.settings.friction == 1.0
    assert len(sim.warnings) == 3
    _run(sim, 3)


def test_a_point_snapped_far_within_the_frame_counts_as_too_fast() -> None:
    # a constraint can move a point 100 m in one substep and leave it slow at the frame's end
    model = grid_model(3, pins=(0,))
    guard = ExplosionGuard(model, max_speed=1000.0, max_stretch=1e9)
    start = np.zeros((9, 4), dtype=np.float32)
    start[:, :3] = model.rest_positions
    end = start.copy()
    end[4, 0] += 100.0  # 100 m in 1/24 s = 2400 m/s
    slow = np.zeros_like(start)
    assert guard.problem(end, slow) is None  # velocities alone miss it
    assert guard.problem(end, slow, start, 1.0 / 24.0) == "a point moves at 2.4e+03 m/s"
    assert guard.problem(end, slow, start, 1.0) is None  # 100 m/s is within the limit


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_guard_names_each_problem_on_both_storages(dtype: type) -> None:
    model = grid_model(4, pins=(0, 3))
    guard = ExplosionGuard(model, max_speed=10.0, max_stretch=2.0)
    rest = np.zeros((16, 4), dtype=dtype)
    rest[:, :3] = model.rest_positions
    still = np.zeros_like(rest)
    assert guard.problem(rest, still) is None
    for row, value in ((5, np.nan), (6, np.inf), (7, -np.inf)):
        bad = rest.copy()
        bad[row, 1] = value
        assert guard.problem(bad, still) == "non-finite positions or velocities"
        assert guard.problem(rest, bad) == "non-finite positions or velocities"
    fast = still.copy()
    fast[0, 0] = 50.0  # a pinned point may move fast (it follows the animation)
    assert guard.problem(rest, fast) is None
    fast[9, 2] = -11.0  # a free one may not
    assert guard.problem(rest, fast) == "a point moves at 11 m/s"
    torn = rest.copy()
    spacing = float(np.linalg.norm(model.rest_positions[1] - model.rest_positions[0]))
    torn[10:, 1] += 2.5 * spacing  # rows 2-3 pulled away from rows 0-1: stretch 3.5x > 2x
    assert guard.problem(torn, still) == "a spring is stretched beyond the limit"
    torn[10:, 1] -= 1.5 * spacing  # 2x: on the limit, not beyond it
    assert guard.problem(torn, still) is None


# -- edge cases: every pin moving, no springs, no points -------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_guard_edge_cases_on_both_storages(dtype: type) -> None:
    pinned_all = grid_model(3, pins=tuple(range(9)))
    guard = ExplosionGuard(pinned_all, max_speed=10.0, max_stretch=2.0)
    pos = storage_rows(pinned_all.rest_positions * 50.0, dtype)  # pins follow the animation
    vel = storage_rows(np.full((9, 3), 1e6), dtype)
    assert guard.problem(pos, vel, pos * 0, 0.04) is None
    pos[4, 1] = np.inf
    assert guard.problem(pos, vel) == "non-finite positions or velocities"
    no_springs = ClothModel(np.zeros((3, 3)), np.ones(3), np.empty((0, 2), dtype=np.int64))
    guard = ExplosionGuard(no_springs, max_speed=10.0, max_stretch=2.0)
    pos = storage_rows(np.arange(9.0).reshape(3, 3) * 100.0, dtype)
    assert guard.problem(pos, np.zeros_like(pos)) is None
    vel = np.zeros_like(pos)
    vel[2, 0] = -11.0
    assert guard.problem(pos, vel).startswith("a point moves at 11")
    vel[2, 0] = np.nan
    assert guard.problem(pos, vel) == "non-finite positions or velocities"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_guard_accepts_a_cloth_without_points(dtype: type) -> None:
    empty = ClothModel(np.empty((0, 3)), np.empty(0), np.empty((0, 2), dtype=np.int64))
    guard = ExplosionGuard(empty, max_speed=10.0, max_stretch=2.0)
    rows = np.zeros((0, 4), dtype=dtype)
    assert guard.problem(rows, rows, rows, 0.04) is None


def test_each_frame_returns_its_own_warnings_past_the_kept_lists_cap() -> None:
    """``step`` returns the frame's warnings: callers used to diff the length of
    ``warnings``, which stops growing at 50 entries, so every warning after the 50th
    (a recovery, refused targets) went unreported."""
    model = grid_model(5, pins=(0, 4))
    sim = Simulator(model, SimSettings.cloth())
    bad = model.rest_positions[sim.pinned_ids]
    bad[1] = np.nan
    for _ in range(60):
        result = sim.step(pinned_targets=bad)
        assert result.warnings == ["1 non-finite pinned targets ignored"]
    assert len(sim.warnings) == 50  # the kept list is capped
    assert sim.step().warnings == []  # a clean frame reports nothing
    sim.pos[7, 0] = np.nan
    result = sim.step()
    assert len(result.warnings) == 1 and "restored the last good state" in result.warnings[0]
    assert np.isfinite(result.positions).all()
