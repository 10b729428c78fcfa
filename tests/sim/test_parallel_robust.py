"""Helper processes as a user's Blender runs them: the package under Blender's extension name,
a parent killed outright, no (or full) shared memory, a helper that cannot start, a fork.
Whatever happens, every object's positions are what one process gives and no helper is left
running."""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from addon.sim import SimSettings, Simulator
from addon.sim.many import parallel
from addon.sim.many.world import World

from .test_parallel import _sheets
from .test_world import _cloth

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _fresh():
    yield
    parallel.shutdown()
    parallel._SETTINGS["broken"] = 0
    assert parallel.running() == 0


def _same_as_here(split: World, frames: int = 3) -> None:
    here = World([Simulator(m, s) for m, s in _sheets(20)], processes=0)
    for _ in range(frames):
        for x, y in zip(here.step(), split.step(), strict=True):
            assert np.array_equal(x.positions, y.positions)


def _split_world() -> World:
    world = World([Simulator(m, s) for m, s in _sheets(20)], processes=1)
    world.pace.helpers = lambda: True  # type: ignore[method-assign]
    return world


def _gone(pid: int, seconds: float) -> bool:
    """Whether process ``pid`` ended (or is a zombie nobody reaped) within ``seconds``."""
    stop = time.monotonic() + seconds
    while time.monotonic() < stop:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


_PARENT = """
import os, sys, time
sys.path.insert(0, {links!r})
sys.path.insert(0, {root!r})
from bl_ext.user_default.xof.addon import sim
from bl_ext.user_default.xof.addon.sim.many import parallel
from bl_ext.user_default.xof.addon.sim.many.world import World
from tests.sim.grids import quad_grid
def sheet(i):
    pos, sizes, corners = quad_grid(20, 20, 0.5, 1.0)
    pos[:, 0] += 0.6 * i
    springs, kinds = sim.merge_with_kinds(
        sim.face_edges(sizes, corners), sim.shear_springs(sizes, corners),
        sim.bend_springs(sizes, corners, pos))
    masses = [0.0 if k in (380, 399) else 0.3 for k in range(400)]
    model = sim.ClothModel(pos, masses, springs, kinds, face_sizes=sizes, face_corners=corners)
    return sim.Simulator(model, sim.SimSettings.cloth())
here = World([sheet(i) for i in range(20)], processes=0)
split = World([sheet(i) for i in range(20)], processes=1)
split.pace.helpers = lambda: True
for _ in range(2):
    assert all((a.positions == b.positions).all() for a, b in zip(here.step(), split.step()))
assert split._batches[1].remote is not None
child = os.fork() if {fork} else 1
if child == 0:  # holds the helper's pipes open: only the pid watch can end it
    time.sleep(30)
    os._exit(0)
print(parallel._WORKERS[0].proc.pid, child, flush=True)
time.sleep(60)
"""


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to see the helper end")
@pytest.mark.parametrize("fork", [False, True])
def test_a_killed_parent_leaves_no_helper(tmp_path: Path, fork: bool) -> None:
    """The package as Blender names an extension (``bl_ext.<repo>.xof``); the parent killed
    with SIGKILL (no atexit): its helper ends, by its stdin's end or, when a forked child
    still holds the pipe, by its parent's pid going away."""
    links = tmp_path / "links"
    (links / "bl_ext" / "user_default").mkdir(parents=True)
    (links / "bl_ext" / "__init__.py").write_text("")
    (links / "bl_ext" / "user_default" / "__init__.py").write_text("")
    (links / "bl_ext" / "user_default" / "xof").symlink_to(ROOT, target_is_directory=True)
    script = _PARENT.format(links=str(links), root=str(ROOT), fork=fork)
    parent = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(script)], stdout=subprocess.PIPE, text=True
    )
    assert parent.stdout is not None
    line = parent.stdout.readline().split()
    assert len(line) == 2, "the parent failed before its helper started"
    helper, child = int(line[0]), int(line[1])
    try:
        assert not _gone(helper, 0.3)  # serving
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        assert _gone(helper, 10.0)
    finally:
        for pid in (helper, child) if fork else (helper,):
            if not _gone(pid, 0.0):
                os.kill(pid, signal.SIGKILL)


def test_no_dev_shm_maps_a_temporary_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "SHM", "/nonexistent-shm")
    split = _split_world()
    _same_as_here(split)
    assert split._batches is not None and split._batches[1].remote is not None


