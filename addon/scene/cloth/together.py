"""All of a scene's cloth objects brought to the frame together: one solver pass a frame.

Each object goes through the playback core's decisions (reset, cached frame, resume point:
``runtime.prepare_object``). Those that must simulate exactly one frame forward -- playback
-- are stepped in one ``sim.World`` (their XPBD solvers merged, each object's result the
same as alone); catching up several frames, and a lone object, step by themselves. Both go
through one frame loop (``_step_frame``): read each object's inputs, step (alone or in the
World), take each result back into object space, cache it and show it. The World is kept
while the same simulators step together.

The colliders of a collection are read once a frame for every object stepping one frame
with them (``_SharedSurfaces``), and kept from frame to frame, so each surface moves from
its pose at the previous frame as it does for an object alone, and the World resolves all
of its objects against one collider in one call (not once an object). Many objects are
split between this process and helper processes on the other cores (``sim.parallel``;
the scene's ``xof_cloth_helpers`` turns them off); the helpers stop at a file load and
when the extension is disabled.
"""

from __future__ import annotations

import contextlib
import traceback
from collections.abc import Callable, Generator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ...sim import Collider, ObjectFrame, StepResult, World, shutdown_helpers
from . import runtime as cloth_runtime
from .cache import CachedFrame
from .colliders import SurfaceColliders
from .object_solver import FrameInputs, PointFields, physics, transform_each

if TYPE_CHECKING:
    import bpy

OnError = Callable[["bpy.types.Object", Exception], None]
# steps one frame of the objects given their inputs: (object indices, results) as ready
Stepper = Callable[[list[ObjectFrame]], Generator[tuple[list[int], list[StepResult]], None, None]]

_FIELDS = PointFields()  # the per-point matrices of the batches' last frames


def update_object(
    obj: bpy.types.Object,
    scene: bpy.types.Scene,
    depsgraph: bpy.types.Depsgraph | None,
    frame: int | None = None,
) -> cloth_runtime.StepReport:
    """Bring ``obj`` alone to ``frame`` (default: the scene's): reset, show cached, or
    simulate with its own collider surfaces."""
    todo = cloth_runtime.prepare_object(obj, scene, depsgraph, frame)
    if isinstance(todo, cloth_runtime.StepReport):
        return todo
    return _alone(todo, depsgraph)


def update_objects(
    objects: Sequence[bpy.types.Object],
    scene: bpy.types.Scene,
    depsgraph: bpy.types.Depsgraph | None,
    on_error: OnError | None = None,
) -> None:
    """Bring every object of ``objects`` to the scene's frame (see the module docstring).
    ``on_error(obj, exc)`` hears an object that failed; the others go on."""
    helpers = bool(getattr(scene, "xof_cloth_helpers", True))
    together: list[cloth_runtime.Pending] = []
    frame = int(scene.frame_current)
    surfaces = _SURFACES.frame_begins(depsgraph, frame)
    render = cloth_runtime.is_render(depsgraph)
    for obj in objects:
        try:
            todo = cloth_runtime.prepare_object(obj, scene, depsgraph, frame, render)
            if isinstance(todo, cloth_runtime.StepReport):
                if todo.action == "reset" and _steps_one_by_one(obj) is False:
                    surfaces.get(obj, todo.frame)  # the next frame's surfaces move from here
                continue
            if len(todo.frames) == 1 and todo.rt.simulator.merges:
                together.append(todo)
                continue
            _alone(todo, depsgraph)
            if _steps_one_by_one(obj) is False:
                surfaces.get(obj, todo.frames[-1])  # caught up: the next frame moves from here
        except Exception as exc:  # a broken object must not stop the others
            _failed(obj, exc, on_error)
    if len(together) == 1:
        todo = together[0]
        try:
            _alone(todo, depsgraph, surfaces.get(todo.obj, todo.frames[0]))
        except Exception as exc:
            _failed(todo.obj, exc, on_error)
    elif together:
        _step_together(together, depsgraph, surfaces, on_error, helpers)
    surfaces.frame_ends()


def _steps_one_by_one(obj: bpy.types.Object) -> bool | None:
    """Whether the object's solver steps alone (classic), None when it has none."""
    rt = cloth_runtime.peek_runtime(obj)
    return None if rt is None else not rt.simulator.merges


