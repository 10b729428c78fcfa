"""Cloth data on a mesh -> ClothMasses (the ``cloth_mass`` group) and ClothSprings (edges
marked in ``cloth_spring``), both indexing file vertices, as the importer stores them."""

from __future__ import annotations

import bpy
import numpy as np

from ...xfile.document import XObject
from ...xfile.writer import objects as xo
from ..cloth.data import (
    DAMPING_GROUP,
    MASS_GROUP,
    SPRING_ATTRIBUTE,
    STIFFNESS_GROUP,
    group_weights,
    mesh_edges,
)
from .mesh_arrays import VertexMap


def cloth_objects(
    obj: bpy.types.Object, vmap: VertexMap, warnings: list[str] | None = None
) -> list[XObject]:
    mesh = obj.data
    assert isinstance(mesh, bpy.types.Mesh)
    out: list[XObject] = []
    for group in (STIFFNESS_GROUP, DAMPING_GROUP):
        painted = group_weights(obj, group, 1.0)
        if painted is not None and warnings is not None and np.any(painted != 1.0):
            warnings.append(f"{obj.name}: vertex group {group!r} has no .X template: not written")
    masses = group_weights(obj, MASS_GROUP, 1.0)
    attr = mesh.attributes.get(SPRING_ATTRIBUTE)
    if masses is None and attr is None:
        return out
    if masses is not None:
        out.append(xo.cloth_masses(masses[vmap.source]))
    if attr is not None and attr.domain == "EDGE":
        pairs = mesh_edges(mesh)[springs_marked(mesh)]
        out.append(xo.cloth_springs(vmap.first[pairs]))
    return out


def springs_marked(mesh: bpy.types.Mesh) -> np.ndarray:
    """(edges,) True where the edge is a cloth spring (all False without the attribute)."""
    marked = np.zeros(len(mesh.edges), dtype=bool)
    attr = mesh.attributes.get(SPRING_ATTRIBUTE)
    if attr is not None and attr.domain == "EDGE":
        attr.data.foreach_get("value", marked)
    return marked
