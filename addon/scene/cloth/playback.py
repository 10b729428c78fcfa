"""The bpy-free core of cloth playback: the frame cache and the reset / resume / catch-up rules.

One ``Playback`` per simulated object owns its ``FrameCache`` and its cache state, and is the
only place either changes. It behaves like Blender's point cache: the start frame (or any
frame before it) resets; a cached frame is shown as it is (scrubbing back, renders); a frame
after a cached one, within ``MAX_CATCH_UP`` frames, resumes from the latest such frame and
simulates the frames in between; farther away nothing is simulated (``idle``); a setting
change drops the frames after the current one and marks the cache outdated; a change of the
rest shape (an edit of the mesh) drops every frame.

``plan(frame, start, end)`` only decides; the Blender adapter (``runtime.py``) carries the
plan out (reads the frame's inputs, steps a solver, shows the result) and reports each
computed frame back with ``record``. Deciding apart from stepping lets several objects whose
plans step the same frames be solved together by one solver.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .cache import CachedFrame, FrameCache

MAX_CATCH_UP = 10  # frames simulated in one go when playback skips frames

EMPTY = "EMPTY"  # nothing simulated yet
VALID = "VALID"  # cached frames follow from the settings
OUTDATED = "OUTDATED"  # settings or the rest shape changed after frames were cached
BAKED = "BAKED"  # baked to shape keys or a .pc2: playback leaves the object alone
STATES = (EMPTY, VALID, OUTDATED, BAKED)


@dataclass(frozen=True)
class Plan:
    """What bringing an object to ``frame`` takes.

    ``action``: ``'reset'`` (simulate nothing; the state at ``frame``, the start frame, is
    the rest shape), ``'cached'`` (show the cached ``frame``), ``'step'`` (continue from
    ``origin``, loading its cached state first when ``load_origin``, and simulate
    ``frames``), ``'idle'`` (no frame to continue from within reach) or ``'baked'``.
    """

    action: str
    frame: int
    origin: int | None = None
    load_origin: bool = False

    @property
    def frames(self) -> range:
        """The frames a ``'step'`` plan simulates, in order (empty for the others)."""
        if self.action != "step" or self.origin is None:
            return range(0)
        return range(self.origin + 1, self.frame + 1)


class Playback:
    """Cache, cache state and solver position (``sim_frame``) of one simulated object.

    ``vertex_count``: points per cached frame. ``state``: one of ``STATES``. ``sim_frame``:
    the frame the solver's current state belongs to, or None when the solver has no state
    worth continuing from (new, rebuilt after a setting change).
    """

    def __init__(
        self, vertex_count: int, state: str = EMPTY, cache: FrameCache | None = None
    ) -> None:
        if cache is not None and cache.vertex_count != vertex_count:
            cache = None  # saved for another topology: useless
        self.cache = cache if cache is not None else FrameCache(vertex_count)
        self.state = state if state in STATES else EMPTY
        if self.state == VALID and not len(self.cache):
            self.state = EMPTY
        self.sim_frame: int | None = None

    @property
    def vertex_count(self) -> int:
        return self.cache.vertex_count

    # -- deciding ------------------------------------------------------------------------------

    def plan(self, frame: int, start: int, end: int) -> Plan:
        """What it takes to show ``frame`` of a simulation over ``start..end`` (no change)."""
        frame = int(frame)
        if self.state == BAKED:
            return Plan("baked", frame)
        if frame <= start:
            return Plan("reset", int(start))
        frame = min(frame, int(end))
        if frame in self.cache:
            return Plan("cached", frame)
        origin = self._resume_point(frame)
        if origin is None:
            return Plan("idle", frame)
        return Plan("step", frame, origin, load_origin=self.sim_frame != origin)

    def _resume_point(self, frame: int) -> int | None:
        """The latest frame within catch-up reach that the solver can continue from."""
        best = self.sim_frame
        if best is not None and not frame - MAX_CATCH_UP <= best < frame:
            best = None
        for g in range(frame - 1, frame - MAX_CATCH_UP - 1, -1):
            if g in self.cache:
                if best is None or g > best:
                    best = g
                break
        return best

    # -- the changes (the only code that changes the cache or its state) ------------------------

    def begin_reset(self, start: int) -> None:
        """A reset at ``start`` begins: an outdated cache, or one without the start frame, is
        dropped (a valid one is kept: returning to the start shows the same run again)."""
        if self.state != VALID or int(start) not in self.cache:
            self.cache.clear()
        self.sim_frame = None

    def record(
        self,
        frame: int,
        positions: np.ndarray,
        velocities: np.ndarray,
        matrix: np.ndarray,
        *,
        reset: bool = False,
    ) -> CachedFrame:
        """A frame was computed: cache it (object-space positions ``(N, 3)``, world-space
        velocities ``(N, 3)``, the object's (4, 4) world matrix); the solver is now there.
        A reset makes the cache valid; so does the first frame of an empty one."""
        entry = self.cache.store(frame, positions, velocities, matrix)
        self.sim_frame = int(frame)
        if reset or self.state == EMPTY:
            self.state = VALID
        return entry

    def resume(self, frame: int) -> CachedFrame:
        """The cached state the solver continues from (the solver is now at ``frame``)."""
        entry = self.cache.frames[int(frame)]
        self.sim_frame = int(frame)
        return entry

    def outdate(self, frame: int) -> None:
        """A setting changed at ``frame``: later frames no longer follow; the solver restarts."""
        self.cache.drop_after(int(frame))
        self.sim_frame = None
        if self.state == VALID:
            self.state = OUTDATED

    def rest_changed(self, vertex_count: int) -> None:
        """The mesh (the rest shape) was edited: no cached frame follows from it any more."""
        had_frames = len(self.cache) > 0
        self.cache = FrameCache(vertex_count)
        self.sim_frame = None
        if self.state != BAKED:
            self.state = OUTDATED if had_frames else EMPTY

    def solver_lost(self) -> None:
        """The solver was rebuilt: its state is no frame's."""
        self.sim_frame = None

    def free(self) -> None:
        """Forget every frame (Reset, Free Bake of an empty cache)."""
        self.cache.clear()
        self.sim_frame = None
        self.state = EMPTY

    def baked(self) -> None:
        self.state = BAKED

    def unbaked(self) -> None:
        """The bake was freed: the live cache takes over again."""
        self.state = VALID if len(self.cache) else EMPTY
