"""Live cloth / soft-body playback: one runtime per object, stepped by the frame handler.

Behaves like Blender's point cache: frames are cached as they are simulated; a cached frame
is shown as it is (scrubbing back, renders); the start frame resets; the first frame after a
cached one resumes from that frame's full state; a setting change marks the cache outdated
and later frames are simulated again. Everything derived (model, solver) lives in module
memory keyed by the object's session id and is rebuilt on demand, so a reopened .blend works:
the cache itself is serialised into an ID property when the file is saved.

The mesh shows the simulation: its ``position`` attribute gets object-space positions, with
the rest shape kept in the ``cloth_rest`` attribute. On a mesh with deforming modifiers
(armature, hooks) the rest shape stays in ``position`` and a Geometry Nodes modifier at the
end of the stack moves the free points to the simulated positions (``cloth_override``), so
they are not deformed twice; pinned points stay where the modifiers put them, and the solver
is told the same targets: pins follow skinned or animated meshes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ...sim.affine import affine_inverse, transform_points
from ...sim.model import ClothModel
from ...sim.settings import SimSettings
from ...sim.simulator import Simulator
from . import override as cloth_override
from .cache import CachedFrame, FrameCache
from .colliders import SurfaceColliders
from .data import read_cloth_inputs, rest_positions

CACHE_PROPERTY = "xof_cloth_cache"  # ID property on the object: FrameCache.to_bytes()
MAX_CATCH_UP = 10  # frames simulated in one go when playback skips frames


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
        self_collision=bool(props.self_collision) and props.sim_type == "CLOTH",
        self_distance=props.self_distance,
    ).validated()[0]


def mesh_triangles(mesh: Any) -> np.ndarray:
    """The mesh's triangles ``(T, 3)`` int64 (its faces split as Blender draws them)."""
    mesh.calc_loop_triangles()
    tris = np.empty(len(mesh.loop_triangles) * 3, dtype=np.int32)
    mesh.loop_triangles.foreach_get("vertices", tris)
    return tris.reshape(-1, 3).astype(np.int64)


def scene_fps(scene: Any) -> float:
    return float(scene.render.fps) / float(scene.render.fps_base or 1.0)


def write_positions(mesh: Any, local: np.ndarray) -> None:
    """Show object-space float32 positions on the mesh (the fast attribute path)."""
    buf = np.ascontiguousarray(local, dtype=np.float32).reshape(-1)
    mesh.attributes["position"].data.foreach_set("vector", buf)
    mesh.update()


def _is_render(depsgraph: Any) -> bool:
    return getattr(depsgraph, "mode", "VIEWPORT") == "RENDER"


def _uses_evaluated_pins(obj: Any, depsgraph: Any) -> bool:
    if depsgraph is None:
        return False
    if obj.data.shape_keys is not None:
        return True
    render = _is_render(depsgraph)
    return any((m.show_render if render else m.show_viewport) for m in obj.modifiers)


@dataclass
class StepReport:
    """What one handler call did, for tests and the panel."""

    action: str  # 'reset' | 'cached' | 'stepped' | 'idle' | 'baked' | 'skipped'
    frame: int
    steps: int = 0


