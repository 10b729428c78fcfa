"""Live cloth / soft-body playback in Blender: the adapter around the bpy-free core.

``playback.Playback`` (one per object) owns the frame cache and decides, per frame, whether to
reset, show a cached frame, resume and simulate, or wait; ``ClothRuntime`` (one per object)
holds its model and solver, reads the solver's inputs off the scene each frame
(``frame_inputs``: the object's matrix, where the pins are, the soft body's goal, the
colliders) and takes each result back into object space; this module prepares each object
for its frame and shows the result through the ``cloth_override`` Geometry Nodes modifier.
The frame loop that steps one object or many together is ``together.py``. The mesh itself
is the rest shape: playback never writes it, so an edit in Edit Mode or Apply Scale stays,
and a .blend opened without xof shows the mesh as the user made it. An edited rest shape
makes every cached frame outdated (checked against the shape the solver was built from, each
frame and on depsgraph updates).

Everything derived (model, solver) lives in module memory keyed by the object's session id and
is rebuilt on demand (a cloth bigger than ``BIG_CLOTH_POINTS`` only once the user confirmed
it), so a reopened .blend works: the cache is serialised into an ID property when the file is
saved, with a checksum of the rest shape it was simulated from.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ...sim import (
    ClothModel,
    Collider,
    ObjectFrame,
    Simulator,
    StepResult,
    affine_inverse,
    transform_points,
)
from . import override as cloth_override
from . import saved_cache
from .cache import CachedFrame, FrameCache
from .colliders import SurfaceColliders
from .data import read_cloth_inputs, restore_legacy_rest
from .object_solver import (
    FrameInputs,
    build_progress,
    inputs_key,
    is_render,
    mesh_of,
    mesh_triangles,
    needs_confirmation,
    originals_first,
    physics,
    scene_fps,
    settings_from_props,
    unconfirmed_note,
    world_matrix,
)
from .playback import BAKED, Playback

if TYPE_CHECKING:
    import bpy


@dataclass
class StepReport:
    """What one handler call did, for tests and the panel."""

    action: str  # 'reset' | 'cached' | 'stepped' | 'idle' | 'baked' | 'skipped' | 'unconfirmed'
    frame: int
    steps: int = 0


class ClothRuntime:
    """Derived state of one simulated object: its model and solver, built from the rest shape
    (the mesh, in object space) placed by the object's matrix when built; each frame, the
    solver is given the object's matrix then (one convention: ``addon.sim``)."""

    def __init__(self, obj: bpy.types.Object, scene: bpy.types.Scene, playback: Playback) -> None:
        props = physics(obj)
        self.playback = playback
        self.revision = int(props.settings_revision)
        self.inputs_key = inputs_key(props)
        progress = build_progress(obj)
        try:
            if progress is not None:
                progress.step("reading the mesh")
            inputs = read_cloth_inputs(
                obj,
                springs_source=props.springs_source,
                use_shear=props.use_shear,
                use_bend=props.use_bend,
                mass_group=props.mass_group,
            )
            self.rest_local = inputs.rest.astype(np.float32)
            self._rest_bytes = self.rest_local.tobytes()  # compared with the mesh every frame
            self._read = np.empty(self.rest_local.size, dtype=np.float32)  # the mesh's points
            self._inverse_of: tuple[bytes, np.ndarray] = (b"", np.eye(4))
            self.model = ClothModel(
                self.rest_local,
                inputs.masses,
                inputs.springs,
                inputs.kinds,
                inputs.stiffness_scale,
                inputs.damping_scale,
                face_sizes=inputs.face_sizes,
                face_corners=inputs.face_corners,
                matrix=np.array(obj.matrix_world, dtype=np.float64),
            )
            self.pinned = np.asarray(self.model.pinned, dtype=bool)
            self.pinned_ids = np.flatnonzero(self.pinned)
            # a non-finite rest point is held at the model's 0 (pinned), never at a NaN target
            self.rest_bad = np.flatnonzero(~np.isfinite(self.rest_local).all(axis=1))
            self._bad_pins = np.flatnonzero(np.isin(self.pinned_ids, self.rest_bad))
            self.free = ~self.pinned
            # the pins' targets (P, 3), and the matrix bytes the rest pins in them are posed by
            self._targets = np.zeros((self.pinned_ids.size, 3), dtype=np.float64)
            self._pins_at: bytes | None = None
            self.settings = settings_from_props(props, scene_fps(scene))
            triangles = mesh_triangles(mesh_of(obj)) if self.settings.self_collision else None
            report = progress.step if progress is not None else None
            self.simulator = Simulator(self.model, self.settings, report, triangles)
        finally:
            if progress is not None:
                progress.end()
        self.surfaces = SurfaceColliders()  # collider surfaces and their previous poses
        self.warnings: list[str] = list(inputs.warnings) + list(self.model.warnings)
        self.solver_notes = list(self.simulator.solver.notes)  # e.g. classic springs softened
        self.warnings += self.solver_notes
        if self.vertex_count and self.pinned.all():
            self.warnings.append(
                f"every point has mass 0 in '{props.mass_group}' (pinned): nothing moves"
            )
        self.build_notes = list(self.warnings)  # shown in the panel after every reset
        self.deformed = False  # the modifiers move points: pins and goals from the evaluation
        self.render = False  # this frame is for a render (modifier visibility)
        self.free_shown = False  # the override's free-point mask is on the mesh

    def update_settings(self, obj: bpy.types.Object, scene: bpy.types.Scene) -> None:
        """New solver settings on the same mesh inputs: the model and, when only values
        changed, the solver's build are kept (``Simulator.update_settings``)."""
        props = physics(obj)
        self.revision = int(props.settings_revision)
        self.settings = settings_from_props(props, scene_fps(scene))
        self.simulator.update_settings(self.settings)
        notes = list(self.simulator.solver.notes)
        self.warnings += notes
        kept = [n for n in self.build_notes if n not in self.solver_notes]
        self.build_notes, self.solver_notes = kept + notes, notes

    def same_rest(self, mesh: bpy.types.Mesh) -> bool:
        """Whether the mesh's points are still the rest shape the solver was built from: the
        same bytes are the same shape, NaN points included (a NaN is never equal to itself
        as a float); other bytes are compared by value (-0.0 is 0.0)."""
        n = len(mesh.vertices)
        if n != self.vertex_count:
            return False
        if not n:
            return True
        read = self._read
        mesh.attributes["position"].data.foreach_get("vector", read)  # type: ignore[attr-defined]
        if read.tobytes() == self._rest_bytes:
            return True
        return bool(np.array_equal(read.reshape(-1, 3), self.rest_local))

    @property
    def vertex_count(self) -> int:
        return int(self.rest_local.shape[0])

    @property
    def cache(self) -> FrameCache:
        """The object's frame cache (owned by its ``Playback``)."""
        return self.playback.cache

    def evaluated_local(
        self, obj: bpy.types.Object, depsgraph: bpy.types.Depsgraph | None
    ) -> np.ndarray | None:
        """Object-space points as the modifiers deform the rest shape, or None (nothing
        deforms it, or a modifier changes the points out of recognition). Our override stores
        them before moving the free points (``cloth_override.DEFORMED_ATTRIBUTE``), with each
        point's index, so they are found again behind a Subdivision or Solidify that adds
        points after the originals; before the override ran, the positions are read."""
        if not self.deformed or depsgraph is None:
            return None
        evaluated = mesh_of(obj.evaluated_get(depsgraph))
        n = self.vertex_count
        count = len(evaluated.vertices)
        attrs = evaluated.attributes
        stored: Any = attrs.get(cloth_override.DEFORMED_ATTRIBUTE)
        if stored is None or stored.data_type != "FLOAT_VECTOR" or stored.domain != "POINT":
            stored = None
        if count != n and (count < n or stored is None or not originals_first(attrs, n)):
            return None
        source: Any = stored if stored is not None else attrs["position"]
        local = np.empty(count * 3, dtype=np.float32)
        source.data.foreach_get("vector", local)
        return local.reshape(-1, 3)[:n]

    def start_state(
        self, obj: bpy.types.Object, depsgraph: bpy.types.Depsgraph | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Reset the solver at the start frame: the rest shape, or on a deformed mesh the
        shape its modifiers give it now, through the object's matrix. Returns the
        object-space shape and the matrix."""
        matrix = world_matrix(obj, depsgraph)
        self.surfaces.reset()  # the colliders start at rest: their pose now is the previous
        self.surfaces.colliders(physics(obj).collider_collection, depsgraph, exclude=obj)
        deformed = self.evaluated_local(obj, depsgraph)
        local = self.rest_local if deformed is None else deformed
        self.simulator.reset(transform_points(matrix, local, np.float64))
        return local, matrix

    def resume(self, positions: np.ndarray, velocities: np.ndarray) -> None:
        """Continue from a cached frame's state; the colliders' pose at that frame is not
        known, so the next frame starts them still."""
        self.simulator.set_state(positions, velocities)
        self.surfaces.reset()

    def frame_inputs(
        self,
        obj: bpy.types.Object,
        depsgraph: bpy.types.Depsgraph | None,
        colliders: Sequence[Collider] | None = None,
    ) -> FrameInputs:
        """Everything the solver reads from the scene for the frame being stepped
        (``colliders``: already read and posed for this frame, e.g. shared by the objects
        stepping together; None: the object's own surfaces, kept frame to frame)."""
        matrix = world_matrix(obj, depsgraph)
        key = matrix.tobytes()
        deformed = self.evaluated_local(obj, depsgraph)
        ids = self.pinned_ids
        # the rest shape's pins are posed again only when the matrix changed
        if deformed is not None:
            if ids.size:
                self._targets[:] = transform_points(matrix, deformed[ids])
                self._targets[self._bad_pins] = matrix[:3, 3]  # the model's 0, posed
            self._pins_at = None
        elif self._pins_at != key:
            if ids.size:
                self._targets[:] = transform_points(matrix, self.model.rest_positions[ids])
            self._pins_at = key
        goal = None
        if deformed is not None and self.settings.kind == "SOFT":
            goal = transform_points(matrix, deformed, np.float64)
            goal[self.rest_bad] = matrix[:3, 3]  # NaN there would void the whole goal
        if colliders is None:  # surfaces need their previous pose: the object's own
            colliders = self.surfaces.colliders(
                physics(obj).collider_collection, depsgraph, exclude=obj
            )
        return FrameInputs(matrix, self._targets, goal, colliders)

    def step(self, frame: ObjectFrame) -> StepResult:
        """Simulate one frame of this object by itself."""
        return self.simulator.step(
            1.0 / self.settings.fps,
            frame.pinned_targets,
            frame.object_matrix,
            frame.colliders,
            frame.shape_targets,
        )

    def accept(
        self,
        obj: bpy.types.Object,
        inputs: FrameInputs,
        result: StepResult,
        local: np.ndarray | None = None,
    ) -> np.ndarray:
        """The object-space positions ``(N, 3)`` of a step's ``result`` (``local``: already
        computed, ``transform_each``); reports the frame's warnings (the panel's line, the
        console)."""
        if result.warnings:
            self.warnings.extend(result.warnings)
            physics(obj).last_warning = result.warnings[-1]
            print(f"xof: {obj.name}: " + "; ".join(result.warnings))
        if local is not None:
            return local
        return transform_points(self.inverse(inputs.matrix), result.positions)

    def inverse(self, matrix: np.ndarray) -> np.ndarray:
        """``affine_inverse(matrix)``, kept for the last matrix asked (an object that does
        not move asks for the same one every frame)."""
        key = np.ascontiguousarray(matrix, dtype=np.float64).tobytes()
        if self._inverse_of[0] != key:
            self._inverse_of = (key, affine_inverse(matrix))
        return self._inverse_of[1]


# -- the registries: the cores (cache owners) and the solvers -----------------------------------

_PLAYBACKS: dict[int, Playback] = {}
_RUNTIMES: dict[int, ClothRuntime] = {}


def _key(obj: bpy.types.Object) -> int:
    return int((obj.original or obj).session_uid)


def playback_for(obj: bpy.types.Object, key: int | None = None) -> Playback:
    """The object's playback core: made from the saved cache and state on first use
    (``key``: the object's ``_key``, when known)."""
    key = _key(obj) if key is None else key
    pb = _PLAYBACKS.get(key)
    if pb is None:
        n = len(mesh_of(obj).vertices)
        cache = saved_cache.load(obj)
        if cache is not None and cache.vertex_count == n and saved_cache.rest_edited(obj):
            cache = None  # the mesh was edited after the save (xof off, another tool)
        state = physics(obj).cache_state
        pb = Playback(n, state, cache)
        if cache is None and state == "VALID" and saved_cache.has_saved(obj):
            pb.rest_changed(n)
        _PLAYBACKS[key] = pb
        publish(obj, pb)
    return pb


def publish(obj: bpy.types.Object, pb: Playback, props: Any = None) -> None:
    """Show the core's cache state on the object (the panel and the saved file read it;
    ``props``: its ``xof_physics``, when at hand)."""
    props = physics(obj) if props is None else props
    if props.cache_state != pb.state:
        props.cache_state = pb.state


def runtime_for(obj: bpy.types.Object, scene: bpy.types.Scene) -> ClothRuntime:
    """The object's solver, built, or rebuilt after a setting change or an edit of the mesh
    (which outdates every cached frame)."""
    return _runtime_for(obj, scene, _key(obj))[0]


def _runtime_for(
    obj: bpy.types.Object,
    scene: bpy.types.Scene,
    key: int,
    props: Any = None,
    editing: bool | None = None,
) -> tuple[ClothRuntime, Playback]:
    """``runtime_for`` and the object's playback core (``key``: its ``_key``; ``props``:
    its ``xof_physics``; ``editing``: whether it is in Edit Mode, when known)."""
    rt = _RUNTIMES.get(key)
    pb = playback_for(obj, key)
    props = physics(obj) if props is None else props
    mesh = mesh_of(obj)
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


def check_rest(obj: bpy.types.Object) -> bool:
    """Whether the mesh (the rest shape) changed since the solver was built from it; if so,
    every cached frame is outdated, none is shown, and the solver is dropped."""
    key = _key(obj)
    rt = _RUNTIMES.get(key)
    return rt is not None and _rest_changed(obj, key, rt)


def _rest_changed(
    obj: bpy.types.Object, key: int, rt: ClothRuntime, editing: bool | None = None
) -> bool:
    """``check_rest`` of the object's solver ``rt`` (``key``: the object's ``_key``;
    ``editing``: whether it is in Edit Mode, when known)."""
    if (obj.mode == "EDIT" if editing is None else editing) or rt.same_rest(mesh_of(obj)):
        return False
    del _RUNTIMES[key]
    pb = playback_for(obj, key)
    pb.rest_changed(len(mesh_of(obj).vertices))
    cloth_override.clear_shown(mesh_of(obj))
    publish(obj, pb)
    return True


def peek_runtime(obj: bpy.types.Object) -> ClothRuntime | None:
    return _RUNTIMES.get(_key(obj))


def peek_playback(obj: bpy.types.Object) -> Playback | None:
    return _PLAYBACKS.get(_key(obj))


def forget(obj: bpy.types.Object) -> None:
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


def mark_outdated(obj: bpy.types.Object, frame: int) -> None:
    """A setting changed at ``frame``: later frames no longer follow; the solver is rebuilt.
    Right after opening a file the saved cache is loaded first, so it is outdated too."""
    pb = playback_for(obj)
    if pb.state == BAKED:
        return
    pb.outdate(frame)
    publish(obj, pb)


def free_cache(obj: bpy.types.Object) -> None:
    """Forget every cached frame, in memory and in the saved ID property."""
    pb = playback_for(obj)
    pb.free()
    saved_cache.save(obj, None)
    publish(obj, pb)


def set_baked(obj: bpy.types.Object, baked: bool) -> None:
    """A bake replaced the live simulation, or was freed (the live cache takes over)."""
    pb = playback_for(obj)
    if baked:
        pb.baked()
    else:
        pb.unbaked()
    publish(obj, pb)


def persist(obj: bpy.types.Object) -> None:
    """Write the object's cache into its ID properties (called before saving)."""
    pb = peek_playback(obj)
    if pb is not None:
        saved_cache.save(obj, pb.cache)


def restore_rest(obj: bpy.types.Object) -> None:
    """Show the mesh as it is, without any simulated frame (Reset, disabling, baking)."""
    cloth_override.remove(obj)
    restore_legacy_rest(mesh_of(obj))


def show(obj: bpy.types.Object, rt: ClothRuntime, entry: CachedFrame, ready: bool = False) -> None:
    """Show a frame through the override modifier (the mesh stays the rest shape;
    ``ready``: the stack was found to be ours alone, current, this frame)."""
    if not ready:
        cloth_override.ensure_modifier(obj, rt.render, rt.deformed)
    cloth_override.write(mesh_of(obj), entry.positions, rt.free, write_free=not rt.free_shown)
    rt.free_shown = True


def show_current(obj: bpy.types.Object, scene: bpy.types.Scene) -> None:
    """Show the scene's frame again if it is cached (after a save took the frame away)."""
    pb = peek_playback(obj)
    rt = peek_runtime(obj)
    if pb is None or rt is None or pb.state == BAKED:
        return
    entry = pb.cache.get(min(int(scene.frame_current), int(physics(obj).frame_end)))
    if entry is None and scene.frame_current <= physics(obj).frame_start:
        entry = pb.cache.get(int(physics(obj).frame_start))
    if entry is not None:
        rt.free_shown = False
        show(obj, rt, entry)


# -- the per-frame entry point ------------------------------------------------------------------


def is_simulated(obj: bpy.types.Object) -> bool:
    props = getattr(obj, "xof_physics", None)
    return obj.type == "MESH" and props is not None and bool(props.enabled)


@dataclass
class Pending:
    """An object whose solver is at the frame before ``frames`` and must simulate them."""

    obj: bpy.types.Object
    rt: ClothRuntime
    pb: Playback
    frames: list[int]
    ready: bool = False  # the stack is our modifier alone, current (``show``)
    props: Any = None  # the object's ``xof_physics``


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
    obj: bpy.types.Object,
    scene: bpy.types.Scene,
    depsgraph: bpy.types.Depsgraph | None,
    frame: int | None = None,
    render: bool | None = None,
) -> StepReport | Pending:
    """All of bringing ``obj`` to ``frame`` but the simulation: a reset, a cached frame or
    nothing to do (a report), or the frames left to simulate (the solver at their origin).
    ``render``: whether ``depsgraph`` is a render's, when known."""
    f = int(scene.frame_current if frame is None else frame)
    props = physics(obj)
    if props.cache_state == "BAKED":
        return StepReport("baked", f)
    if obj.mode == "EDIT":
        return StepReport("skipped", f)
    if not len(mesh_of(obj).vertices):
        note = f"{obj.name} has no vertices: nothing to simulate"
        if props.last_warning != note:
            props.last_warning = note
        return StepReport("skipped", f)
    if needs_confirmation(obj):  # a big build waits for the Build button (xof.sim_build)
        note = unconfirmed_note(obj)
        if props.last_warning != note:
            props.last_warning = note
        return StepReport("unconfirmed", f)
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
