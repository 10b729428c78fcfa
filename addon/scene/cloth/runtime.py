"""Live cloth / soft-body playback in Blender: the adapter around the bpy-free core.

``playback.Playback`` (one per object) owns the frame cache and decides, per frame, whether to
reset, show a cached frame, resume and simulate, or wait; this module carries that out. Per
frame it reads the solver's inputs off the scene (``gather_inputs``: the object's matrix, where
the pins are, the soft body's goal, the colliders), steps the object's solver, and shows the
result through the ``cloth_override`` Geometry Nodes modifier (the solver side, and
``gather_inputs``, are in ``object_solver.py``). The mesh itself is the rest shape: playback
never writes it, so an edit in Edit Mode or Apply Scale stays, and a .blend opened without xof
shows the mesh as the user made it. An edited rest shape makes every cached frame outdated
(checked against the shape the solver was built from, each frame and on depsgraph updates).

Everything derived (model, solver) lives in module memory keyed by the object's session id and
is rebuilt on demand, so a reopened .blend works: the cache is serialised into an ID property
when the file is saved, with a checksum of the rest shape it was simulated from.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import override as cloth_override
from .cache import CachedFrame, FrameCache
from .data import mesh_positions, restore_legacy_rest
from .object_solver import ClothRuntime, gather_inputs, inputs_key, is_render
from .playback import BAKED, Playback

CACHE_PROPERTY = "xof_cloth_cache"  # ID property on the object: FrameCache.to_bytes()
REST_PROPERTY = "xof_cloth_rest_crc"  # ID property: checksum of the rest the cache is of


def rest_checksum(rest: np.ndarray) -> int:
    """A checksum of an object-space rest shape ``(N, 3)`` float32 (as a positive int)."""
    return zlib.crc32(np.ascontiguousarray(rest, dtype=np.float32).tobytes()) & 0x7FFFFFFF


@dataclass
class StepReport:
    """What one handler call did, for tests and the panel."""

    action: str  # 'reset' | 'cached' | 'stepped' | 'idle' | 'baked' | 'skipped'
    frame: int
    steps: int = 0


# -- the registries: the cores (cache owners) and the solvers -----------------------------------

_PLAYBACKS: dict[int, Playback] = {}
_RUNTIMES: dict[int, ClothRuntime] = {}


def _key(obj: Any) -> int:
    return int(obj.original.session_uid)


def load_cache(obj: Any) -> FrameCache | None:
    """The cache saved in the object's ID property, or None (absent or unreadable)."""
    blob = obj.get(CACHE_PROPERTY)
    if not blob:
        return None
    try:
        cache = FrameCache.from_bytes(bytes(blob))
    except ValueError as exc:
        print(f"xof: {obj.name}: saved cloth cache ignored ({exc})")
        return None
    if cache.dropped:
        note = f"saved cache frames {_frame_list(cache.dropped)} held NaN or inf: dropped"
        print(f"xof: {obj.name}: {note}")
        obj.xof_physics.last_warning = note
    return cache


def _frame_list(frames: list[int]) -> str:
    """``1, 2, 5`` (the first few, then how many more)."""
    shown = ", ".join(str(f) for f in frames[:5])
    return shown if len(frames) <= 5 else f"{shown} and {len(frames) - 5} more"


def playback_for(obj: Any, key: int | None = None) -> Playback:
    """The object's playback core: made from the saved cache and state on first use
    (``key``: the object's ``_key``, when known)."""
    key = _key(obj) if key is None else key
    pb = _PLAYBACKS.get(key)
    if pb is None:
        n = len(obj.data.vertices)
        cache = load_cache(obj)
        saved = obj.get(REST_PROPERTY)
        edited = saved is not None and int(saved) != rest_checksum(mesh_positions(obj.data))
        if cache is not None and cache.vertex_count == n and edited:
            cache = None  # the mesh was edited after the save (xof off, another tool)
        state = obj.xof_physics.cache_state
        pb = Playback(n, state, cache)
        if cache is None and state == "VALID" and CACHE_PROPERTY in obj:
            pb.rest_changed(n)
        _PLAYBACKS[key] = pb
        publish(obj, pb)
    return pb


def publish(obj: Any, pb: Playback, props: Any = None) -> None:
    """Show the core's cache state on the object (the panel and the saved file read it;
    ``props``: its ``xof_physics``, when at hand)."""
    props = obj.xof_physics if props is None else props
    if props.cache_state != pb.state:
        props.cache_state = pb.state


def runtime_for(obj: Any, scene: Any) -> ClothRuntime:
    """The object's solver, built, or rebuilt after a setting change or an edit of the mesh
    (which outdates every cached frame)."""
    return _runtime_for(obj, scene, _key(obj))[0]