class ClothRuntime:
    """Derived state of one simulated object: model, solver, rest shape and its cache."""

    def __init__(self, obj: Any, scene: Any, cache: FrameCache | None = None) -> None:
        props = obj.xof_physics
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
        self._targets = np.asarray(self.model.rest_positions, dtype=np.float64).copy()
        self.settings = settings_from_props(props, scene_fps(scene))
        triangles = mesh_triangles(obj.data) if self.settings.self_collision else None
        self.simulator = Simulator(self.model, self.settings, triangles=triangles)
        self.surfaces = SurfaceColliders()  # collider surfaces and their previous poses
        self.warnings: list[str] = list(inputs.warnings) + list(self.model.warnings)
        n = self.rest_local.shape[0]
        self.cache = cache if cache is not None and cache.vertex_count == n else FrameCache(n)
        self.sim_frame: int | None = None  # frame the solver's state belongs to
        self.override = False  # deforming modifiers: show through ``cloth_override``
        self.render = False  # this frame is for a render (modifier visibility)
        self.mesh_at_rest = False  # ``position`` holds the rest shape (not a shown frame)
        self._free = ~self.pinned

    @property
    def vertex_count(self) -> int:
        return int(self.rest_local.shape[0])

    # -- per-frame inputs ----------------------------------------------------------------------

    def world_matrix(self, obj: Any, depsgraph: Any) -> np.ndarray:
        src = obj.evaluated_get(depsgraph) if depsgraph is not None else obj
        return np.array(src.matrix_world, dtype=np.float64)

    def evaluated_local(self, obj: Any, depsgraph: Any) -> np.ndarray | None:
        """Object-space points as the modifiers deform the rest shape, or None (no modifier,
        or one that changes the points out of recognition). Our override stores them before
        moving the free points (``cloth_override.DEFORMED_ATTRIBUTE``), with each point's
        index, so they are found again behind a Subdivision or Solidify that adds points
        after the originals; without the override, the positions are read."""
        if not _uses_evaluated_pins(obj, depsgraph):
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

    def pin_targets(self, obj: Any, depsgraph: Any, matrix: np.ndarray) -> np.ndarray:
        """World positions pinned points take now: the evaluated mesh where it deforms.

        Only the pinned rows matter to the solver, so only they are transformed (into a
        reused float64 buffer, the solver's own precision for targets).
        """
        deformed = self.evaluated_local(obj, depsgraph)
        local = self.rest_local if deformed is None else deformed
        ids = self.pinned_ids
        if ids.size:
            self._targets[ids] = transform_points(matrix, local[ids])
        return self._targets

    # -- actions -------------------------------------------------------------------------------

    def show(self, obj: Any, entry: CachedFrame) -> None:
        if self.override:
            cloth_override.ensure_modifier(obj, self.render)
            cloth_override.write(obj.data, entry.positions, self._free)
            return
        if any(cloth_override.is_ours(m) for m in obj.modifiers):
            cloth_override.remove(obj)
        self.mesh_at_rest = False
        local = entry.positions
        if self.pinned_ids.size:  # a frame cached with modifiers has its pins deformed
            local = local.copy()
            local[self.pinned_ids] = self.rest_local[self.pinned_ids]
        write_positions(obj.data, local)

    def reset(self, obj: Any, depsgraph: Any, frame: int) -> CachedFrame:
        """Back to the rest shape at ``frame`` (the start frame), cached and shown; on a
        deformed mesh, the shape its modifiers give the rest shape."""
        matrix = self.world_matrix(obj, depsgraph)
        self.surfaces.reset()
        props = obj.xof_physics
        self.surfaces.colliders(props.collider_collection, depsgraph, exclude=obj)  # the poses
        deformed = self.evaluated_local(obj, depsgraph) if self.override else None
        if deformed is None:
            self.simulator.reset(self.pin_targets(obj, depsgraph, matrix))
            local = self.rest_local
        else:
            self.simulator.reset(transform_points(matrix, deformed, np.float64))
            local = deformed
        _, vel = self.simulator.state()
        entry = self.cache.store(frame, local, vel, matrix)
        self.sim_frame = frame
        self.show(obj, entry)
        return entry

    def resume_from(self, frame: int) -> None:
        """Load a cached frame's state into the solver."""
        entry = self.cache.frames[frame]
        self.simulator.set_state(entry.world_positions(), entry.velocities)
        self.surfaces.reset()  # their pose at that frame is not known: the next one starts still
        self.sim_frame = frame

    def step_once(self, obj: Any, depsgraph: Any, frame: int) -> CachedFrame:
        """Simulate one frame forward from ``sim_frame`` to ``frame`` and cache it."""
        props = obj.xof_physics
        matrix = self.world_matrix(obj, depsgraph)
        targets = self.pin_targets(obj, depsgraph, matrix)
        colliders = self.surfaces.colliders(props.collider_collection, depsgraph, exclude=obj)
        relative = matrix @ affine_inverse(self.build_matrix)
        count = len(self.simulator.warnings)
        world = self.simulator.step(
            1.0 / self.settings.fps,
            pinned_targets=targets,
            object_matrix=relative,
            colliders=colliders,
        )
        if len(self.simulator.warnings) > count:
            fresh = self.simulator.warnings[count:]
            self.warnings.extend(fresh)
            props.last_warning = fresh[-1]
            print(f"xof: {obj.name}: " + "; ".join(fresh))
        local = transform_points(affine_inverse(matrix), world)
        if not self.override:  # exactly where the rest shape has them
            local[self.pinned_ids] = self.rest_local[self.pinned_ids]
        _, vel = self.simulator.state()
        entry = self.cache.store(frame, local, vel, matrix)
        self.sim_frame = frame
        return entry


# -- the registry of runtimes -------------------------------------------------------------------

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


def runtime_for(obj: Any, scene: Any) -> ClothRuntime:
    """The object's runtime, built (with its saved cache) or rebuilt after a setting change."""
    rt = _RUNTIMES.get(_key(obj))
    props = obj.xof_physics
    stale = rt is None or rt.revision != props.settings_revision
    if rt is not None and not stale and rt.vertex_count != len(obj.data.vertices):
        stale = True
    if stale:
        cache = rt.cache if rt is not None else load_cache(obj)
        rt = ClothRuntime(obj, scene, cache)
        _RUNTIMES[_key(obj)] = rt
    assert rt is not None
    return rt


