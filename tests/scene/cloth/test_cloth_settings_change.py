"""A setting change on a cloth object rebuilds only what it changes; the wind model, speed
multiplier and the classic solver's limits reach the solver from the physics properties."""

from __future__ import annotations

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene.cloth import object_solver  # noqa: E402
from xof.addon.scene.cloth import runtime as cloth_runtime  # noqa: E402
from xof.addon.sim.xpbd import coloring  # noqa: E402

from ..cloth_fixtures import GRID, pinned_cloth  # noqa: E402

pytestmark = pytest.mark.blender


@pytest.fixture
def cloth(physics):
    """The shared cloth (conftest.py), simulated over frames 1-40."""
    return pinned_cloth(bpy, GRID, frame_end=40)


def test_a_value_change_keeps_the_model_and_the_colouring(cloth, monkeypatch) -> None:
    scene = bpy.context.scene
    for f in range(1, 6):
        scene.frame_set(f)
    rt = cloth_runtime.peek_runtime(cloth)
    model, simulator, solver = rt.model, rt.simulator, rt.simulator.solver
    calls: list[int] = []
    real = coloring.colour_groups

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr("xof.addon.sim.xpbd.build.colour_groups", counted)
    cloth.xof_physics.stiffness = 2.0e5
    cloth.xof_physics.gravity = (0.0, 0.0, -3.0)
    scene.frame_set(6)
    rt = cloth_runtime.peek_runtime(cloth)
    assert rt.model is model and rt.simulator is simulator and rt.simulator.solver is solver
    assert calls == [] and rt.settings.stiffness == pytest.approx(2.0e5)
    assert rt.simulator.settings.gravity[2] == pytest.approx(-3.0)
    cloth.xof_physics.use_bend = False  # different springs: a new model
    scene.frame_set(7)
    assert cloth_runtime.peek_runtime(cloth).model is not model


def test_wind_model_and_speed_reach_the_solver(cloth) -> None:
    props = cloth.xof_physics
    props.wind = (0.0, 5.0, 0.0)
    props.wind_model = "FACE"
    props.time_scale = 2.0
    scene = bpy.context.scene
    scene.frame_set(1)
    scene.frame_set(2)
    rt = cloth_runtime.peek_runtime(cloth)
    assert rt.settings.wind_model == "FACE" and rt.settings.time_scale == pytest.approx(2.0)
    assert rt.model.has_faces and rt.simulator.solver.face_wind is not None
    assert np.isfinite(rt.simulator.positions()).all()


def test_classic_limits_are_reported_in_the_panel(cloth) -> None:
    props = cloth.xof_physics
    props.solver = "CLASSIC"
    props.max_substeps = 20
    props.stiffness = 1.0e8
    scene = bpy.context.scene
    scene.frame_set(1)
    scene.frame_set(2)
    rt = cloth_runtime.peek_runtime(cloth)
    assert rt.simulator.solver.substeps_for(1.0 / scene.render.fps) == 20
    assert "softened" in props.last_warning


def test_a_big_build_shows_progress_headless(cloth, monkeypatch, capsys) -> None:
    from xof.addon.scene.imp import progress

    monkeypatch.setattr(object_solver, "PROGRESS_FROM_VERTICES", 10)
    monkeypatch.setattr(progress, "CONSOLE_AFTER_SECONDS", 0.0)
    monkeypatch.setattr(progress.time, "perf_counter", _ticking_clock())
    bpy.context.scene.frame_set(1)
    lines = [ln for ln in capsys.readouterr().err.splitlines() if "building cloth" in ln]
    assert lines[0].endswith("1/6 reading the mesh") and lines[-1].endswith("6/6 pass plans")


def _ticking_clock():
    """A clock that moves 2 s a call, so every progress step prints its line."""
    state = {"now": 0.0}

    def now() -> float:
        state["now"] += 2.0
        return state["now"]

    return now


def test_substeps_have_a_hard_maximum(cloth) -> None:
    """Issue 34 item 7: 100,000 substeps (typed, or read from a .blend) took 75 s a frame on a
    100-point flag and 1e9 never finished. The property stops at 1,000 when typed; a value
    stored past it (as a crafted .blend holds it) is clamped by the settings' validation."""
    props = cloth.xof_physics
    props.substeps = 100_000  # typed: RNA clamps to the hard maximum
    assert props.substeps == 1_000
    props["substeps"] = 10**9  # stored as is, as a .blend may hold it
    assert props.get("substeps") == 10**9
    scene = bpy.context.scene
    scene.frame_set(1)
    scene.frame_set(2)
    rt = cloth_runtime.peek_runtime(cloth)
    assert rt.settings.substeps == 1_000
    assert rt.simulator.solver.substeps_for(1.0 / scene.render.fps) == 1_000
