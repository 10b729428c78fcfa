"""Live cloth / soft-body playback in Blender: the adapter around the bpy-free core.

``playback.Playback`` (one per object) owns the frame cache and decides, per frame, whether to
reset, show a cached frame, resume and simulate, or wait; this module carries that out. Per
frame it reads the solver's inputs off the scene (``gather_inputs``: the object's matrix, where
the pins are, the soft body's goal, the colliders), steps the object's solver, and shows the
result through the ``cloth_override`` Geometry Nodes modifier. The mesh itself is the rest
shape: playback never writes it, so an edit in Edit Mode or Apply Scale stays, and a .blend
opened without xof shows the mesh as the user made it. An edited rest shape makes every cached
frame outdated (checked each frame against the shape the solver was built from).

Everything derived (model, solver) lives in module memory keyed by the object's session id and
is rebuilt on demand, so a reopened .blend works: the cache is serialised into an ID property
when the file is saved, with a checksum of the rest shape it was simulated from.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...sim.affine import affine_inverse, transform_points
from ...sim.colliders import Collider
from ...sim.model import ClothModel
from ...sim.settings import SimSettings
from ...sim.simulator import Simulator
from . import override as cloth_override
from .cache import CachedFrame, FrameCache
from .colliders import colliders_from_collection
from .data import mesh_positions, read_cloth_inputs, restore_legacy_rest
from .playback import BAKED, Playback

CACHE_PROPERTY = "xof_cloth_cache"  # ID property on the object: FrameCache.to_bytes()
REST_PROPERTY = "xof_cloth_rest_crc"  # ID property: checksum of the rest the cache is of


def settings_from_props(props: Any, fps: float) -> SimSettings:
    """The solver settings an object's ``xof_physics`` properties describe."""
    return SimSettings(
        kind=props.sim_type,
        solver=props.solver,
        stiffness=props.stiffness,
        shear_stiffness=props.shear_stiffness,
        bend_stiffness=props.bend_stiffness,
        spring_damping=props.spring_damping,
        damping=props.damping,
        gravity=np.array(props.gravity, dtype=np.float64),
        wind=np.array(props.wind, dtype=np.float64),
        drag=props.drag,
        substeps=props.substeps,
        shape_stiffness=props.shape_stiffness,
        friction=props.friction,
        collision_margin=props.collision_margin,
        fps=fps,
        tethers=props.sim_type == "CLOTH",
    ).validated()[0]


def scene_fps(scene: Any) -> float:
    return float(scene.render.fps) / float(scene.render.fps_base or 1.0)


def _is_render(depsgraph: Any) -> bool:
    return getattr(depsgraph, "mode", "VIEWPORT") == "RENDER"


def rest_checksum(rest: np.ndarray) -> int:
    """A checksum of an object-space rest shape ``(N, 3)`` float32 (as a positive int)."""
    return zlib.crc32(np.ascontiguousarray(rest, dtype=np.float32).tobytes()) & 0x7FFFFFFF


@dataclass
class FrameInputs:
    """What the solver needs from the scene for one frame (world space, metres).

    ``matrix``: the object's (4, 4) world matrix now; ``relative``: ``matrix`` over the matrix
    the model was built at (the solver's object matrix); ``pin_targets`` ``(N, 3)``: where
    pinned points are now (only pinned rows are meaningful); ``shape_targets`` ``(N, 3)``: a
    soft body's goal on a deformed mesh, or None (the rest shape through ``relative``);
    ``colliders``: the solver colliders of the object's collider collection.
    """

    matrix: np.ndarray
    relative: np.ndarray
    pin_targets: np.ndarray
    shape_targets: np.ndarray | None
    colliders: Sequence[Collider]


@dataclass
class StepReport:
    """What one handler call did, for tests and the panel."""

    action: str  # 'reset' | 'cached' | 'stepped' | 'idle' | 'baked' | 'skipped'
    frame: int
    steps: int = 0


