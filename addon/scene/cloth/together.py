"""All of a scene's cloth objects brought to the frame together: one solver pass a frame.

Each object goes through the playback core's decisions (reset, cached frame, resume point:
``runtime.prepare_object``). Those that must simulate exactly one frame forward -- playback
-- are stepped in one ``sim.World`` (their XPBD solvers merged, each object's result the
same as alone); catching up several frames, and a lone object, go through the per-object
path. The World is kept while the same simulators step together, and colliders read from
one collection are shared by the objects that use it (one contact search for all of them).
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Sequence
from typing import Any

from ...sim.solver_xpbd import XpbdSolver
from ...sim.world import ObjectFrame, World
from . import runtime as cloth_runtime
from .colliders import colliders_from_collection
from .object_solver import FrameInputs, gather_inputs

_WORLD: dict[str, Any] = {"key": None, "world": None}


def update_objects(
    objects: Sequence[Any],
    scene: Any,
    depsgraph: Any,
    on_error: Callable[[Any, Exception], None] | None = None,
) -> None:
    """Bring every object of ``objects`` to the scene's frame (see the module docstring).
    ``on_error(obj, exc)`` hears an object that failed; the others go on."""
    together: list[cloth_runtime.Pending] = []
    for obj in objects:
        try:
            todo = cloth_runtime.prepare_object(obj, scene, depsgraph)
            if isinstance(todo, cloth_runtime.StepReport):
                continue
            if len(todo.frames) == 1 and isinstance(todo.rt.simulator.solver, XpbdSolver):
                together.append(todo)
                continue
            _alone(todo, depsgraph)
        except Exception as exc:  # a broken object must not stop the others
            _failed(obj, exc, on_error)
    if len(together) == 1:
        try:
            _alone(together[0], depsgraph)
        except Exception as exc:
            _failed(together[0].obj, exc, on_error)
    elif together:
        _step_together(together, depsgraph, on_error)


def _alone(todo: cloth_runtime.Pending, depsgraph: Any) -> None:
    entry = None
    for g in todo.frames:
        inputs = gather_inputs(todo.obj, todo.rt, depsgraph)
        local = todo.rt.advance(todo.obj, inputs)
        entry = cloth_runtime.record_step(todo, g, local, inputs.matrix)
    assert entry is not None
    cloth_runtime.finish_object(todo, entry)


def _failed(obj: Any, exc: Exception, on_error: Callable[[Any, Exception], None] | None) -> None:
    if on_error is None:
        raise exc
    on_error(obj, exc)


def _step_together(
    todos: list[cloth_runtime.Pending],
    depsgraph: Any,
    on_error: Callable[[Any, Exception], None] | None,
) -> None:
    rates = {t.rt.settings.fps for t in todos}
    if len(rates) != 1:  # objects on different rates cannot share a step
        for todo in todos:
            try:
                _alone(todo, depsgraph)
            except Exception as exc:
                _failed(todo.obj, exc, on_error)
        return
    shared = _SharedColliders(depsgraph)
    inputs: list[FrameInputs] = []
    counts: list[int] = []
    for todo in todos:
        inputs.append(gather_inputs(todo.obj, todo.rt, depsgraph, shared.get(todo.obj)))
        counts.append(len(todo.rt.simulator.warnings))
    frames = [
        ObjectFrame(i.pin_targets, i.relative, tuple(i.colliders), i.shape_targets) for i in inputs
    ]
    results = _world_for(todos).step(frames, 1.0 / rates.pop())
    for todo, frame_inputs, world, count in zip(todos, inputs, results, counts, strict=True):
        try:
            local = todo.rt.accept(todo.obj, frame_inputs, world, count)
            entry = cloth_runtime.record_step(todo, todo.frames[0], local, frame_inputs.matrix)
            cloth_runtime.finish_object(todo, entry)
        except Exception as exc:
            _failed(todo.obj, exc, on_error)


def _world_for(todos: list[cloth_runtime.Pending]) -> World:
    """The kept World when the same simulators (same solvers, same settings) step again."""
    sims = [t.rt.simulator for t in todos]
    key = tuple((id(s), id(s.solver), id(s.settings)) for s in sims)
    if _WORLD["key"] != key:
        _WORLD["key"], _WORLD["world"] = key, World(sims)
    world: World = _WORLD["world"]
    return world


def forget() -> None:
    """Drop the kept World (its simulators are being rebuilt or freed)."""
    _WORLD["key"] = _WORLD["world"] = None


class _SharedColliders:
    """Colliders read once per collection this frame; an object inside its own collider
    collection gets its own list without itself."""

    def __init__(self, depsgraph: Any) -> None:
        self.depsgraph = depsgraph
        self.lists: dict[tuple[int, str], list[Any]] = {}
        self.members: dict[int, set[str]] = {}

    def get(self, obj: Any) -> list[Any]:
        collection = obj.xof_physics.collider_collection
        if collection is None:
            return []
        pointer = int(collection.as_pointer())
        names = self.members.get(pointer)
        if names is None:
            names = self.members[pointer] = {o.name for o in collection.all_objects}
        key = (pointer, obj.name if obj.name in names else "")
        found = self.lists.get(key)
        if found is None:
            exclude = obj if key[1] else None
            found = self.lists[key] = colliders_from_collection(
                collection, self.depsgraph, exclude=exclude
            )
        return found


def print_failure(obj: Any, exc: Exception) -> None:
    """The handler's report of a failed object: the panel's warning line and the console."""
    obj.xof_physics.last_warning = f"{type(exc).__name__}: {exc}"
    print(f"xof: simulation of {obj.name} failed:")
    traceback.print_exception(exc)
