"""Solver colliders from the Blender objects in a collider collection.

A mesh (and a curve, surface, text or metaball, through its evaluated mesh) collides as its
evaluated triangle surface at this frame: skinned, shape-keyed, animated and modified as
shown. Its thickness and friction come from Blender's Collision modifier when it has one
(``thickness_outer``; ``thickness_inner`` when "Single Sided" is on; ``cloth_friction`` /
100 as the friction coefficient), so a scene set up for Blender's Cloth works unchanged;
else from the object's ``xof_physics`` collider settings. Sphere and plane are analytic
shapes for empties ('SPHERE' display = a sphere of the displayed size, other displays = the
XY plane of the empty) and for a mesh whose collider shape is set to one of them (the
sphere around its bounding box, the plane through its centre normal to its flattest axis).

``SurfaceColliders`` keeps one ``MeshCollider`` per object between frames, so the solver
sees each surface move from its previous pose to this frame's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ...sim import Collider, MeshCollider, Plane, Sphere, transform_points

if TYPE_CHECKING:
    import bpy

SURFACE_TYPES = {"MESH", "CURVE", "SURFACE", "FONT", "META"}
FRICTION_SCALE = 0.01  # Blender's cloth_friction (0-80) to a Coulomb coefficient
DEFAULT_OUTER = 0.01  # metres, a mesh without a Collision modifier or xof settings


def _matrix(obj: bpy.types.Object, depsgraph: bpy.types.Depsgraph | None) -> np.ndarray:
    src = obj.evaluated_get(depsgraph) if depsgraph is not None else obj
    return np.array(src.matrix_world, dtype=np.float64)


def _shape_choice(obj: bpy.types.Object) -> str:
    props = getattr(obj, "xof_physics", None)
    return str(getattr(props, "collider_shape", "SURFACE"))


def collider_for(
    obj: bpy.types.Object, depsgraph: bpy.types.Depsgraph | None = None
) -> Sphere | Plane | None:
    """The analytic collider of an empty, or of an object whose collider shape is 'SPHERE'
    or 'PLANE' (None for a zero-size object)."""
    m = _matrix(obj, depsgraph)
    axes = m[:3, :3]
    scales = np.linalg.norm(axes, axis=0)
    if obj.type == "EMPTY":
        if obj.empty_display_type == "SPHERE":
            return Sphere(m[:3, 3], float(obj.empty_display_size * scales.max()))
        normal = axes[:, 2]
        return Plane(m[:3, 3], normal) if np.linalg.norm(normal) > 1e-12 else None
    corners = np.array([tuple(c) for c in obj.bound_box], dtype=np.float64)
    lo, hi = corners.min(axis=0), corners.max(axis=0)
    dims = (hi - lo) * scales
    if not np.isfinite(dims).all() or dims.max() <= 0.0:
        return None
    centre = m @ np.append((lo + hi) / 2.0, 1.0)
    if _shape_choice(obj) == "PLANE":
        normal = axes[:, int(np.argmin(dims))]
        return Plane(centre[:3], normal) if np.linalg.norm(normal) > 1e-12 else None
    return Sphere(centre[:3], float(dims.max() / 2.0))


def surface_settings(obj: bpy.types.Object) -> tuple[float, float, float | None]:
    """``(outer, inner, friction)`` of an object colliding as a surface: its Collision
    modifier's, else its xof collider settings (friction None: the cloth's own)."""
    for mod in getattr(obj, "modifiers", ()):
        if mod.type == "COLLISION" and getattr(mod, "settings", None) is not None:
            s = mod.settings
            inner = float(s.thickness_inner) if bool(getattr(s, "use_normal", False)) else 0.0
            return float(s.thickness_outer), inner, float(s.cloth_friction) * FRICTION_SCALE
    props = getattr(obj, "xof_physics", None)
    if props is None or not hasattr(props, "collider_thickness"):
        return DEFAULT_OUTER, 0.0, None
    inner = float(props.collider_inner) if props.collider_single_sided else 0.0
    friction = float(props.collider_friction) if props.collider_use_friction else None
    return float(props.collider_thickness), inner, friction


def evaluated_surface(
    obj: bpy.types.Object, depsgraph: bpy.types.Depsgraph | None
) -> tuple[np.ndarray, np.ndarray] | None:
    """World-space vertices ``(V, 3)`` float64 and triangles ``(T, 3)`` int64 of the
    object's evaluated mesh at this frame, or None when it has no faces."""
    src = obj.evaluated_get(depsgraph) if depsgraph is not None else obj
    try:
        mesh = src.to_mesh()
    except RuntimeError:
        return None
    try:
        if mesh is None or not len(mesh.polygons):
            return None
        mesh.calc_loop_triangles()
        count = len(mesh.vertices)
        co = np.empty(count * 3, dtype=np.float32)
        mesh.vertices.foreach_get("co", co)
        tris = np.empty(len(mesh.loop_triangles) * 3, dtype=np.int32)
        mesh.loop_triangles.foreach_get("vertices", tris)
    finally:
        src.to_mesh_clear()
    # column updates, not ``@``: a big body's (V, 3) product wakes OpenBLAS's second thread
    world = transform_points(np.array(src.matrix_world), co.reshape(-1, 3), np.float64)
    return world, tris.reshape(-1, 3).astype(np.int64)


class SurfaceColliders:
    """The colliders of a collection frame by frame, with each mesh surface's previous pose
    kept (``reset`` forgets them: the next frame starts at rest)."""

    def __init__(self) -> None:
        self._surfaces: dict[int, MeshCollider] = {}

    def reset(self) -> None:
        self._surfaces.clear()

    def colliders(
        self,
        collection: bpy.types.Collection | None,
        depsgraph: bpy.types.Depsgraph | None = None,
        exclude: bpy.types.Object | None = None,
    ) -> list:
        """Every usable collider in ``collection`` (and its children), skipping ``exclude``."""
        if collection is None:
            return []
        out: list[Collider] = []
        seen: set[int] = set()
        for obj in collection.all_objects:
            if obj is exclude or (obj.type not in SURFACE_TYPES and obj.type != "EMPTY"):
                continue
            if obj.type == "EMPTY" or _shape_choice(obj) in {"SPHERE", "PLANE"}:
                analytic = collider_for(obj, depsgraph)
                if analytic is not None:
                    out.append(analytic)
                continue
            key = int((obj.original or obj).session_uid)
            surface = self._surface(key, obj, depsgraph)
            if surface is not None:
                seen.add(key)
                out.append(surface)
        for key in set(self._surfaces) - seen:
            del self._surfaces[key]
        return out

    def _surface(
        self, key: int, obj: bpy.types.Object, depsgraph: bpy.types.Depsgraph | None
    ) -> MeshCollider | None:
        found = evaluated_surface(obj, depsgraph)
        if found is None:
            return None
        world, tris = found
        outer, inner, friction = surface_settings(obj)
        known = self._surfaces.get(key)
        if (
            known is not None
            and known.vertex_count == len(world)
            and np.array_equal(known.source_triangles, tris)
            and (known.outer, known.inner, known.friction) == (outer, inner, friction)
        ):
            known.move_to(world)
            return known
        surface = MeshCollider(world, tris, outer=outer, inner=inner, friction=friction)
        self._surfaces[key] = surface
        return surface


def colliders_from_collection(
    collection: bpy.types.Collection | None,
    depsgraph: bpy.types.Depsgraph | None = None,
    exclude: bpy.types.Object | None = None,
) -> list[Collider]:
    """This frame's colliders, each surface at rest (no previous pose): for one-off use."""
    return SurfaceColliders().colliders(collection, depsgraph, exclude)