@pytest.mark.skipif(not hasattr(os, "posix_fallocate"), reason="no posix_fallocate")
def test_full_shared_memory_steps_in_one_process(monkeypatch: pytest.MonkeyPatch) -> None:
    def full(fd: int, offset: int, size: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    made: list[str] = []  # this test's own segments: another run on the machine may share /dev/shm
    mkstemp = tempfile.mkstemp

    def recorded(*args: Any, **kwargs: Any) -> tuple[int, str]:
        handle, path = mkstemp(*args, **kwargs)
        made.append(path)
        return handle, path

    monkeypatch.setattr(os, "posix_fallocate", full)
    monkeypatch.setattr(tempfile, "mkstemp", recorded)
    split = _split_world()
    _same_as_here(split)
    assert split._batches is not None and all(b.remote is None for b in split._batches)
    assert parallel.processes() == 0  # off for the session
    assert made, "no shared segment was tried"
    assert [p for p in made if os.path.exists(p)] == []  # no file left behind


def test_a_helper_that_cannot_start_turns_them_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """E.g. a Python without numpy: one process from then on, no helper started again."""
    monkeypatch.setattr(parallel, "_BOOT", "import sys; sys.exit(3)")
    split = _split_world()
    _same_as_here(split)
    assert split._batches is not None and all(b.remote is None for b in split._batches)
    assert parallel.processes() == 0
    started = len(parallel._WORKERS)
    World([Simulator(m, s) for m, s in _sheets(20)]).step()
    assert len(parallel._WORKERS) <= started and parallel.running() == 0


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
def test_a_forked_child_does_not_use_its_parents_helpers() -> None:
    split = _split_world()
    _same_as_here(split, 1)
    assert parallel.running() == 1
    pid = os.fork()
    if pid == 0:  # the child: the parent's helpers are not its own
        code = 0 if parallel.running() == 0 and not parallel._WORKERS else 1
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0
    assert parallel.running() == 1
    here = World([Simulator(m, s) for m, s in _sheets(20)], processes=0)
    here.step()
    for x, y in zip(here.step(), split.step(), strict=True):  # the helper still serves us
        assert np.array_equal(x.positions, y.positions)
    assert split._batches is not None and split._batches[1].remote is not None


def test_processes_follow_the_cores_this_process_may_use(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "_cores", lambda: 1)
    assert parallel.processes() == 0
    monkeypatch.setattr(parallel, "_cores", lambda: 4)
    assert parallel.processes() == 3
    parallel.configure(0)
    try:
        assert parallel.processes() == 0
    finally:
        parallel.configure(None)


def _three_cloths() -> list[Simulator]:
    """Three 40 x 40 cloths (4,800 points: split between this process and a helper)."""
    return [
        Simulator(_cloth(40, 1.0, 1.2 * i, (1560, 1599)), SimSettings.cloth(damping=0.1 * i))
        for i in range(3)
    ]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
def test_a_forked_child_stepping_its_copy_leaves_the_parents_cloths_alone() -> None:
    """Three cloths with a helper, 10 frames played, then ``os.fork()``: the child plays
    frames 11-30 and exits, then the parent plays 11-30. The child's World held the helper's
    part as views of the memory the helper maps (shared with the parent), and stepped it
    there once its request failed: one of the parent's cloths was off by up to 0.456 m on
    every frame after, with no warning. The child now copies that state into its own memory
    at the fork; the parent's frames equal a World's without helpers, bit for bit."""
    here = World(_three_cloths(), processes=0)
    split = World(_three_cloths(), processes=1)
    split.pace.helpers = lambda: True  # type: ignore[method-assign]
    for _ in range(10):
        for x, y in zip(here.step(), split.step(), strict=True):
            assert np.array_equal(x.positions, y.positions)
    assert split._batches is not None and split._batches[1].remote is not None
    pid = os.fork()
    if pid == 0:  # the child: plays on with its copy, then leaves without cleaning up
        code = 1
        try:
            for _ in range(20):
                split.step()
            code = 0 if parallel.running() <= 1 else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0
    worst = 0.0
    for _ in range(20):
        for x, y in zip(here.step(), split.step(), strict=True):
            worst = max(worst, float(np.abs(x.positions - y.positions).max()))
    assert worst == 0.0
    assert split._batches is not None and split._batches[1].remote is not None  # still helped
    assert not any(w for sim in split.sims for w in sim.warnings)


@pytest.mark.skipif(not hasattr(signal, "SIGSTOP"), reason="no SIGSTOP")
def test_a_stopped_helper_is_given_up_and_its_batch_stepped_here() -> None:
    """A helper stopped (SIGSTOP: a debugger, or starved by swap) held the frame change
    until it resumed: 8 s in the repro, forever if it never does. Its answer is now awaited
    a few times its usual time on a frame (at least ``ANSWER_FLOOR``); then it is ended and
    the frame stepped here from its start, with a warning: the same positions, bit for bit,
    as without helpers."""
    here = World([Simulator(m, s) for m, s in _sheets(20)], processes=0)
    split = _split_world()
    for _ in range(3):
        for x, y in zip(here.step(), split.step(), strict=True):
            assert np.array_equal(x.positions, y.positions)
    assert split._batches is not None and split._batches[1].remote is not None
    usual = split._batches[1].remote.usual
    assert usual is not None and usual < parallel.ANSWER_FLOOR == 1.0  # the floor bounds it
    helper = parallel._WORKERS[0].proc
    os.kill(helper.pid, signal.SIGSTOP)
    resume = threading.Timer(8.0, os.kill, (helper.pid, signal.SIGCONT))  # the old code's 8 s
    resume.start()
    try:
        began = time.perf_counter()
        expected = here.step()
        got = split.step()
        waited = time.perf_counter() - began
    finally:
        resume.cancel()
        with contextlib.suppress(ProcessLookupError):
            os.kill(helper.pid, signal.SIGCONT)
    assert waited < 5.0, waited  # the floor (1 s), the frame here, a busy machine's slack
    for x, y in zip(expected, got, strict=True):
        assert np.array_equal(x.positions, y.positions)
    assert helper.poll() is not None  # ended: it can no longer write into the state
    assert split._batches[1].remote is None
    assert any("did not answer within" in w for w in split.sims[15].warnings)
    for _ in range(2):  # stepped here from then on
        for x, y in zip(here.step(), split.step(), strict=True):
            assert np.array_equal(x.positions, y.positions)