def _alone(
    todo: cloth_runtime.Pending,
    depsgraph: bpy.types.Depsgraph | None,
    colliders: Sequence[Collider] | None = None,
) -> cloth_runtime.StepReport:
    """Step ``todo`` by itself: with ``colliders`` (posed for its one frame) or, catching up
    several frames, with its own surfaces; the last frame is shown."""
    rt = todo.rt

    def by_itself(frames: list[ObjectFrame]) -> Generator[tuple[list[int], list[StepResult]]]:
        yield [0], [rt.step(frames[0])]

    entries: list[CachedFrame | None] = []
    for k in range(len(todo.frames)):
        entries = _step_frame([todo], k, depsgraph, [colliders], by_itself, None)
    if colliders is not None:
        rt.surfaces.reset()  # its own are no longer its last frame's: start still
    entry = entries[0]
    assert entry is not None
    return cloth_runtime.finish_object(todo, entry)


def _step_frame(
    todos: list[cloth_runtime.Pending],
    k: int,
    depsgraph: bpy.types.Depsgraph | None,
    colliders: Sequence[Sequence[Collider] | None],
    stepper: Stepper,
    on_error: OnError | None,
    show: bool = False,
) -> list[CachedFrame | None]:
    """The one frame loop: frame ``k`` of each of ``todos`` (its ``frames[k]``) read off the
    scene (``colliders``: each one's, posed for the frame, or None for its own surfaces),
    stepped by ``stepper`` (alone, or in the World), taken back into object space, cached
    and, when ``show``, shown as its results come. Each object's cached frame (None: it
    failed, ``on_error`` told; without ``on_error`` the failure is raised)."""
    inputs = [t.rt.frame_inputs(t.obj, depsgraph, c) for t, c in zip(todos, colliders, strict=True)]
    entries: list[CachedFrame | None] = [None] * len(todos)
    steps = stepper([i.object_frame() for i in inputs])
    with contextlib.closing(steps):  # a failure leaves no helper's answer unread
        for members, results in steps:
            rts = [todos[i].rt for i in members]
            shown = _locals(rts, [inputs[i] for i in members], results)
            for i, result, local in zip(members, results, shown, strict=True):
                todo, frame_inputs = todos[i], inputs[i]
                try:
                    local = todo.rt.accept(todo.obj, frame_inputs, result, local)
                    entry = cloth_runtime.record_step(
                        todo, todo.frames[k], local, frame_inputs.matrix
                    )
                    entries[i] = entry
                    if show:
                        cloth_runtime.finish_object(todo, entry)
                except Exception as exc:
                    _failed(todo.obj, exc, on_error)
    return entries


def _failed(obj: bpy.types.Object, exc: Exception, on_error: OnError | None) -> None:
    if on_error is None:
        raise exc
    on_error(obj, exc)


def _step_together(
    todos: list[cloth_runtime.Pending],
    depsgraph: bpy.types.Depsgraph | None,
    surfaces: _SharedSurfaces,
    on_error: OnError | None,
    helpers: bool = True,
) -> None:
    rates = {t.rt.settings.fps for t in todos}
    if len(rates) != 1:  # objects on different rates cannot share a step
        for todo in todos:
            try:
                _alone(todo, depsgraph, surfaces.get(todo.obj, todo.frames[0]))
            except Exception as exc:
                _failed(todo.obj, exc, on_error)
        return
    colliders = [surfaces.get(t.obj, t.frames[0], t.props) for t in todos]
    for todo in todos:
        todo.rt.surfaces.reset()  # its own are no longer its last frame's: start still
    world = _world_for(todos, helpers)
    dt = 1.0 / rates.pop()

    def in_the_world(frames: list[ObjectFrame]) -> Generator[tuple[list[int], list[StepResult]]]:
        # each group as it is ready: the helpers step theirs while this shows the first ones
        return world.steps(frames, dt)

    _step_frame(todos, 0, depsgraph, colliders, in_the_world, on_error, show=True)


def _locals(
    rts: list[cloth_runtime.ClothRuntime], inputs: list[FrameInputs], results: list[StepResult]
) -> list[np.ndarray | None]:
    """The object-space results of a batch's members in one pass (``transform_each``), or
    None for each when one is odd (each member then takes its own, as alone)."""
    try:
        inverses = [rt.inverse(i.matrix) for rt, i in zip(rts, inputs, strict=True)]
        return list(transform_each(inverses, [r.positions for r in results], _FIELDS))
    except Exception:
        return [None] * len(results)


