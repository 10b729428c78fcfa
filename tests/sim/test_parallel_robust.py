"""Helper processes as a user's Blender runs them: the package under Blender's extension name,
a parent killed outright, no (or full) shared memory, a helper that cannot start, a fork.
Whatever happens, every object's positions are what one process gives and no helper is left
running."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from addon.sim import Simulator
from addon.sim.many import parallel
from addon.sim.many.world import World

from .test_parallel import _sheets

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
from bl_ext.user_default.xof.addon.sim import parallel
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

    monkeypatch.setattr(os, "posix_fallocate", full)
    before = set(os.listdir(parallel.SHM)) if os.path.isdir(parallel.SHM) else set()
    split = _split_world()
    _same_as_here(split)
    assert split._batches is not None and all(b.remote is None for b in split._batches)
    assert parallel.processes() == 0  # off for the session
    if os.path.isdir(parallel.SHM):
        assert set(os.listdir(parallel.SHM)) <= before  # no file left behind


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