def peek_runtime(obj: Any) -> ClothRuntime | None:
    return _RUNTIMES.get(_key(obj))


def forget(obj: Any) -> None:
    """Drop the object's derived state (it is rebuilt on the next frame)."""
    _RUNTIMES.pop(_key(obj), None)


def forget_all() -> None:
    _RUNTIMES.clear()


def mark_outdated(obj: Any, frame: int) -> None:
    """A setting changed: frames after ``frame`` no longer follow; the solver is rebuilt."""
    rt = _RUNTIMES.get(_key(obj))
    if rt is not None:
        rt.cache.drop_after(frame)
        rt.sim_frame = None
    props = obj.xof_physics
    if props.cache_state == "VALID":
        props.cache_state = "OUTDATED"


def free_cache(obj: Any) -> None:
    """Forget every cached frame, in memory and in the saved ID property."""
    rt = _RUNTIMES.get(_key(obj))
    if rt is not None:
        rt.cache.clear()
        rt.sim_frame = None
    if CACHE_PROPERTY in obj:
        del obj[CACHE_PROPERTY]
    obj.xof_physics.cache_state = "EMPTY"


def persist(obj: Any) -> None:
    """Write the object's cache into its ID property (called before saving)."""
    rt = _RUNTIMES.get(_key(obj))
    if rt is None:
        return
    if len(rt.cache):
        obj[CACHE_PROPERTY] = rt.cache.to_bytes()
    elif CACHE_PROPERTY in obj:
        del obj[CACHE_PROPERTY]


def restore_rest(obj: Any) -> None:
    """Put the rest shape back on the mesh (Reset, Free, disabling, baking)."""
    cloth_override.remove(obj)
    mesh = obj.data
    if mesh.attributes.get("cloth_rest") is not None:
        write_positions(mesh, rest_positions(obj))


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
    rt = runtime_for(obj, scene)
    rt.render = _is_render(depsgraph)
    rt.override = cloth_override.needs_override(obj, rt.render)
    if rt.override and not rt.mesh_at_rest:
        _rest_under_modifiers(obj, rt, depsgraph)
    start, end = int(props.frame_start), int(props.frame_end)
    if f <= start:
        if props.cache_state == "OUTDATED" or start not in rt.cache:
            rt.cache.clear()
        rt.reset(obj, depsgraph, start)
        props.cache_state = "VALID"
        props.last_warning = ""
        return StepReport("reset", f)
    f = min(f, end)
    entry = rt.cache.get(f)
    if entry is not None:
        rt.show(obj, entry)
        return StepReport("cached", f)
    origin = _resume_point(rt, f)
    if origin is None:
        return StepReport("idle", f)
    if rt.sim_frame != origin:
        rt.resume_from(origin)
    steps = 0
    for g in range(origin + 1, f + 1):
        entry = rt.step_once(obj, depsgraph, g)
        steps += 1
    assert entry is not None
    rt.show(obj, entry)
    if props.cache_state == "EMPTY":
        props.cache_state = "VALID"
    return StepReport("stepped", f, steps)


def _originals_first(attrs: Any, n: int) -> bool:
    """Whether the first ``n`` evaluated points are the mesh's own, in order."""
    index = attrs.get(cloth_override.INDEX_ATTRIBUTE)
    if index is None or index.data_type != "INT" or index.domain != "POINT":
        return False
    values = np.empty(len(index.data), dtype=np.int32)
    index.data.foreach_get("value", values)
    return bool(np.array_equal(values[:n], np.arange(n, dtype=np.int32)))


def _rest_under_modifiers(obj: Any, rt: ClothRuntime, depsgraph: Any) -> None:
    """The override starts: the modifiers must deform the rest shape, not the frame that was
    last written into ``position``; re-evaluated at once, since pins and resets read it."""
    write_positions(obj.data, rt.rest_local)
    rt.mesh_at_rest = True
    if depsgraph is not None and not rt.render:
        depsgraph.update()


def _resume_point(rt: ClothRuntime, frame: int) -> int | None:
    """The latest frame within catch-up reach that the solver can continue from."""
    if rt.sim_frame is not None and frame - MAX_CATCH_UP <= rt.sim_frame < frame:
        best: int | None = rt.sim_frame
    else:
        best = None
    for g in range(frame - 1, frame - MAX_CATCH_UP - 1, -1):
        if g in rt.cache:
            if best is None or g > best:
                best = g
            break
    return best
