"""Cloth data on a mesh -> ClothMasses (the ``cloth_mass`` group) and ClothSprings (edges
marked in ``cloth_spring``), both indexing file vertices, as the importer stores them."""

from __future__ import annotations

import bpy
import numpy as np

from ...xfile.document import XObject
from ...xfile.writer import objects as xo
from ..cloth_data import MASS_GROUP, SPRING_ATTRIBUTE, group_weights, mesh_edges
from .mesh_arrays import VertexMap


def cloth_objects(obj: bpy.types.Object, vmap: VertexMap) -> list[XObject]:
    mesh = obj.data
    assert isinstance(mesh, bpy.types.Mesh)
    out: list[XObject] = []
    masses = group_weights(obj, MASS_GROUP, 1.0)
    attr = mesh.attributes.get(SPRING_ATTRIBUTE)
    if masses is None and attr is None:
        return out
    if masses is not None:
        out.append(xo.cloth_masses(masses[vmap.source]))
    if attr is not None and attr.domain == "EDGE":
        marked = np.zeros(len(mesh.edges), dtype=bool)
        attr.data.foreach_get("value", marked)  # type: ignore[attr-defined]
        pairs = mesh_edges(mesh)[marked]
        out.append(xo.cloth_springs(vmap.first[pairs]))
    return out
