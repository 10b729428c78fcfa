"""A setting change reuses the constraint topology: same result as a fresh build, no
recolouring; a change of what the constraints are builds anew."""

from __future__ import annotations

import numpy as np
import pytest

from addon.sim import Plane, SimSettings, Simulator
from addon.sim.xpbd import coloring

from .helpers import grid_model

FLOOR = (Plane((0.0, 0.0, 0.0), (0.0, 0.0, 1.0)),)


def _run(sim: Simulator, frames: int) -> np.ndarray:
    for _ in range(frames):
        out = sim.step(colliders=FLOOR).positions
    return out


def _count_colourings(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = coloring.colour_groups

    def counted(*args: object, **kwargs: object) -> list[np.ndarray]:
        calls.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr("addon.sim.xpbd.build.colour_groups", counted)
    return calls


def test_value_changes_match_a_fresh_build_without_recolouring(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model = grid_model(12, pins=(0, 11))
    changed = SimSettings.cloth(
        stiffness=2e5,
        bend_stiffness=50.0,
        damping=0.2,
        gravity=(0, 1, -5),
        wind=(0.5, 0, 0),
        drag=1.0,
        substeps=8,
    )
    sim = Simulator(model, SimSettings.cloth())
    _run(sim, 5)
    pos, vel = sim.state()
    calls = _count_colourings(monkeypatch)
    sim.update_settings(changed)
    assert calls == []
    fresh = Simulator(model, changed)
    fresh.set_state(pos, vel)
    assert len(calls) > 0  # the fresh build did colour
    assert np.array_equal(_run(sim, 10), _run(fresh, 10))


def test_topology_changes_rebuild(monkeypatch: pytest.MonkeyPatch) -> None:
    model = grid_model(8, pins=(0, 7))
    sim = Simulator(model, SimSettings.cloth())
    _run(sim, 3)
    before = sim.state()[0]
    calls = _count_colourings(monkeypatch)
    sim.update_settings(SimSettings.cloth(stretch_limit_levels=0, tethers=False))
    assert calls and not sim.solver.tethers
    assert np.array_equal(sim.state()[0], before)  # the state is kept
    sim.update_settings(SimSettings.cloth(solver="CLASSIC"))
    assert sim.dtype == np.float64 and np.allclose(sim.state()[0], before, atol=1e-6)
    assert np.isfinite(_run(sim, 2)).all()


def test_substeps_past_the_hard_maximum_are_clamped_with_a_note() -> None:
    """Issue 34 item 7: nothing capped ``substeps`` (100,000 gave 75 s a frame on a 100-point
    flag, 1e9 never finished); Blender's Cloth caps its Quality at 80, xof at 1,000."""
    for asked, used in ((100_000, 1_000), (10**9, 1_000), (1_000, 1_000), (0, 1)):
        settings, notes = SimSettings.cloth(substeps=asked).validated()
        assert settings.substeps == used
        assert bool(notes) == (asked != used)
    sim = Simulator(grid_model(4, pins=(0, 3)), SimSettings.cloth(substeps=10**9))
    assert sim.solver.substeps_for(1.0 / 24.0) == 1_000
    assert any("substeps=1000000000" in w for w in sim.warnings)
