"""One simulated object's solver side: its model and solver built from the mesh (the rest
shape), and ``gather_inputs``, everything the solver reads from the scene for one frame.

The Blender adapter (``runtime.py``) keeps one ``ClothRuntime`` per object and rebuilds it
after a setting change or an edit of the mesh; the frame cache is not here but in the
object's ``playback.Playback``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...sim import (
    BUILD_STAGES,
    ClothModel,
    Collider,
    SimSettings,
    Simulator,
    affine_inverse,
    transform_points,
)
from . import override as cloth_override
from .cache import FrameCache
from .colliders import SurfaceColliders
from .data import read_cloth_inputs
from .playback import Playback


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
        wind_model=getattr(props, "wind_model", "UNIFORM"),
        time_scale=getattr(props, "time_scale", 1.0),
        max_substeps=getattr(props, "max_substeps", 400),
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


PROGRESS_FROM_VERTICES = 50_000  # cloths this big show progress while they are built


def inputs_key(props: Any) -> tuple[object, ...]:
    """The settings that change what is read off the mesh (springs, pins); the others only
    reach the solver."""
    return (props.springs_source, props.use_shear, props.use_bend, props.mass_group)


def build_progress(obj: Any) -> Any:
    """A progress bar (a console line headless) for building a big cloth, else None."""
    if len(obj.data.vertices) < PROGRESS_FROM_VERTICES:
        return None
    from ..imp.progress import Progress  # the bpy side only: imported when needed

    return Progress(1 + BUILD_STAGES, title=f"xof: building cloth {obj.name}")


def scene_fps(scene: Any) -> float:
    return float(scene.render.fps) / float(scene.render.fps_base or 1.0)


def is_render(depsgraph: Any) -> bool:
    return getattr(depsgraph, "mode", "VIEWPORT") == "RENDER"


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


class ClothRuntime:
    """Derived state of one simulated object: its model and solver, built from the rest shape."""

    def __init__(self, obj: Any, scene: Any, playback: Playback) -> None:
        props = obj.xof_physics
        self.playback = playback
        self.revision = int(props.settings_revision)
        self.inputs_key = inputs_key(props)
        progress = build_progress(obj)
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
        self.build_matrix = np.array(obj.matrix_world, dtype=np.float64)
        self.build_inverse = affine_inverse(self.build_matrix)  # read every frame
        self._inverse_of: tuple[bytes, np.ndarray] = (b"", self.build_inverse)
        self._relative_of: tuple[bytes, np.ndarray] = (b"", self.build_inverse)
        self._pins_at: bytes | None = None  # the matrix the rest pins in _targets are posed by
        self.model = ClothModel(
            transform_points(self.build_matrix, self.rest_local),
            inputs.masses,
            inputs.springs,
            inputs.kinds,
            inputs.stiffness_scale,
            inputs.damping_scale,
            face_sizes=inputs.face_sizes,
            face_corners=inputs.face_corners,
        )
        self.pinned = np.asarray(self.model.pinned, dtype=bool)
        self.pinned_ids = np.flatnonzero(self.pinned)
        # a non-finite rest point stays at the model's 0 (pinned): its targets are never read
        self.rest_bad = np.flatnonzero(~np.isfinite(self.rest_local).all(axis=1))
        self.pins_read = np.setdiff1d(self.pinned_ids, self.rest_bad)
        self.free = ~self.pinned
        self._targets = np.asarray(self.model.rest_positions, dtype=np.float64).copy()
        self.settings = settings_from_props(props, scene_fps(scene))
        triangles = mesh_triangles(obj.data) if self.settings.self_collision else None
        try:
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

    def update_settings(self, obj: Any, scene: Any) -> None:
        """New solver settings on the same mesh inputs: the model and, when only values
        changed, the solver's build are kept (``Simulator.update_settings``)."""
        props = obj.xof_physics
        self.revision = int(props.settings_revision)
        self.settings = settings_from_props(props, scene_fps(scene))
        self.simulator.update_settings(self.settings)
        notes = list(self.simulator.solver.notes)
        self.warnings += notes
        kept = [n for n in self.build_notes if n not in self.solver_notes]
        self.build_notes, self.solver_notes = kept + notes, notes

    def same_rest(self, mesh: Any) -> bool:
        """Whether the mesh's points are still the rest shape the solver was built from: the
        same bytes are the same shape, NaN points included (a NaN is never equal to itself
        as a float); other bytes are compared by value (-0.0 is 0.0)."""
        n = len(mesh.vertices)
        if n != self.vertex_count:
            return False
        if not n:
            return True
        read = self._read
        mesh.attributes["position"].data.foreach_get("vector", read)
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
        self.surfaces.reset()  # the colliders start at rest: their pose now is the previous
        self.surfaces.colliders(obj.xof_physics.collider_collection, depsgraph, exclude=obj)
        deformed = self.evaluated_local(obj, depsgraph)
        if deformed is None:
            local = self.rest_local
            relative = matrix @ self.build_inverse
            start = transform_points(relative, self.model.rest_positions, np.float64)
        else:
            local = deformed
            start = transform_points(matrix, deformed, np.float64)
        self.simulator.reset(start)
        return local, matrix

    def resume(self, positions: np.ndarray, velocities: np.ndarray) -> None:
        """Continue from a cached frame's state; the colliders' pose at that frame is not
        known, so the next frame starts them still."""
        self.simulator.set_state(positions, velocities)
        self.surfaces.reset()

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
        return self.accept(obj, inputs, world, count)

    def accept(
        self,
        obj: Any,
        inputs: FrameInputs,
        world: np.ndarray,
        count: int,
        local: np.ndarray | None = None,
    ) -> np.ndarray:
        """The object-space result ``(N, 3)`` of a step that gave ``world`` (``local``:
        already computed, ``transform_each``); reports the solver's warnings newer than the
        first ``count``."""
        if len(self.simulator.warnings) > count:
            fresh = self.simulator.warnings[count:]
            self.warnings.extend(fresh)
            obj.xof_physics.last_warning = fresh[-1]
            print(f"xof: {obj.name}: " + "; ".join(fresh))
        if local is not None:
            return local
        return transform_points(self.inverse(inputs.matrix), world)

    def inverse(self, matrix: np.ndarray) -> np.ndarray:
        """``affine_inverse(matrix)``, kept for the last matrix asked (an object that does
        not move asks for the same one every frame)."""
        key = np.ascontiguousarray(matrix, dtype=np.float64).tobytes()
        if self._inverse_of[0] != key:
            self._inverse_of = (key, affine_inverse(matrix))
        return self._inverse_of[1]

    def relative(self, matrix: np.ndarray, key: bytes) -> np.ndarray:
        """``matrix @ build_inverse`` (the solver's object matrix), kept for the last
        ``matrix`` (``key``: its bytes)."""
        if self._relative_of[0] != key:
            self._relative_of = (key, matrix @ self.build_inverse)
        return self._relative_of[1]