def _runtime_for(
    obj: Any, scene: Any, key: int, props: Any = None, editing: bool | None = None
) -> tuple[ClothRuntime, Playback]:
    """``runtime_for`` and the object's playback core (``key``: its ``_key``; ``props``:
    its ``xof_physics``; ``editing``: whether it is in Edit Mode, when known)."""
    rt = _RUNTIMES.get(key)
    pb = playback_for(obj, key)
    props = obj.xof_physics if props is None else props
    mesh = obj.data
    if restore_legacy_rest(mesh):
        rt = None
    if rt is not None and rt.revision != props.settings_revision:
        pb.solver_lost()
        if rt.inputs_key == inputs_key(props) and rt.vertex_count == len(mesh.vertices):
            rt.update_settings(obj, scene)  # only solver settings changed: keep the build
        else:
            rt = None
    if rt is not None and _rest_changed(obj, key, rt, editing):
        rt = None
    if rt is None:
        if pb.vertex_count != len(mesh.vertices):
            pb.rest_changed(len(mesh.vertices))
            publish(obj, pb)
        rt = ClothRuntime(obj, scene, pb)
        _RUNTIMES[key] = rt
    return rt, pb


def check_rest(obj: Any) -> bool:
    """Whether the mesh (the rest shape) changed since the solver was built from it; if so,
    every cached frame is outdated, none is shown, and the solver is dropped."""
    key = _key(obj)
    rt = _RUNTIMES.get(key)
    return rt is not None and _rest_changed(obj, key, rt)


def _rest_changed(obj: Any, key: int, rt: ClothRuntime, editing: bool | None = None) -> bool:
    """``check_rest`` of the object's solver ``rt`` (``key``: the object's ``_key``;
    ``editing``: whether it is in Edit Mode, when known)."""
    if (obj.mode == "EDIT" if editing is None else editing) or rt.same_rest(obj.data):
        return False
    del _RUNTIMES[key]
    pb = playback_for(obj, key)
    pb.rest_changed(len(obj.data.vertices))
    cloth_override.clear_shown(obj.data)
    publish(obj, pb)
    return True


def peek_runtime(obj: Any) -> ClothRuntime | None:
    return _RUNTIMES.get(_key(obj))


def peek_playback(obj: Any) -> Playback | None:
    return _PLAYBACKS.get(_key(obj))


def forget(obj: Any) -> None:
    """Drop the object's derived state and its in-memory cache (the saved one stays)."""
    _RUNTIMES.pop(_key(obj), None)
    _PLAYBACKS.pop(_key(obj), None)


def forget_all() -> None:
    _RUNTIMES.clear()
    _PLAYBACKS.clear()


def tracked() -> int:
    """How many objects have state here (more than are simulated means some were deleted)."""
    return len(_RUNTIMES.keys() | _PLAYBACKS.keys())


def prune(alive: set[int]) -> None:
    """Drop the state of objects whose session ids are not in ``alive`` (deleted objects:
    their solver and in-memory cache would otherwise stay for the whole session)."""
    for registry in (_RUNTIMES, _PLAYBACKS):
        for key in [k for k in registry if k not in alive]:
            del registry[key]


def mark_outdated(obj: Any, frame: int) -> None:
    """A setting changed at ``frame``: later frames no longer follow; the solver is rebuilt.
    Right after opening a file the saved cache is loaded first, so it is outdated too."""
    pb = playback_for(obj)
    if pb.state == BAKED:
        return
    pb.outdate(frame)
    publish(obj, pb)


def free_cache(obj: Any) -> None:
    """Forget every cached frame, in memory and in the saved ID property."""
    pb = playback_for(obj)
    pb.free()
    for name in (CACHE_PROPERTY, REST_PROPERTY):
        if name in obj:
            del obj[name]
    publish(obj, pb)


def set_baked(obj: Any, baked: bool) -> None:
    """A bake replaced the live simulation, or was freed (the live cache takes over)."""
    pb = playback_for(obj)
    if baked:
        pb.baked()
    else:
        pb.unbaked()
    publish(obj, pb)


def persist(obj: Any) -> None:
    """Write the object's cache into its ID property (called before saving)."""
    pb = peek_playback(obj)
    if pb is None:
        return
    if len(pb.cache) and len(obj.data.vertices):
        if CACHE_PROPERTY in obj:  # bytes assigned over bytes read from a file come out empty
            del obj[CACHE_PROPERTY]
        obj[CACHE_PROPERTY] = pb.cache.to_bytes()
        obj[REST_PROPERTY] = rest_checksum(mesh_positions(obj.data))
    else:
        for name in (CACHE_PROPERTY, REST_PROPERTY):
            if name in obj:
                del obj[name]


def restore_rest(obj: Any) -> None:
    """Show the mesh as it is, without any simulated frame (Reset, disabling, baking)."""
    cloth_override.remove(obj)
    restore_legacy_rest(obj.data)