class ClothRuntime:
    """Derived state of one simulated object: its model and solver, built from the rest shape."""

    def __init__(self, obj: Any, scene: Any, playback: Playback) -> None:
        props = obj.xof_physics
        self.playback = playback
        self.revision = int(props.settings_revision)
        inputs = read_cloth_inputs(
            obj,
            springs_source=props.springs_source,
            use_shear=props.use_shear,
            use_bend=props.use_bend,
            mass_group=props.mass_group,
        )
        self.rest_local = inputs.rest.astype(np.float32)
        self.build_matrix = np.array(obj.matrix_world, dtype=np.float64)
        self.model = ClothModel(
            transform_points(self.build_matrix, self.rest_local),
            inputs.masses,
            inputs.springs,
            inputs.kinds,
            inputs.stiffness_scale,
            inputs.damping_scale,
        )
        self.pinned = np.asarray(self.model.pinned, dtype=bool)
        self.pinned_ids = np.flatnonzero(self.pinned)
        self.free = ~self.pinned
        self._targets = np.asarray(self.model.rest_positions, dtype=np.float64).copy()
        self.settings = settings_from_props(props, scene_fps(scene))
        self.simulator = Simulator(self.model, self.settings)
        self.warnings: list[str] = list(inputs.warnings) + list(self.model.warnings)
        if self.vertex_count and self.pinned.all():
            self.warnings.append(
                f"every point has mass 0 in '{props.mass_group}' (pinned): nothing moves"
            )
        self.build_notes = list(self.warnings)  # shown in the panel after every reset
        self.deformed = False  # the modifiers move points: pins and goals from the evaluation
        self.render = False  # this frame is for a render (modifier visibility)
        self.free_shown = False  # the override's free-point mask is on the mesh

    @property
    def vertex_count(self) -> int:
        return int(self.rest_local.shape[0])

    @property
    def cache(self) -> FrameCache:
        """The object's frame cache (owned by its ``Playback``)."""
        return self.playback.cache

    def evaluated_local(self, obj: Any, depsgraph: Any) -> np.ndarray | None:
        """Object-space points as the modifiers deform the rest shape, or None (nothing
        deforms it, or a modifier changes the points out of recognition). Our override stores
        them before moving the free points (``cloth_override.DEFORMED_ATTRIBUTE``), with each
        point's index, so they are found again behind a Subdivision or Solidify that adds
        points after the originals; before the override ran, the positions are read."""
        if not self.deformed or depsgraph is None:
            return None
        evaluated = obj.evaluated_get(depsgraph).data
        n = self.vertex_count
        count = len(evaluated.vertices)
        attrs = evaluated.attributes
        stored = attrs.get(cloth_override.DEFORMED_ATTRIBUTE)
        if stored is None or stored.data_type != "FLOAT_VECTOR" or stored.domain != "POINT":
            stored = None
        if count != n and (count < n or stored is None or not _originals_first(attrs, n)):
            return None
        source = stored if stored is not None else attrs["position"]
        local = np.empty(count * 3, dtype=np.float32)
        source.data.foreach_get("vector", local)
        return local.reshape(-1, 3)[:n]

    def start_state(self, obj: Any, depsgraph: Any) -> tuple[np.ndarray, np.ndarray]:
        """Reset the solver at the start frame: the rest shape, or on a deformed mesh the
        shape its modifiers give it now. Returns the object-space shape and the matrix."""
        matrix = world_matrix(obj, depsgraph)
        deformed = self.evaluated_local(obj, depsgraph)
        if deformed is None:
            local = self.rest_local
            relative = matrix @ affine_inverse(self.build_matrix)
            start = transform_points(relative, self.model.rest_positions, np.float64)
        else:
            local = deformed
            start = transform_points(matrix, deformed, np.float64)
        self.simulator.reset(start)
        return local, matrix

    def advance(self, obj: Any, inputs: FrameInputs) -> np.ndarray:
        """Simulate one frame; the object-space result ``(N, 3)`` float32."""
        count = len(self.simulator.warnings)
        world = self.simulator.step(
            1.0 / self.settings.fps,
            pinned_targets=inputs.pin_targets,
            object_matrix=inputs.relative,
            colliders=inputs.colliders,
            shape_targets=inputs.shape_targets,
        )
        if len(self.simulator.warnings) > count:
            fresh = self.simulator.warnings[count:]
            self.warnings.extend(fresh)
            obj.xof_physics.last_warning = fresh[-1]
            print(f"xof: {obj.name}: " + "; ".join(fresh))
        return transform_points(affine_inverse(inputs.matrix), world)


def world_matrix(obj: Any, depsgraph: Any) -> np.ndarray:
    src = obj.evaluated_get(depsgraph) if depsgraph is not None else obj
    return np.array(src.matrix_world, dtype=np.float64)


def gather_inputs(obj: Any, rt: ClothRuntime, depsgraph: Any) -> FrameInputs:
    """Everything the solver reads from the scene for the frame being stepped."""
    matrix = world_matrix(obj, depsgraph)
    deformed = rt.evaluated_local(obj, depsgraph)
    local = rt.rest_local if deformed is None else deformed
    ids = rt.pinned_ids
    if ids.size:  # only pinned rows are read: only they are transformed
        rt._targets[ids] = transform_points(matrix, local[ids])
    goal = None
    if deformed is not None and rt.settings.kind == "SOFT":
        goal = transform_points(matrix, deformed, np.float64)
    colliders = colliders_from_collection(
        obj.xof_physics.collider_collection, depsgraph, exclude=obj
    )
    return FrameInputs(
        matrix=matrix,
        relative=matrix @ affine_inverse(rt.build_matrix),
        pin_targets=rt._targets,
        shape_targets=goal,
        colliders=colliders,
    )


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
        return FrameCache.from_bytes(bytes(blob))
    except ValueError as exc:
        print(f"xof: {obj.name}: saved cloth cache ignored ({exc})")
        return None


