"""The helper process of ``parallel.py``: steps partitions' substeps on memory both map.

Started as ``python -c BOOT`` with the directory holding this package on ``sys.path`` and
the package imported as ``sim`` (numpy + stdlib only, no bpy). Requests come as pickles on
stdin, answers go as pickles on stdout (anything printed goes to stderr). The parent's
objects name their classes by the parent's package (``bl_ext.<repo>.xof.addon.sim.*``,
``addon.sim.*``); they are loaded from this process's ``sim``. Stdin closing (the parent
gone) ends the process; so does the parent's pid going away (a watch thread, for when
another process holds the pipe open).

Requests (the first item names it; each is answered ``("ok", cpu seconds, wall seconds)`` or
``("error", text)``):
- ``("build", key, solvers, path, n)``: partition ``key``: its members' solvers (merged
  here, as the parent merged them: a pickle would not keep the merge's buffers' views)
  and the file mapping its ``(2, n, 4)`` float32 positions and velocities;
- ``("step", key, substeps, sub_dt, start, end, spec, updates, moving, dropped)``: one
  frame's substeps (``world.run_substeps``); ``spec`` the contact sets as
  ``(collider keys, movable, margin, friction)`` (None: as last frame), ``updates`` the
  mirrored colliders' changes ``(key, "object", collider)`` or ``(key, "pose", (previous,
  current))``, ``moving`` the keys told of each substep, ``dropped`` keys no longer used;
- ``("ahead", gives_way)``: not answered; the parts stepped since the last one whose pins and
  colliders stood still over that frame step the next frame now, on the guess that it is
  the same again (``_Ahead``); the next ``step`` of such a part that asks exactly that (the
  same pins, poses, substeps and contacts, the shared state untouched since) takes the
  result (the same computation on the same values: bit for bit what it would step);
  anything else discards it and steps as asked (``gives_way``: a request coming meanwhile
  is read at once; the step ahead goes on when it is the one guessed, else it ends). A
  ``step``'s answer adds whether the part will step ahead, whether it took a step ahead
  and how long this process had waited for it (seconds): ``("ok", cpu, wall, ahead,
  taken, idle)``; the CPU of stepping ahead is added to the next answer's;
- ``("drop", key)``, ``("stop",)``.
"""

from __future__ import annotations

import contextlib
import copy
import mmap
import os
import pickle
import select
import sys
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable
from typing import Any, BinaryIO

import numpy as np

from .colliders import Plane, Sphere
from .mesh_collider import MeshCollider
from .world import run_substeps
from .xpbd_merge import ContactSet, MergedXpbd

PACKAGE = __name__.rsplit(".", 1)[0]


class _Loader(pickle.Unpickler):
    """Classes of the parent's sim package from this process's."""

    def __init__(self, file: BinaryIO, parent_package: str) -> None:
        super().__init__(file)
        self.parent = parent_package

    def find_class(self, module: str, name: str) -> Any:
        if module == self.parent or module.startswith(self.parent + "."):
            module = PACKAGE + module[len(self.parent) :]
        return super().find_class(module, name)


def _same(a: Any, b: Any) -> bool:
    """Whether two request values are the same bits (arrays: dtype, shape and bytes)."""
    if a is None or b is None:
        return a is b
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def _still(collider: Any) -> bool:
    """A collider a frame ahead can be guessed for: a surface standing still, a sphere or
    a plane (they keep no state)."""
    if type(collider) is MeshCollider:
        return not collider.moving
    return isinstance(collider, (Sphere, Plane))


def _own_copy(collider: Any) -> Any:
    """A surface whose steps leave ``collider`` as it is (its candidate pairs are updated
    in place); spheres and planes keep no state."""
    if type(collider) is not MeshCollider:
        return collider
    twin = copy.copy(collider)
    twin._pairs = copy.deepcopy(collider._pairs)
    return twin


class _Guess:
    """The request a part expects next: its last frame's, the pins where that frame left
    them, each surface it posed posed again where it is."""

    def __init__(
        self, request: tuple[Any, ...], start: np.ndarray | None, posed: dict[int, Any]
    ) -> None:
        self.substeps, self.sub_dt, _, self.end, _, _, moving, _ = request
        self.start = start
        self.moving = list(moving)
        self.posed = posed  # key -> the surface's vertices (both poses)

    def matches(self, request: tuple[Any, ...]) -> bool:
        substeps, sub_dt, start, end, spec, updates, moving, dropped = request
        if spec is not None or dropped or list(moving) != self.moving:
            return False
        if substeps != self.substeps or sub_dt != self.sub_dt:
            return False
        if not (_same(start, self.start) and _same(end, self.end)):
            return False
        if len(updates) != len(self.posed):
            return False
        for key, kind, payload in updates:
            here = self.posed.get(key)
            if kind != "pose" or here is None:
                return False
            if not (_same(payload[0], here) and _same(payload[1], here)):
                return False
        return True


class _Ahead:
    """A part's next frame stepped on a guess: the state it started from, the result and the
    colliders as that step left them."""

    def __init__(
        self, guess: _Guess, before: np.ndarray, after: np.ndarray, colliders: dict[int, Any]
    ) -> None:
        self.guess = guess
        self.before = before
        self.after = after
        self.colliders = colliders


class _Part:
    """One partition: its solver, the shared state, its mirrored colliders."""

    def __init__(self, solver: Any, path: str, n: int) -> None:
        self.solver = solver
        if os.name == "nt":
            self.map = mmap.mmap(-1, 2 * n * 16, tagname=path)  # type: ignore[call-arg]
        else:
            with open(path, "r+b") as f:
                self.map = mmap.mmap(f.fileno(), 2 * n * 16)
        self.state = np.frombuffer(self.map, dtype=np.float32, count=2 * n * 4).reshape(2, n, 4)
        self.pos, self.vel = self.state[0], self.state[1]
        self.colliders: dict[int, Any] = {}
        self.spec: list[tuple[tuple[int, ...], np.ndarray, float, float]] = []
        self.guess: _Guess | None = None  # what the next frame would be, were it the same
        self.ahead: _Ahead | None = None
        self._last_end: Any = None

    def step(self, request: tuple[Any, ...]) -> bool:
        """One frame's substeps, or the step ahead when it is what is asked (True)."""
        ahead, self.ahead = self.ahead, None
        self.guess = None  # (a failed step leaves none)
        # taken when asked exactly the guess, the shared state what it started from (bits)
        if (
            ahead is not None
            and ahead.guess.matches(request)
            and ahead.before.view(np.uint32).tobytes() == self.state.view(np.uint32).tobytes()
        ):
            np.copyto(self.state, ahead.after)
            self.colliders = ahead.colliders
            self._remember(request)
            return True
        substeps, sub_dt, start, end, spec, updates, moving, dropped = request
        for key, kind, payload in updates:
            if kind == "object":
                self.colliders[key] = payload
            else:
                self.colliders[key].set_pose(*payload)
        for key in dropped:
            self.colliders.pop(key, None)
        if spec is not None:
            self.spec = spec
        movers = tuple(self.colliders[k] for k in moving)
        self.solver.contact_sets = self._sets(self.colliders)
        run_substeps(self.solver, self.pos, self.vel, substeps, sub_dt, start, end, movers)
        self._remember(request)
        return False

    def _sets(self, colliders: dict[int, Any]) -> list[ContactSet]:
        sets = [
            ContactSet(tuple(colliders[k] for k in keys), movable, margin, friction)
            for keys, movable, margin, friction in self.spec
        ]
        for contact in sets:
            contact.begin_frame()
        return sets

    def _remember(self, request: tuple[Any, ...]) -> None:
        """The guess for the next frame when this one's pins and colliders stood still."""
        substeps, _, start, end, _, updates, _, _ = request
        last, self._last_end = self._last_end, end
        self.guess = None
        if (start is None) != (end is None) or not _same(last, end):
            return  # the pins moved over the frame (or it is the part's first)
        if not all(_still(c) for c in self.colliders.values()):
            return
        if start is not None:  # where the last substep put the pins (``run_substeps``), read
            pins = (start + (end - start) * (substeps / substeps)).astype(np.float32)
            start = pins.astype(np.asarray(start).dtype)
        # the surfaces given this frame (a new pose or a new copy) are posed again the next
        posed = {
            k: self.colliders[k]._cur
            for k, _, _ in updates
            if type(self.colliders.get(k)) is MeshCollider
        }
        self.guess = _Guess(request, start, posed)

    def go_ahead(self, key: int, incoming: Callable[[], Any] | None = None) -> None:
        """Step the guessed next frame on copies (the shared state and colliders stay).
        ``incoming()`` gives a request that came meanwhile (None: none): the step goes on
        when it is this part's guessed one, else it is given up."""
        guess = self.guess
        if guess is None:
            return
        before = self.state.copy()  # (the parent is not stepping this part now)
        decided: list[bool] = []

        def stop() -> bool:
            if decided:
                return not decided[0]
            if incoming is None:
                return False
            request = incoming()
            if request is None:
                return False
            decided.append(
                request[0] == "step"
                and request[1] == key
                and guess.matches(request[2:])
                and before.view(np.uint32).tobytes() == self.state.view(np.uint32).tobytes()
            )
            return not decided[0]

        after = before.copy()
        colliders = {k: _own_copy(c) for k, c in self.colliders.items()}
        for surface, vertices in guess.posed.items():
            colliders[surface].set_pose(vertices, vertices)
        movers = tuple(colliders[k] for k in guess.moving)
        self.solver.contact_sets = self._sets(colliders)
        if run_substeps(
            self.solver, after[0], after[1], guess.substeps, guess.sub_dt, guess.start,
            guess.end, movers, stop=None if incoming is None else stop,
        ):  # fmt: skip
            self.ahead = _Ahead(guess, before, after, colliders)

    def close(self) -> None:
        self.pos = self.vel = np.zeros((0, 4), dtype=np.float32)
        self.state = np.zeros((2, 0, 4), dtype=np.float32)
        self.ahead = None
        with contextlib.suppress(BufferError):  # the solver still views it: freed with it
            self.map.close()


def _waiting(source: BinaryIO) -> Callable[[], bool] | None:
    """Whether a request waits on ``source`` now (None where pipes cannot be polled:
    Windows). Bytes already read into its buffer are not seen (the step ahead goes on)."""
    if os.name == "nt":
        return None
    try:
        fd = source.fileno()
    except (AttributeError, OSError, ValueError):
        return None

    def waiting() -> bool:
        return bool(select.select([fd], [], [], 0.0)[0])

    return waiting


def serve(source: BinaryIO, sink: BinaryIO, parent_package: str) -> None:
    """Answer requests until ``("stop",)`` or the end of ``source``."""
    parts: dict[int, _Part] = {}
    waiting = _waiting(source)
    queue: deque[Any] = deque()  # requests read during a step ahead

    def incoming() -> Any:
        if waiting is None or not waiting():
            return None
        try:
            request = _Loader(source, parent_package).load()
        except EOFError:
            request = ("end",)
        queue.append(request)
        return request

    stepped: list[tuple[int, _Part]] = []  # since the last ``ahead``
    owed = 0.0  # CPU seconds of steps ahead not yet reported
    idle_since = time.perf_counter()  # when this process last had nothing to do
    while True:
        try:
            request = queue.popleft() if queue else _Loader(source, parent_package).load()
        except EOFError:
            break
        kind = request[0]
        if kind == "end":
            break
        began, clock = time.process_time(), time.perf_counter()
        if kind == "ahead":
            with np.errstate(all="ignore"):
                for key, part in stepped:
                    if queue:  # a request came: answer it first
                        break
                    try:
                        part.go_ahead(key, incoming if request[1:2] == (True,) else None)
                    except Exception:  # the guess is only a guess: the step is redone
                        part.ahead = None
            stepped = []
            owed += time.process_time() - began
            idle_since = time.perf_counter()
            continue
        try:
            flags: tuple[Any, ...] = ()
            if kind == "build":
                key, members, path, n = request[1:]
                parts[key] = _Part(MergedXpbd(members), path, n)  # its work buffers anew
            elif kind == "step":
                part = parts[request[1]]
                taken = part.step(request[2:])
                if (request[1], part) not in stepped:
                    stepped.append((request[1], part))
                flags = (part.guess is not None, taken, clock - idle_since)
            elif kind == "drop":
                gone = parts.pop(request[1], None)
                if gone is not None:
                    gone.close()
                    stepped = [(k, p) for k, p in stepped if p is not gone]
            spent = (time.process_time() - began + owed, time.perf_counter() - clock)
            owed = 0.0
            reply: tuple[Any, ...] = ("ok", *spent, *flags)
        except Exception:
            reply = ("error", traceback.format_exc())
        pickle.dump(reply, sink, protocol=pickle.HIGHEST_PROTOCOL)
        sink.flush()
        idle_since = time.perf_counter()
        if kind == "stop":
            break
    for part in parts.values():
        part.close()


def _watch(parent: int, every: float = 1.0) -> None:
    """End this process when ``parent`` is gone (POSIX: we were handed to another parent)."""
    while os.getppid() == parent:
        time.sleep(every)
    os._exit(0)


def main(parent_package: str, parent: int = 0) -> None:
    sink = sys.stdout.buffer
    sys.stdout = sys.stderr  # only answers on the pipe
    if parent and os.name != "nt":  # Windows keeps the old ppid: the pipe's end is the sign
        threading.Thread(target=_watch, args=(parent,), daemon=True).start()
    serve(sys.stdin.buffer, sink, parent_package)