def show(obj: Any, rt: ClothRuntime, entry: CachedFrame, ready: bool = False) -> None:
    """Show a frame through the override modifier (the mesh stays the rest shape;
    ``ready``: the stack was found to be ours alone, current, this frame)."""
    if not ready:
        cloth_override.ensure_modifier(obj, rt.render, rt.deformed)
    cloth_override.write(obj.data, entry.positions, rt.free, write_free=not rt.free_shown)
    rt.free_shown = True


def show_current(obj: Any, scene: Any) -> None:
    """Show the scene's frame again if it is cached (after a save took the frame away)."""
    pb = peek_playback(obj)
    rt = peek_runtime(obj)
    if pb is None or rt is None or pb.state == BAKED:
        return
    entry = pb.cache.get(min(int(scene.frame_current), int(obj.xof_physics.frame_end)))
    if entry is None and scene.frame_current <= obj.xof_physics.frame_start:
        entry = pb.cache.get(int(obj.xof_physics.frame_start))
    if entry is not None:
        rt.free_shown = False
        show(obj, rt, entry)


# -- the per-frame entry point ------------------------------------------------------------------


def is_simulated(obj: Any) -> bool:
    props = getattr(obj, "xof_physics", None)
    return obj.type == "MESH" and props is not None and bool(props.enabled)


@dataclass
class Pending:
    """An object whose solver is at the frame before ``frames`` and must simulate them."""

    obj: Any
    rt: ClothRuntime
    pb: Playback
    frames: list[int]
    ready: bool = False  # the stack is our modifier alone, current (``show``)
    props: Any = None  # the object's ``xof_physics``


def update_object(obj: Any, scene: Any, depsgraph: Any, frame: int | None = None) -> StepReport:
    """Bring ``obj`` to ``frame`` (default: the scene's): reset, show cached, or simulate."""
    todo = prepare_object(obj, scene, depsgraph, frame)
    if isinstance(todo, StepReport):
        return todo
    entry = None
    for g in todo.frames:
        inputs = gather_inputs(obj, todo.rt, depsgraph)
        local = todo.rt.advance(obj, inputs)
        entry = record_step(todo, g, local, inputs.matrix)
    assert entry is not None
    return finish_object(todo, entry)


def record_step(todo: Pending, frame: int, local: np.ndarray, matrix: np.ndarray) -> CachedFrame:
    """Cache one simulated frame of ``todo`` (object-space ``local``, the world ``matrix``);
    the cache copies the solver's velocities itself."""
    return todo.pb.record(frame, local, todo.rt.simulator.vel[:, :3], matrix)


def finish_object(todo: Pending, entry: CachedFrame) -> StepReport:
    """Show the last simulated frame of ``todo`` and publish its cache state."""
    show(todo.obj, todo.rt, entry, todo.ready)
    publish(todo.obj, todo.pb, todo.props)
    return StepReport("stepped", todo.frames[-1], len(todo.frames))


def prepare_object(
    obj: Any,
    scene: Any,
    depsgraph: Any,
    frame: int | None = None,
    render: bool | None = None,
) -> StepReport | Pending:
    """All of bringing ``obj`` to ``frame`` but the simulation: a reset, a cached frame or
    nothing to do (a report), or the frames left to simulate (the solver at their origin).
    ``render``: whether ``depsgraph`` is a render's, when known."""
    f = int(scene.frame_current if frame is None else frame)
    props = obj.xof_physics
    if props.cache_state == "BAKED":
        return StepReport("baked", f)
    if obj.mode == "EDIT":
        return StepReport("skipped", f)
    if not len(obj.data.vertices):
        note = f"{obj.name} has no vertices: nothing to simulate"
        if props.last_warning != note:
            props.last_warning = note
        return StepReport("skipped", f)
    rt, pb = _runtime_for(obj, scene, _key(obj), props, editing=False)
    rt.render = is_render(depsgraph) if render is None else render
    rt.deformed, ready = cloth_override.stack_state(obj, rt.render)
    if rt.deformed:  # a deformer just appeared: this frame's shape read with the full group
        ready = not cloth_override.ensure_stored(obj, rt.render, depsgraph) and ready
    plan = pb.plan(f, int(props.frame_start), int(props.frame_end))
    report = StepReport(plan.action, plan.frame)
    if plan.action == "reset":
        pb.begin_reset(plan.frame)
        local, matrix = rt.start_state(obj, depsgraph)
        _, vel = rt.simulator.state()
        show(obj, rt, pb.record(plan.frame, local, vel, matrix, reset=True), ready)
        note = rt.build_notes[-1] if rt.build_notes else ""
        if props.last_warning != note:
            props.last_warning = note
    elif plan.action == "cached":
        entry = pb.cache.get(plan.frame)
        assert entry is not None
        show(obj, rt, entry, ready)
    elif plan.action == "step":
        if plan.load_origin:
            origin = pb.resume(plan.origin)  # type: ignore[arg-type]
            rt.resume(origin.world_positions(), origin.velocities)
        return Pending(obj, rt, pb, list(plan.frames), ready, props)
    publish(obj, pb, props)
    return report