def playback_for(obj: Any) -> Playback:
    """The object's playback core: made from the saved cache and state on first use."""
    key = _key(obj)
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


def publish(obj: Any, pb: Playback) -> None:
    """Show the core's cache state on the object (the panel and the saved file read it)."""
    props = obj.xof_physics
    if props.cache_state != pb.state:
        props.cache_state = pb.state


def runtime_for(obj: Any, scene: Any) -> ClothRuntime:
    """The object's solver, built, or rebuilt after a setting change or an edit of the mesh
    (which outdates every cached frame)."""
    key = _key(obj)
    rt = _RUNTIMES.get(key)
    pb = playback_for(obj)
    props = obj.xof_physics
    if restore_legacy_rest(obj.data):
        rt = None
    if rt is not None and rt.revision != props.settings_revision:
        rt = None
        pb.solver_lost()
    if rt is not None and check_rest(obj):
        rt = None
    if rt is None:
        if pb.vertex_count != len(obj.data.vertices):
            pb.rest_changed(len(obj.data.vertices))
            publish(obj, pb)
        rt = ClothRuntime(obj, scene, pb)
        _RUNTIMES[key] = rt
    return rt


def check_rest(obj: Any) -> bool:
    """Whether the mesh (the rest shape) changed since the solver was built from it; if so,
    every cached frame is outdated, none is shown, and the solver is dropped."""
    rt = _RUNTIMES.get(_key(obj))
    if rt is None or obj.mode == "EDIT" or _same_rest(obj.data, rt.rest_local):
        return False
    del _RUNTIMES[_key(obj)]
    pb = playback_for(obj)
    pb.rest_changed(len(obj.data.vertices))
    cloth_override.clear_shown(obj.data)
    publish(obj, pb)
    return True


def _same_rest(mesh: Any, rest: np.ndarray) -> bool:
    if len(mesh.vertices) != rest.shape[0]:
        return False
    return bool(np.array_equal(mesh_positions(mesh), rest))


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


def show(obj: Any, rt: ClothRuntime, entry: CachedFrame) -> None:
    """Show a frame through the override modifier (the mesh stays the rest shape)."""
    cloth_override.ensure_modifier(obj, rt.render)
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


def update_object(obj: Any, scene: Any, depsgraph: Any, frame: int | None = None) -> StepReport:
    """Bring ``obj`` to ``frame`` (default: the scene's): reset, show cached, or simulate."""
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
    rt = runtime_for(obj, scene)
    pb = playback_for(obj)
    rt.render = _is_render(depsgraph)
    rt.deformed = cloth_override.needs_override(obj, rt.render)
    plan = pb.plan(f, int(props.frame_start), int(props.frame_end))
    report = StepReport(plan.action, plan.frame)
    if plan.action == "reset":
        pb.begin_reset(plan.frame)
        local, matrix = rt.start_state(obj, depsgraph)
        _, vel = rt.simulator.state()
        show(obj, rt, pb.record(plan.frame, local, vel, matrix, reset=True))
        note = rt.build_notes[-1] if rt.build_notes else ""
        if props.last_warning != note:
            props.last_warning = note
    elif plan.action == "cached":
        entry = pb.cache.get(plan.frame)
        assert entry is not None
        show(obj, rt, entry)
    elif plan.action == "step":
        if plan.load_origin:
            origin = pb.resume(plan.origin)  # type: ignore[arg-type]
            rt.simulator.set_state(origin.world_positions(), origin.velocities)
        entry = None
        for g in plan.frames:
            inputs = gather_inputs(obj, rt, depsgraph)
            local = rt.advance(obj, inputs)
            _, vel = rt.simulator.state()
            entry = pb.record(g, local, vel, inputs.matrix)
        assert entry is not None
        show(obj, rt, entry)
        report = StepReport("stepped", plan.frame, len(plan.frames))
    publish(obj, pb)
    return report


def _originals_first(attrs: Any, n: int) -> bool:
    """Whether the first ``n`` evaluated points are the mesh's own, in order."""
    index = attrs.get(cloth_override.INDEX_ATTRIBUTE)
    if index is None or index.data_type != "INT" or index.domain != "POINT":
        return False
    values = np.empty(len(index.data), dtype=np.int32)
    index.data.foreach_get("value", values)
    return bool(np.array_equal(values[:n], np.arange(n, dtype=np.int32)))
