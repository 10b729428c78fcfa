"""Parts of a World stepped by helper processes, on the other cores, while this one steps its own.

Threads do not help here: a substep is some 1,000 numpy calls of 1-10 us each, and a
thread waiting for the GIL wakes too late to use another's call (two threads ran 40
sheets no faster than one, see tests/bench/README.md). A helper process (``step_worker``)
holds a copy of a partition's merged solver and maps its positions and velocities from a
file both processes map (the partition's ``Simulator`` objects keep their views of them
here, so every per-object call works as before); each frame it is sent the frame's pin
path and the changes of its own copies of the colliders (a surface's new pose; a fresh
copy when it was posed more than once since), runs the same substeps as this process
would, and answers. The objects of different partitions share no point, so each object's
result is the same, bit for bit, as stepping it alone. Colliders reach the helper through
their own ``helper_copy``, ``version``, ``update_since`` and ``apply_update`` (see
``collide.colliders.Collider``); a kind from outside this package (a test's, another
add-on's) is imported there as here, from this process's module search path.

An answer is awaited a few times the helper's usual time on a frame (at least
``ANSWER_FLOOR`` seconds): a helper stopped (a debugger) or starved (swap) beyond that is
ended, and its batch's frame is stepped here from its start, with a warning.

``processes()``: how many helpers a World may use (``configure``; automatic: one less
than the cores this process may run on). ``shutdown()`` stops them (the extension's
unregister, a file load, the interpreter's exit); they also end when this process does
(their stdin closes; they also watch their parent's pid). A helper that cannot start
(another Python without numpy, no shared memory) turns them off for the session; a forked
child never talks to its parent's helpers, and its Worlds copy the state the helpers map
into their own memory (else the child would step its parent's cloths).
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import mmap
import os
import pickle
import queue
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from typing import Any, BinaryIO, Protocol

import numpy as np

#: a batch is split only when it has this many points, and each part at least ``PART_POINTS``
MIN_POINTS = 4000
PART_POINTS = 2000
#: this process's part of a split batch, against a helper's: it also reads and shows
#: every object (measured, tests/bench/README.md "many15d")
LOCAL_SHARE = 0.8
SHM = "/dev/shm"  # where the shared state lives on Linux (else the temporary folder)
#: a frame's answer is awaited ``ANSWER_FACTOR`` times the helper's usual time on a frame
#: from the request, and at least ``ANSWER_FLOOR`` seconds once this process waits for it;
#: ``FIRST_ANSWER`` before the helper has a usual time, ``BUILD_ANSWER`` for a build
ANSWER_FACTOR = 5.0
ANSWER_FLOOR = 1.0
FIRST_ANSWER = 10.0
BUILD_ANSWER = 60.0

# -I: like Blender's own Python, no PYTHON* variables, user site or working folder
_FLAGS = ("-I",)
_BOOT = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "import importlib; importlib.import_module(sys.argv[2] + '.many.step_worker')"
    ".main(sys.argv[3], int(sys.argv[4]))"
)
_SETTINGS: dict[str, int | None] = {"processes": None, "broken": 0}
_WORKERS: list[StepWorker] = []
_NAMES = itertools.count()
_USED = {"cpu": 0.0}


class HoldsShared(Protocol):
    """What holds state a helper maps (a World): told in a forked child to copy it into its
    own memory and forget its helpers."""

    def leave_helpers(self) -> None: ...


_HOLDERS: weakref.WeakSet[HoldsShared] = weakref.WeakSet()


def helper_cpu() -> float:
    """CPU seconds the helpers reported so far (benchmarks add them to this process's)."""
    return _USED["cpu"]


def configure(processes: int | None) -> None:
    """Helpers a World may use: 0 none, None one less than the cores (at most 7)."""
    if processes is not None and processes < 0:
        raise ValueError("processes must be >= 0 or None")
    _SETTINGS["processes"] = processes


def processes() -> int:
    """How many helper processes a World steps with now."""
    chosen = _SETTINGS["processes"]
    if not _startable() or _SETTINGS["broken"]:
        return 0
    if chosen is None:
        chosen = min(max(_cores() - 1, 0), 7)
    return chosen


def _cores() -> int:
    """The cores this process may run on (a container's or a task's limit, not the machine's)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # no affinity call (macOS, Windows)
        return os.cpu_count() or 1


def broken(reason: str) -> None:
    """A helper could not start or serve: none is used again this session (one process)."""
    if not _SETTINGS["broken"]:
        print(f"xof: cloth helper processes off for this session: {reason}", file=sys.stderr)
    _SETTINGS["broken"] = 1


def _startable() -> bool:
    """Whether ``sys.executable`` is a Python (in Blender it is the bundled one; were it
    Blender itself, no helper is started)."""
    return os.path.basename(sys.executable or "").lower().startswith("python")


def split(sizes: list[int], helpers: int, local: float = 1.0) -> list[list[int]]:
    """Members (by point count ``sizes``) in up to ``helpers + 1`` runs of consecutive
    members with about the same points, the first (this process's) ``local`` times a
    helper's (one run when too small to be worth a process)."""
    total = sum(sizes)
    parts = min(helpers + 1, len(sizes), total // PART_POINTS) if total >= MIN_POINTS else 1
    if parts <= 1:
        return [list(range(len(sizes)))]
    runs: list[list[int]] = [[]]
    done = 0
    whole = local + parts - 1
    for i, size in enumerate(sizes):
        ends = total * (local + len(runs) - 1) / whole  # where the current run ends
        if runs[-1] and done >= ends and len(runs) < parts:
            runs.append([])
        runs[-1].append(i)
        done += size
    return runs


class Pace:
    """Whether the helpers make the substeps faster now (on a busy machine they may wait
    for a core): the substeps' wall time with and without them, each a running mean (the
    first frame each way left out: it warms up); two frames each way to begin with, then
    the faster, the other tried every ``PROBE`` frames. Positions are the same either way."""

    PROBE = 16

    def __init__(self) -> None:
        self.mean: dict[bool, float | None] = {True: None, False: None}
        self.warm = {True: False, False: False}
        self.frames = 0

    def helpers(self) -> bool:
        """Use the helpers for this frame?"""
        self.frames += 1
        probe = self.frames % self.PROBE == 0
        with_them, without = self.mean[True], self.mean[False]
        if with_them is None or without is None:
            return with_them is None
        return (with_them <= without) != probe

    def record(self, helped: bool, seconds: float) -> None:
        if not self.warm[helped]:
            self.warm[helped] = True
            return
        mean = self.mean[helped]
        self.mean[helped] = seconds if mean is None else mean + 0.3 * (seconds - mean)


class WorkerError(RuntimeError):
    """A helper process failed or went away."""


class StepWorker:
    """One helper process (see the module); its answers are read by a thread of their own,
    so this process waits for one with a timeout."""

    def __init__(self) -> None:
        package = __name__.rsplit(".", 2)[0]  # the sim package: this module is <sim>.many.*
        here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        root, name = os.path.split(here)
        self.owner = os.getpid()  # a forked child must not use its parent's pipes
        self.proc = subprocess.Popen(
            [sys.executable, *_FLAGS, "-c", _BOOT, root, name, package, str(self.owner)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=root,  # the helper's first path entry: nothing of the user's folder shadows
            creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0),  # Windows: no console
        )
        self.last = (0.0, 0.0)  # CPU and wall seconds of the helper's last answer
        self.keys = 0
        self.answered = False  # it served a request (else a failure means it cannot start)
        self._answers: queue.Queue[Any] = queue.Queue()
        self._ended: BaseException | None = None  # the answers' pipe failed or closed
        assert self.proc.stdout is not None
        self._reader = threading.Thread(
            target=_read_answers,
            args=(self.proc.stdout, self._answers),
            name="xof step helper answers",
            daemon=True,
        )
        self._reader.start()

    def alive(self) -> bool:
        return os.getpid() == self.owner and self.proc.poll() is None

    def send(self, request: tuple[Any, ...]) -> None:
        """Send ``request`` (pickled whole first: an object that cannot be pickled leaves
        the pipe as it was)."""
        stdin = self.proc.stdin
        if os.getpid() != self.owner:
            raise WorkerError("step helper belongs to the parent process")
        try:
            data = pickle.dumps(request, protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, TypeError, AttributeError) as exc:
            raise WorkerError(f"step request cannot be sent: {exc}") from exc
        try:
            assert stdin is not None
            stdin.write(data)
            stdin.flush()
        except (OSError, ValueError) as exc:
            raise WorkerError(f"step helper unreachable: {exc}") from exc

    def answer(self, timeout: float) -> tuple[float, float]:
        """The helper's answer to the last request: its CPU and wall seconds on it. One not
        there within ``timeout`` seconds ends the helper (it may be stopped or starved: it
        must not write into the state after this process took it back)."""
        if self._ended is not None:
            raise WorkerError(f"step helper gone: {self._ended}")
        try:
            reply = self._answers.get(timeout=max(float(timeout), 0.0))
        except queue.Empty:
            self.kill()
            raise WorkerError(f"step helper did not answer within {timeout:.1f} s, ended") from None
        if isinstance(reply, BaseException):
            self._ended = reply
            raise WorkerError(f"step helper gone: {reply}")
        if reply[0] != "ok":
            raise WorkerError(f"step helper failed:\n{reply[1]}")
        self.answered = True
        _USED["cpu"] += float(reply[1])
        self.last = (float(reply[1]), float(reply[2]))
        return self.last

    def kill(self) -> None:
        """End the helper now and wait until it is gone (a stopped one too)."""
        if os.getpid() == self.owner and self.proc.poll() is None:
            with contextlib.suppress(OSError):
                self.proc.kill()
            self.proc.wait()

    def stop(self) -> None:
        if self.alive():
            try:
                self.send(("stop",))
                self.answer(ANSWER_FLOOR)
            except WorkerError:
                pass
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):  # unsent bytes to a helper that is gone
                self.proc.stdin.close()
        try:
            self.proc.wait(2.0)
        except subprocess.TimeoutExpired:
            self.kill()
        # the reader thread holds the answers' pipe until the helper is gone: closed after
        if self.proc.stdout is not None and os.getpid() == self.owner:
            self._reader.join(2.0)
            with contextlib.suppress(OSError):
                self.proc.stdout.close()


def _read_answers(stdout: BinaryIO, answers: queue.Queue[Any]) -> None:
    """Put each answer of a helper in ``answers``; the pipe's end or failure last."""
    while True:
        try:
            reply = pickle.load(stdout)
        except (EOFError, OSError, ValueError, pickle.UnpicklingError) as exc:
            answers.put(exc if str(exc) else EOFError("the helper closed its answers"))
            return
        answers.put(reply)


def workers(count: int) -> list[StepWorker]:
    """``count`` running helpers (started as needed)."""
    if any(not w.alive() and not w.answered for w in _WORKERS):
        broken("a helper process ended before it answered")
    _WORKERS[:] = [w for w in _WORKERS if w.alive()]
    if len(_WORKERS) < count:
        _install_hooks()
    while len(_WORKERS) < count:
        _WORKERS.append(StepWorker())
    return _WORKERS[:count]


def running() -> int:
    """Helper processes running now (for tests)."""
    return sum(w.alive() for w in _WORKERS)


def shutdown() -> None:
    """Stop every helper (the Worlds using them step alone from then on)."""
    while _WORKERS:
        _WORKERS.pop().stop()


def hold(owner: HoldsShared) -> None:
    """``owner`` has state a helper maps: a forked child calls its ``leave_helpers``."""
    _HOLDERS.add(owner)


def _forked() -> None:
    """In a forked child: forget the parent's helpers (their pipes and processes are its),
    and every World copies the state they map into its own memory (the mapping is shared:
    stepping it here would move the parent's cloths)."""
    _WORKERS.clear()
    holders = list(_HOLDERS)
    _HOLDERS.clear()
    for owner in holders:
        owner.leave_helpers()


def _install_hooks() -> None:
    """Stop the helpers at exit and forget them in a forked child; installed with the first
    helper, so importing the package changes nothing in the host process."""
    if not _HOOKS:
        _HOOKS.append(True)
        atexit.register(shutdown)
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=_forked)


_HOOKS: list[bool] = []


class Partition:
    """A batch's substeps run by a helper: its state lives in a mapped file."""

    def __init__(self, worker: StepWorker, solver: Any, pos: np.ndarray, vel: np.ndarray) -> None:
        self.worker = worker
        worker.keys += 1
        self.key = worker.keys
        n = len(pos)
        try:
            self.path, shared = _shared(2 * n * 16)
        except (OSError, ValueError) as exc:  # no (or too little) shared memory: step here
            broken(f"no shared memory ({exc})")
            raise WorkerError(f"no shared memory: {exc}") from exc
        self.map: mmap.mmap | None = shared
        state = np.frombuffer(shared, dtype=np.float32, count=2 * n * 4).reshape(2, n, 4)
        state[0], state[1] = pos, vel
        self.pos, self.vel = state[0], state[1]
        self._backup = np.empty_like(state)
        self.mirrors: dict[int, tuple[Any, int]] = {}
        self._sets: object = None
        self.pending = False
        self.helper_cpu = 0.0  # the helper's CPU seconds on the last frame (for benchmarks)
        self.usual: float | None = None  # the helper's wall seconds on a frame (running mean)
        self.sent = 0.0  # when the frame's request went out (perf_counter)
        search = [os.path.abspath(p) for p in sys.path if isinstance(p, str) and p]
        try:
            worker.send(("build", self.key, solver.members, self.path, n, search))
            worker.answer(BUILD_ANSWER)
        except WorkerError as exc:
            if not worker.answered:
                broken(str(exc).splitlines()[0])
            self.close()
            raise
        finally:
            self._unlink()  # both have it mapped (or the helper failed): no file left

    def send(self, plan: Any, sets: list[Any], moving: tuple[Any, ...]) -> bool:
        """Start the frame's substeps in the helper (True: sent)."""
        updates: list[tuple[int, str, Any]] = []
        used: dict[int, Any] = {}
        for contact in sets:
            for collider in contact.colliders:
                used[id(collider)] = collider
        for collider in moving:
            used[id(collider)] = collider
        for key, collider in used.items():
            update = self._update(key, collider)
            if update is not None:
                updates.append(update)
        dropped = [k for k in self.mirrors if k not in used]
        for key in dropped:
            del self.mirrors[key]
        spec = None
        if sets is not self._sets:
            spec = [
                (tuple(id(c) for c in s.colliders), s.movable, s.margin, s.friction) for s in sets
            ]
            self._sets = sets
        np.copyto(self._backup[0], self.pos)
        np.copyto(self._backup[1], self.vel)
        request = (plan.substeps, plan.sub_dt, plan.start, plan.end, spec, updates)
        self.worker.send(("step", self.key, *request, [id(c) for c in moving], dropped))
        self.sent = time.perf_counter()
        self.pending = True
        return True

    def _update(self, key: int, collider: Any) -> tuple[int, str, Any] | None:
        """What the helper's copy of ``collider`` needs (None: nothing): its update since
        the version the copy has, else a fresh copy."""
        version = collider.version
        known = self.mirrors.get(key)
        self.mirrors[key] = (collider, version)
        if known is not None and known[0] is collider:
            if known[1] == version:
                return None
            update = collider.update_since(known[1])
            if update is not None:
                return (key, "update", update)
        return (key, "object", collider.helper_copy())

    def wait(self) -> None:
        """The helper's answer for the frame; on a failure (or none in time: the helper is
        ended) the frame's start is restored and ``WorkerError`` raised (the caller steps
        it here)."""
        self.pending = False
        try:
            self.helper_cpu, wall = self.worker.answer(self._patience())
        except WorkerError:
            np.copyto(self.pos, self._backup[0])
            np.copyto(self.vel, self._backup[1])
            self.mirrors.clear()
            raise
        self.usual = wall if self.usual is None else self.usual + 0.3 * (wall - self.usual)

    def _patience(self) -> float:
        """Seconds to wait from now for the frame's answer: until ``ANSWER_FACTOR`` times the
        helper's usual time has passed since the request, at least ``ANSWER_FLOOR``."""
        if self.usual is None:
            return FIRST_ANSWER
        left = self.sent + ANSWER_FACTOR * self.usual - time.perf_counter()
        return max(ANSWER_FLOOR, left)

    def private_state(self) -> tuple[np.ndarray, np.ndarray]:
        """Copies of the positions and velocities in this process's own memory (a frame the
        helper is still stepping: its start)."""
        if self.pending:
            return self._backup[0].copy(), self._backup[1].copy()
        return self.pos.copy(), self.vel.copy()

    def close(self) -> None:
        """Drop the helper's part and unmap the state (views of it must be gone)."""
        if self.pending:
            with contextlib.suppress(WorkerError):
                self.wait()
        if self.worker.alive():
            with contextlib.suppress(WorkerError):
                self.worker.send(("drop", self.key))
                self.worker.answer(ANSWER_FLOOR)
        self.pos = self.vel = self._backup = np.zeros((0, 4), dtype=np.float32)
        if self.map is not None:
            with contextlib.suppress(BufferError):  # views still alive: freed with them
                self.map.close()
            self.map = None

    def _unlink(self) -> None:
        if os.name != "nt":
            with contextlib.suppress(OSError):
                os.unlink(self.path)


def _shared(size: int) -> tuple[str, mmap.mmap]:
    """Memory another process can map by name: a named mapping on Windows, else a file
    (in /dev/shm where there is one) that is unlinked once both have it mapped. Its pages
    are reserved first: a full /dev/shm fails here (OSError), not with SIGBUS at a write."""
    if os.name == "nt":
        name = f"xof-step-{os.getpid()}-{next(_NAMES)}"
        return name, mmap.mmap(-1, size, tagname=name)  # type: ignore[call-arg]
    folder = SHM if os.path.isdir(SHM) else None
    handle, path = tempfile.mkstemp(prefix="xof-step-", dir=folder)
    try:
        with os.fdopen(handle, "r+b") as f:
            f.truncate(size)
            if hasattr(os, "posix_fallocate"):  # macOS has none (and no /dev/shm)
                os.posix_fallocate(f.fileno(), 0, size)
            return path, mmap.mmap(f.fileno(), size)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise
