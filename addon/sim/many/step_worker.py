"""The helper process of ``parallel.py``: steps partitions' substeps on memory both map.

Started as ``python -c BOOT`` with the directory holding the sim package on ``sys.path`` and
that package imported as ``sim`` (numpy + stdlib only, no bpy). Requests come as pickles on
stdin, answers go as pickles on stdout (anything printed goes to stderr). The parent's
objects name their classes by the parent's package (``bl_ext.<repo>.xof.addon.sim.*``,
``addon.sim.*``); they are loaded from this process's ``sim``. Classes from elsewhere (a
collider kind of a test or another add-on) are imported as usual, the parent's module search
path appended to this one's (after it: nothing there shadows this process's own modules).
Stdin closing (the parent gone) ends the process; so does the parent's pid going away (a
watch thread, for when another process holds the pipe open).

Requests (the first item names it; each is answered ``("ok", cpu seconds, wall seconds)`` or
``("error", text)``):
- ``("build", key, solvers, path, n, search)``: partition ``key``: its members' solvers
  (merged here, as the parent merged them: a pickle would not keep the merge's buffers'
  views), the file mapping its ``(2, n, 4)`` float32 positions and velocities and the
  parent's module search path;
- ``("step", key, substeps, sub_dt, start, end, spec, updates, moving, dropped)``: one
  frame's substeps (``world.run_substeps``); ``spec`` the contact sets as
  ``(collider keys, movable, margin, friction)`` (None: as last frame), ``updates`` the
  mirrored colliders' changes ``(key, "object", copy)`` (a collider's ``helper_copy``) or
  ``(key, "update", change)`` (its ``update_since``, given to the copy's ``apply_update``),
  ``moving`` the keys told of each substep, ``dropped`` keys no longer used;
- ``("drop", key)``, ``("stop",)``.
"""

from __future__ import annotations

import mmap
import os
import pickle
import sys
import threading
import time
import traceback
from typing import Any, BinaryIO

import numpy as np

from ..xpbd.merge import ContactSet, MergedXpbd
from .world import run_substeps

PACKAGE = __name__.rsplit(".", 2)[0]  # the sim package: this module is <sim>.many.*


class _Loader(pickle.Unpickler):
    """Classes of the parent's sim package from this process's."""

    def __init__(self, file: BinaryIO, parent_package: str) -> None:
        super().__init__(file)
        self.parent = parent_package

    def find_class(self, module: str, name: str) -> Any:
        if module == self.parent or module.startswith(self.parent + "."):
            module = PACKAGE + module[len(self.parent) :]
        return super().find_class(module, name)


class _Part:
    """One partition: its solver, the shared state, its mirrored colliders."""

    def __init__(self, solver: Any, path: str, n: int) -> None:
        self.solver = solver
        if os.name == "nt":
            self.map = mmap.mmap(-1, 2 * n * 16, tagname=path)  # type: ignore[call-arg]
        else:
            with open(path, "r+b") as f:
                self.map = mmap.mmap(f.fileno(), 2 * n * 16)
        state = np.frombuffer(self.map, dtype=np.float32, count=2 * n * 4).reshape(2, n, 4)
        self.pos, self.vel = state[0], state[1]
        self.colliders: dict[int, Any] = {}
        self.spec: list[tuple[tuple[int, ...], np.ndarray, float, float]] = []

    def step(self, request: tuple[Any, ...]) -> None:
        substeps, sub_dt, start, end, spec, updates, moving, dropped = request
        for key, kind, payload in updates:
            if kind == "object":
                self.colliders[key] = payload
            else:
                self.colliders[key].apply_update(payload)
        for key in dropped:
            self.colliders.pop(key, None)
        if spec is not None:
            self.spec = spec
        sets = [
            ContactSet(tuple(self.colliders[k] for k in keys), movable, margin, friction)
            for keys, movable, margin, friction in self.spec
        ]
        for contact in sets:
            contact.begin_frame()
        self.solver.contact_sets = sets
        movers = tuple(self.colliders[k] for k in moving)
        run_substeps(self.solver, self.pos, self.vel, substeps, sub_dt, start, end, movers)

    def close(self) -> None:
        self.pos = self.vel = np.zeros((0, 4), dtype=np.float32)
        self.map.close()


def serve(source: BinaryIO, sink: BinaryIO, parent_package: str) -> None:
    """Answer requests until ``("stop",)`` or the end of ``source``."""
    parts: dict[int, _Part] = {}
    while True:
        try:
            request = _Loader(source, parent_package).load()
        except EOFError:
            break
        kind = request[0]
        began, clock = time.process_time(), time.perf_counter()
        try:
            if kind == "build":
                key, members, path, n, search = request[1:]
                sys.path.extend(p for p in search if p not in sys.path)
                parts[key] = _Part(MergedXpbd(members), path, n)  # its work buffers anew
            elif kind == "step":
                parts[request[1]].step(request[2:])
            elif kind == "drop":
                part = parts.pop(request[1], None)
                if part is not None:
                    part.close()
            spent = (time.process_time() - began, time.perf_counter() - clock)
            reply: tuple[Any, ...] = ("ok", *spent)
        except Exception:
            reply = ("error", traceback.format_exc())
        pickle.dump(reply, sink, protocol=pickle.HIGHEST_PROTOCOL)
        sink.flush()
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
