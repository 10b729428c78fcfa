"""All of a scene's cloth objects brought to the frame together: one solver pass a frame.

Each object goes through the playback core's decisions (reset, cached frame, resume point:
``runtime.prepare_object``). Those that must simulate exactly one frame forward -- playback
-- are stepped in one ``sim.World`` (their XPBD solvers merged, each object's result the
same as alone); catching up several frames, and a lone object, go through the per-object
path. The World is kept while the same simulators step together.

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
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ...sim import ObjectFrame, World, shutdown_helpers
from . import runtime as cloth_runtime
from .colliders import SurfaceColliders
from .object_solver import FrameInputs, PointFields, gather_inputs, transform_each

_WORLD: dict[str, Any] = {"key": None, "world": None}
_FIELDS = PointFields()  # the per-point matrices of the batches' last frames


def update_objects(
    objects: Sequence[Any],
    scene: Any,
    depsgraph: Any,
    on_error: Callable[[Any, Exception], None] | None = None,
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


def _steps_one_by_one(obj: Any) -> bool | None:
    """Whether the object's solver steps alone (classic), None when it has none."""
    rt = cloth_runtime.peek_runtime(obj)
    return None if rt is None else not rt.simulator.merges


def _alone(todo: cloth_runtime.Pending, depsgraph: Any, colliders: list[Any] | None = None) -> None:
    """Step ``todo`` by itself: with ``colliders`` (posed for its one frame) or, catching up
    several frames, with its own surfaces."""
    entry = None
    for g in todo.frames:
        inputs = gather_inputs(todo.obj, todo.rt, depsgraph, colliders)
        local = todo.rt.advance(todo.obj, inputs)
        entry = cloth_runtime.record_step(todo, g, local, inputs.matrix)
    if colliders is not None:
        todo.rt.surfaces.reset()  # its own are no longer its last frame's: start still
    assert entry is not None
    cloth_runtime.finish_object(todo, entry)


def _failed(obj: Any, exc: Exception, on_error: Callable[[Any, Exception], None] | None) -> None:
    if on_error is None:
        raise exc
    on_error(obj, exc)


def _step_together(
    todos: list[cloth_runtime.Pending],
    depsgraph: Any,
    surfaces: _SharedSurfaces,
    on_error: Callable[[Any, Exception], None] | None,
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
    inputs: list[FrameInputs] = []
    counts: list[int] = []
    for todo in todos:
        colliders = surfaces.get(todo.obj, todo.frames[0], todo.props)
        inputs.append(gather_inputs(todo.obj, todo.rt, depsgraph, colliders))
        counts.append(len(todo.rt.simulator.warnings))
        todo.rt.surfaces.reset()  # its own are no longer its last frame's: start still
    frames = [
        ObjectFrame(i.pin_targets, i.relative, tuple(i.colliders), i.shape_targets) for i in inputs
    ]
    # each group as it is ready: the helpers step theirs while this shows the first ones
    steps = _world_for(todos, helpers).steps(frames, 1.0 / rates.pop())
    with contextlib.closing(steps):  # a failure leaves no helper's answer unread
        for members, results in steps:
            shown = _locals([todos[i].rt for i in members], [inputs[i] for i in members], results)
            for i, world, local in zip(members, results, shown, strict=True):
                todo, frame_inputs = todos[i], inputs[i]
                try:
                    local = todo.rt.accept(todo.obj, frame_inputs, world, counts[i], local)
                    entry = cloth_runtime.record_step(
                        todo, todo.frames[0], local, frame_inputs.matrix
                    )
                    cloth_runtime.finish_object(todo, entry)
                except Exception as exc:
                    _failed(todo.obj, exc, on_error)


def _locals(
    rts: list[Any], inputs: list[FrameInputs], results: list[Any]
) -> list[np.ndarray | None]:
    """The object-space results of a batch's members in one pass (``transform_each``), or
    None for each when one is odd (each member then takes its own, as alone)."""
    try:
        inverses = [rt.inverse(i.matrix) for rt, i in zip(rts, inputs, strict=True)]
        return list(transform_each(inverses, results, _FIELDS))
    except Exception:
        return [None] * len(results)


def _world_for(todos: list[cloth_runtime.Pending], helpers: bool = True) -> World:
    """The kept World when the same simulators (same solvers, same settings) step again
    (``helpers``: it may use helper processes; turned off, they stop)."""
    sims = [t.rt.simulator for t in todos]
    key = (helpers, *((id(s), id(s.solver), id(s.settings)) for s in sims))
    if _WORLD["key"] != key:
        if _WORLD["world"] is not None:
            _WORLD["world"].close()  # its helper processes' parts
        if not helpers:
            shutdown_helpers()
        _WORLD["key"], _WORLD["world"] = key, World(sims, None if helpers else 0)
    world: World = _WORLD["world"]
    return world


def forget(stop_helpers: bool = False) -> None:
    """Drop the kept World and surfaces (their simulators are being rebuilt or freed);
    ``stop_helpers``: stop the helper processes too (a file load, the extension's end)."""
    if _WORLD["world"] is not None:
        _WORLD["world"].close()
    _WORLD["key"] = _WORLD["world"] = None
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
        self.entries: dict[tuple[int, str], tuple[SurfaceColliders, int, list[Any]]] = {}
        self.depsgraph: Any = None
        self.frame = 0
        self.members: dict[int, set[str]] = {}
        self.used: set[tuple[int, str]] = set()

    def frame_begins(self, depsgraph: Any, frame: int) -> _SharedSurfaces:
        self.depsgraph = depsgraph
        self.frame = frame
        self.members = {}
        self.used = set()
        return self

    def get(self, obj: Any, frame: int, props: Any = None) -> list[Any]:
        """``obj``'s colliders posed at ``frame`` (each surface moving from its pose at
        ``frame - 1`` when it was read then; ``props``: its ``xof_physics``, when at hand)."""
        collection = (obj.xof_physics if props is None else props).collider_collection
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


def print_failure(obj: Any, exc: Exception) -> None:
    """The handler's report of a failed object: the panel's warning line and the console."""
    obj.xof_physics.last_warning = f"{type(exc).__name__}: {exc}"
    print(f"xof: simulation of {obj.name} failed:")
    traceback.print_exception(exc)