def world_matrix(obj: Any, depsgraph: Any) -> np.ndarray:
    src = obj.evaluated_get(depsgraph) if depsgraph is not None else obj
    return np.array(src.matrix_world, dtype=np.float64)


def gather_inputs(
    obj: Any, rt: ClothRuntime, depsgraph: Any, colliders: Sequence[Collider] | None = None
) -> FrameInputs:
    """Everything the solver reads from the scene for the frame being stepped
    (``colliders``: already read and posed for this frame, e.g. shared by the objects
    stepping together; None: the object's own surfaces, kept frame to frame)."""
    matrix = world_matrix(obj, depsgraph)
    key = matrix.tobytes()
    deformed = rt.evaluated_local(obj, depsgraph)
    ids = rt.pins_read
    # only pinned rows are read: only they are transformed, and the rest shape's again
    # only when the matrix changed (nothing else writes them)
    if deformed is not None:
        if ids.size:
            rt._targets[ids] = transform_points(matrix, deformed[ids])
        rt._pins_at = None
    elif rt._pins_at != key:
        if ids.size:
            rt._targets[ids] = transform_points(matrix, rt.rest_local[ids])
        rt._pins_at = key
    goal = None
    if deformed is not None and rt.settings.kind == "SOFT":
        goal = transform_points(matrix, deformed, np.float64)
        goal[rt.rest_bad] = rt._targets[rt.rest_bad]  # NaN there would void the whole goal
    if colliders is None:  # surfaces need their previous pose: the object's own
        colliders = rt.surfaces.colliders(
            obj.xof_physics.collider_collection, depsgraph, exclude=obj
        )
    return FrameInputs(
        matrix=matrix,
        relative=rt.relative(matrix, key),
        pin_targets=rt._targets,
        shape_targets=goal,
        colliders=colliders,
    )