class _KeptWorld:
    """The World of the objects that stepped together last, kept while the same simulators
    (same solvers, same settings) step again."""

    def __init__(self) -> None:
        self.key: tuple[object, ...] | None = None
        self.world: World | None = None

    def close(self) -> None:
        if self.world is not None:
            self.world.close()  # its helper processes' parts
        self.key = self.world = None


_WORLD = _KeptWorld()


def _world_for(todos: list[cloth_runtime.Pending], helpers: bool = True) -> World:
    """The kept World when the same simulators step again (``helpers``: it may use helper
    processes; turned off, they stop)."""
    sims = [t.rt.simulator for t in todos]
    key = (helpers, *((id(s), id(s.solver), id(s.settings)) for s in sims))
    if _WORLD.key != key or _WORLD.world is None:
        _WORLD.close()
        if not helpers:
            shutdown_helpers()
        _WORLD.key, _WORLD.world = key, World(sims, None if helpers else 0)
    return _WORLD.world


def forget(stop_helpers: bool = False) -> None:
    """Drop the kept World and surfaces (their simulators are being rebuilt or freed);
    ``stop_helpers``: stop the helper processes too (a file load, the extension's end)."""
    _WORLD.close()
    _SURFACES.entries.clear()
    if stop_helpers:
        shutdown_helpers()


class _SharedSurfaces:
    """Per collider collection (and, for an object inside its own collider collection, per
    such object: its list leaves it out), one ``SurfaceColliders`` read at most once a
    frame and kept between frames: posed on every frame an object using it is reset or
    steps, so at the next frame its surfaces move from there; a collection not read at the
    frame before starts still (as an object's own surfaces do after a resume)."""

    def __init__(self) -> None:
        self.entries: dict[tuple[int, str], tuple[SurfaceColliders, int, list[Collider]]] = {}
        self.depsgraph: bpy.types.Depsgraph | None = None
        self.frame = 0
        self.members: dict[int, set[str]] = {}
        self.used: set[tuple[int, str]] = set()

    def frame_begins(self, depsgraph: bpy.types.Depsgraph | None, frame: int) -> _SharedSurfaces:
        self.depsgraph = depsgraph
        self.frame = frame
        self.members = {}
        self.used = set()
        return self

    def get(self, obj: bpy.types.Object, frame: int, props: Any = None) -> list[Collider]:
        """``obj``'s colliders posed at ``frame`` (each surface moving from its pose at
        ``frame - 1`` when it was read then; ``props``: its ``xof_physics``, when at hand)."""
        collection = (physics(obj) if props is None else props).collider_collection
        if collection is None:
            return []
        pointer = int(collection.as_pointer())
        names = self.members.get(pointer)
        if names is None:
            names = self.members[pointer] = {o.name for o in collection.all_objects}
        name = obj.name
        key = (pointer, name if name in names else "")
        self.used.add(key)
        known = self.entries.get(key)
        if known is not None and known[1] == frame:
            return known[2]
        source = known[0] if known is not None else SurfaceColliders()
        if known is None or known[1] != frame - 1:
            source.reset()
        found = source.colliders(collection, self.depsgraph, exclude=obj if key[1] else None)
        self.entries[key] = (source, int(frame), found)
        return found

    def frame_ends(self) -> None:
        """Drop the entries this frame did not use and that were not read at this frame
        (at the next frame they would start still anyway) and the frame's references. An
        entry read at this frame stays: a second call at the same frame (a render, a redraw)
        that simulates nothing must not make the next frame's surfaces start still."""
        for key in [
            k for k, e in self.entries.items() if k not in self.used and e[1] != self.frame
        ]:
            del self.entries[key]
        self.depsgraph = None
        self.members = {}


_SURFACES = _SharedSurfaces()


def print_failure(obj: bpy.types.Object, exc: Exception) -> None:
    """The handler's report of a failed object: the panel's warning line and the console."""
    physics(obj).last_warning = f"{type(exc).__name__}: {exc}"
    print(f"xof: simulation of {obj.name} failed:")
    traceback.print_exception(exc)
