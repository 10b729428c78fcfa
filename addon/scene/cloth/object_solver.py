"""What one simulated object's solver reads off Blender: its settings, triangles and world
matrix, each frame's inputs (``FrameInputs``), the progress of a big build, and the
object-space results of many objects in one pass (``transform_each``).

The solver itself, built from the mesh, is the object's ``runtime.ClothRuntime``; the frame
cache is the object's ``playback.Playback``. Typed helpers at the bpy boundary: ``physics``
gives the object's xof properties, ``data.mesh_of`` its mesh.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ...sim import BUILD_STAGES, Collider, ObjectFrame, SimSettings
from . import override as cloth_override
from .data import mesh_of

if TYPE_CHECKING:
    import bpy

    from ..imp.progress import Progress


def physics(obj: bpy.types.Object) -> Any:
    """The object's ``xof_physics`` settings (a PropertyGroup ``operators/`` registers)."""
    return obj.xof_physics  # type: ignore[attr-defined]


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


def mesh_triangles(mesh: bpy.types.Mesh) -> np.ndarray:
    """The mesh's triangles ``(T, 3)`` int64 (its faces split as Blender draws them)."""
    mesh.calc_loop_triangles()
    tris = np.empty(len(mesh.loop_triangles) * 3, dtype=np.int32)
    mesh.loop_triangles.foreach_get("vertices", tris)
    return tris.reshape(-1, 3).astype(np.int64)


PROGRESS_FROM_VERTICES = 50_000  # cloths this big show progress while they are built
# Cloths bigger than this are built only once the user confirmed it (the Build button): a
# million points took 7 s and 2.2 GB to build and 2-3 s a frame, on a frame change.
BIG_CLOTH_POINTS = 200_000


def inputs_key(props: Any) -> tuple[object, ...]:
    """The settings that change what is read off the mesh (springs, pins); the others only
    reach the solver."""
    return (props.springs_source, props.use_shear, props.use_bend, props.mass_group)


def needs_confirmation(obj: bpy.types.Object) -> bool:
    """Whether building the object's solver waits for the user's go (a big cloth whose size
    was not confirmed: ``confirmed_points`` below its point count)."""
    n = len(mesh_of(obj).vertices)
    return n > BIG_CLOTH_POINTS and int(getattr(physics(obj), "confirmed_points", 0)) < n


def unconfirmed_note(obj: bpy.types.Object) -> str:
    """The panel's line for a cloth too big to build without the user's go."""
    n = len(mesh_of(obj).vertices)
    return (
        f"{obj.name} has {n:,} points (more than {BIG_CLOTH_POINTS:,}): building its cloth "
        "takes seconds and much memory; press Build in the xof physics panel"
    )


def progress_targets() -> tuple[Any, Any]:
    """Where a build shows its progress: the window manager (Blender's progress cursor) and,
    where a window exists, the workspace (the status bar text); None for each one missing."""
    import bpy  # the bpy side only: imported when needed

    context = bpy.context
    wm = getattr(context, "window_manager", None)
    window = getattr(context, "window", None)
    workspace = getattr(context, "workspace", None) if window is not None else None
    return wm, workspace


def build_progress(obj: bpy.types.Object) -> Progress | None:
    """Progress for building a big cloth (the progress cursor, the status bar text and, headless,
    a console line), else None."""
    if len(mesh_of(obj).vertices) < PROGRESS_FROM_VERTICES:
        return None
    from ..imp.progress import Progress  # the bpy side only: imported when needed

    wm, workspace = progress_targets()
    title = f"xof: building cloth {obj.name}"
    return Progress(1 + BUILD_STAGES, title=title, wm=wm, status=workspace)


def scene_fps(scene: bpy.types.Scene) -> float:
    return float(scene.render.fps) / float(scene.render.fps_base or 1.0)


def is_render(depsgraph: bpy.types.Depsgraph | None) -> bool:
    return getattr(depsgraph, "mode", "VIEWPORT") == "RENDER"


@dataclass
class FrameInputs:
    """What the solver needs from the scene for one frame (world space, metres).

    ``matrix``: the object's (4, 4) world matrix now (the solver's object matrix);
    ``pin_targets`` ``(P, 3)``: where the pinned points are now, in the order of the
    solver's ``pinned_ids``; ``shape_targets`` ``(N, 3)``: a soft body's goal on a deformed
    mesh, or None (the rest shape through ``matrix``); ``colliders``: the solver colliders of
    the object's collider collection.
    """

    matrix: np.ndarray
    pin_targets: np.ndarray
    shape_targets: np.ndarray | None
    colliders: Sequence[Collider]

    def object_frame(self) -> ObjectFrame:
        """These inputs as ``Simulator.step`` and ``World.step`` take them."""
        return ObjectFrame(self.pin_targets, self.matrix, tuple(self.colliders), self.shape_targets)


def world_matrix(obj: bpy.types.Object, depsgraph: bpy.types.Depsgraph | None) -> np.ndarray:
    src = obj.evaluated_get(depsgraph) if depsgraph is not None else obj
    return np.array(src.matrix_world, dtype=np.float64)


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


def originals_first(attrs: bpy.types.AttributeGroupMesh, n: int) -> bool:
    """Whether the first ``n`` evaluated points are the mesh's own, in order."""
    index = attrs.get(cloth_override.INDEX_ATTRIBUTE)
    if index is None or index.data_type != "INT" or index.domain != "POINT":
        return False
    values = np.empty(len(index.data), dtype=np.int32)
    index.data.foreach_get("value", values)
    return bool(np.array_equal(values[:n], np.arange(n, dtype=np.int32)))
