"""A big cloth is built only once the user confirmed it, and shows its build's progress.

Issue 34 item 10: a 1M-vertex cloth took 7 s to build (2.2 GB) on the next frame change,
then 2-3 s a frame, with nothing but a console line. Now a cloth bigger than
``BIG_CLOTH_POINTS`` waits, with a line in the panel, for the Build button
(``xof.sim_build``, which asks first), and its build moves Blender's progress cursor and
the status bar text. The thresholds are lowered here so an 8 x 8 cloth counts as big.
"""

from __future__ import annotations

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene.cloth import object_solver  # noqa: E402
from xof.addon.scene.cloth import runtime as cloth_runtime  # noqa: E402

from ..cloth_fixtures import GRID, on_screen, positions  # noqa: E402

pytestmark = pytest.mark.blender


class Recorder:
    """Stands for the window manager and the workspace: records the progress calls."""

    def __init__(self) -> None:
        self.calls: list[tuple[object, ...]] = []

    def progress_begin(self, low: int, high: int) -> None:
        self.calls.append(("begin", low, high))

    def progress_update(self, value: int) -> None:
        self.calls.append(("update", value))

    def progress_end(self) -> None:
        self.calls.append(("end",))

    def status_text_set(self, text: str | None) -> None:
        self.calls.append(("status", text))


@pytest.fixture
def big(cloth, monkeypatch):
    """The 8 x 8 cloth (64 points) counted as big: more than 50 points, progress from 10."""
    monkeypatch.setattr(object_solver, "BIG_CLOTH_POINTS", 50)
    monkeypatch.setattr(object_solver, "PROGRESS_FROM_VERTICES", 10)
    bpy.context.view_layer.objects.active = cloth
    return cloth


def test_a_big_cloth_waits_for_the_build_button(big) -> None:
    scene = bpy.context.scene
    rest = positions(big).copy()
    scene.frame_set(1)
    scene.frame_set(2)
    assert cloth_runtime.peek_runtime(big) is None  # nothing built on the frame changes
    assert "press Build" in big.xof_physics.last_warning
    assert "(more than 50)" in big.xof_physics.last_warning
    assert f"{GRID * GRID:,} points" in big.xof_physics.last_warning
    np.testing.assert_array_equal(on_screen(big), rest)
    with pytest.raises(RuntimeError, match="press Build"):  # a bake would build it: refused
        bpy.ops.xof.sim_bake()
    assert bpy.ops.xof.sim_build() == {"CANCELLED"}  # not confirmed: asks, builds nothing
    assert cloth_runtime.peek_runtime(big) is None
    assert bpy.ops.xof.sim_build(confirmed=True) == {"FINISHED"}  # the dialog's OK
    assert cloth_runtime.peek_runtime(big) is not None
    assert big.xof_physics.confirmed_points == GRID * GRID
    assert big.xof_physics.last_warning == ""
    for f in range(1, 8):  # from now on it plays (from the start frame)
        scene.frame_set(f)
    assert np.abs(on_screen(big) - rest).max() > 0.05  # it fell
    cloth_runtime.forget(big)  # rebuilt later (a file load): confirmed once is enough
    scene.frame_set(1)
    assert cloth_runtime.peek_runtime(big) is not None


def test_the_build_shows_progress_and_status_text(big, monkeypatch) -> None:
    recorder = Recorder()
    monkeypatch.setattr(object_solver, "progress_targets", lambda: (recorder, recorder))
    assert bpy.ops.xof.sim_build(confirmed=True) == {"FINISHED"}
    stages = 1 + object_solver.BUILD_STAGES
    kinds = [c[0] for c in recorder.calls]
    assert recorder.calls[0] == ("begin", 0, stages)
    assert [c[1] for c in recorder.calls if c[0] == "update"] == list(range(1, stages + 1))
    assert kinds[-2:] == ["end", "status"] and recorder.calls[-1] == ("status", None)
    texts = [c[1] for c in recorder.calls if c[0] == "status" and c[1] is not None]
    assert len(texts) == stages
    assert texts[0] == f"xof: building cloth {big.name}: reading the mesh (1/{stages})"
