"""Solver colliders from the Blender objects in a collider collection.

A flat object (one dimension near zero: a plane mesh, a flattened cube) is a ``Plane``
through its centre with its flat axis as the normal; anything else is a ``Sphere`` centred on
its bounding box with radius = its largest dimension / 2 (what an ico or UV sphere's
``dimensions / 2`` gives). Empties: 'SPHERE' display = sphere of the displayed size, other
displays = the XY plane of the empty. Transforms are read as evaluated for this frame.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...sim.colliders import Plane, Sphere

FLAT_RATIO = 1e-3  # a dimension below this fraction of the largest one counts as flat


def _matrix(obj: Any, depsgraph: Any) -> np.ndarray:
    src = obj.evaluated_get(depsgraph) if depsgraph is not None else obj
    return np.array(src.matrix_world, dtype=np.float64)


def collider_for(obj: Any, depsgraph: Any = None) -> Sphere | Plane | None:
    """The collider an object stands for, or None (e.g. a zero-size object)."""
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
    flat = int(np.argmin(dims))
    if dims[flat] <= FLAT_RATIO * dims.max():
        normal = axes[:, flat]
        return Plane(centre[:3], normal) if np.linalg.norm(normal) > 1e-12 else None
    return Sphere(centre[:3], float(dims.max() / 2.0))


def colliders_from_collection(
    collection: Any, depsgraph: Any = None, exclude: Any = None
) -> list[Sphere | Plane]:
    """Every usable collider in ``collection`` (and its children), skipping ``exclude``."""
    if collection is None:
        return []
    out: list[Sphere | Plane] = []
    for obj in collection.all_objects:
        if obj is exclude or obj.type not in {"MESH", "EMPTY", "CURVE", "SURFACE", "META"}:
            continue
        collider = collider_for(obj, depsgraph)
        if collider is not None:
            out.append(collider)
    return out