def transform_each(
    matrices: Sequence[np.ndarray], points: Sequence[np.ndarray], kept: PointFields | None = None
) -> list[np.ndarray]:
    """``transform_points(m, p)`` (float32) of each pair, bit for bit, in up to three passes
    over all the points: those whose matrix does nothing (a float32 copy), only shifts (the
    copy plus each point's shift) or turns or scales (each point gets the same float32
    products, summed in the same order). ``kept``: the passes of the last sets of matrices
    (objects that do not move ask for the same ones every frame). The results are views
    into the passes' arrays."""
    pts = [np.asarray(p).reshape(-1, 3) for p in points]
    if len(matrices) != len(pts):
        raise ValueError(f"{len(matrices)} matrices for {len(pts)} point sets")
    if not pts:
        return []
    out: list[np.ndarray] = [pts[0]] * len(pts)
    for pass_ in (kept or PointFields()).passes(matrices, [len(p) for p in pts]):
        every = np.concatenate([pts[k] for k in pass_.members], dtype=np.float32, casting="unsafe")
        if pass_.columns is not None:
            assert pass_.shift is not None  # a turning pass starts from its shifts
            joined = pass_.shift.copy()
            column = np.empty((len(every), 1), dtype=np.float32)
            for j in range(3):
                np.copyto(column[:, 0], every[:, j], casting="unsafe")
                joined += column * pass_.columns[j]
        else:
            joined = every
            if pass_.shift is not None:
                joined += pass_.shift
        for k, first, last in pass_.slices:
            out[k] = joined[first:last]
    return out


@dataclass
class _Pass:
    """One pass of ``transform_each``: its pairs, where each one's points lie in it, and
    the per-point float32 shifts ``(P, 3)`` and 3x3 columns (``columns[j]`` row ``i``:
    column ``j`` of point ``i``'s matrix), None where the pass has none."""

    members: list[int]
    slices: list[tuple[int, int, int]]
    shift: np.ndarray | None
    columns: list[np.ndarray] | None


class PointFields:
    """``transform_each``'s passes, kept for the last ``keep`` sets of matrices and point
    counts (found again by their bytes)."""

    def __init__(self, keep: int = 4) -> None:
        self.keep = keep
        self._kept: dict[bytes, list[_Pass]] = {}

    def passes(self, matrices: Sequence[np.ndarray], counts: list[int]) -> list[_Pass]:
        ms = [np.ascontiguousarray(m, dtype=np.float64) for m in matrices]
        key = b"".join(m.tobytes() for m in ms) + np.array(counts, dtype=np.int64).tobytes()
        found = self._kept.get(key)
        if found is None:
            found = _passes(np.stack(ms), np.array(counts, dtype=np.int64))
            if len(self._kept) >= self.keep:
                del self._kept[next(iter(self._kept))]
            self._kept[key] = found
        return found


def _passes(ms: np.ndarray, counts: np.ndarray) -> list[_Pass]:
    if ms.shape[1:] != (4, 4):
        raise ValueError(f"matrices must be (4, 4), got {ms.shape[1:]}")
    shift = ms[:, :3, 3].astype(np.float32)
    turns = ~(ms[:, :3, :3] == _EYE).all(axis=(1, 2))
    moved = shift.any(axis=1)  # a float32 shift of zeros is not added (-0.0 stays)
    out: list[_Pass] = []
    for chosen in (~turns & ~moved, ~turns & moved, turns):
        ids = np.flatnonzero(chosen)
        if not ids.size:
            continue
        n = counts[ids]
        first = int(ids[0])
        field = np.repeat(shift[ids], n, axis=0) if turns[first] or moved[first] else None
        columns = None
        if turns[first]:  # the turned points start from their shift, as transform_points
            a = ms[ids, :3, :3].astype(np.float32)
            columns = [np.repeat(a[:, :, j], n, axis=0) for j in range(3)]
        ends = np.cumsum(n).tolist()
        slices = list(zip(ids.tolist(), [0, *ends[:-1]], ends, strict=True))
        out.append(_Pass(ids.tolist(), slices, field, columns))
    return out


_EYE = np.eye(3)


def _originals_first(attrs: Any, n: int) -> bool:
    """Whether the first ``n`` evaluated points are the mesh's own, in order."""
    index = attrs.get(cloth_override.INDEX_ATTRIBUTE)
    if index is None or index.data_type != "INT" or index.domain != "POINT":
        return False
    values = np.empty(len(index.data), dtype=np.int32)
    index.data.foreach_get("value", values)
    return bool(np.array_equal(values[:n], np.arange(n, dtype=np.int32)))
