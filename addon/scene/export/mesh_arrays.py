"""A Blender mesh as numpy arrays (bulk ``foreach_get``), and the vertex split .X needs.

.X stores UVs and colours per vertex, Blender per corner. When a vertex's corners disagree
(UV seams), the vertex is written once per distinct corner value; ``VertexMap`` says which
Blender vertex each file vertex came from, so skin weights, cloth data and shape keys follow.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import bpy
import numpy as np


def _get(collection: object, prop: str, count: int, width: int, dtype: type) -> np.ndarray:
    out = np.empty(count * width, dtype=dtype)
    collection.foreach_get(prop, out)  # type: ignore[attr-defined]
    return out.reshape(-1, width) if width > 1 else out


@dataclass(eq=False)
class MeshArrays:
    positions: np.ndarray  # (n, 3) Blender object space
    sizes: np.ndarray  # (f,) corners per polygon
    corner_verts: np.ndarray  # (loops,)
    corner_normals: np.ndarray | None  # (loops, 3)
    uv_layers: list[tuple[str, np.ndarray]] = field(default_factory=list)  # (loops, 2) each
    colors: np.ndarray | None = None  # (n, 4) per vertex or (loops, 4) per corner
    colors_per_corner: bool = False
    material_indices: np.ndarray | None = None  # (f,)
    loose_edges: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))


def read_mesh(
    mesh: bpy.types.Mesh, want_normals: bool, want_uvs: bool, want_colors: bool
) -> MeshArrays:
    n, f, loops = len(mesh.vertices), len(mesh.polygons), len(mesh.loops)
    positions = _get(mesh.vertices, "co", n, 3, np.float32).astype(np.float64)
    sizes = _get(mesh.polygons, "loop_total", f, 1, np.int32).astype(np.int64)
    corner_verts = _get(mesh.loops, "vertex_index", loops, 1, np.int32).astype(np.int64)
    normals = None
    if want_normals and loops:
        normals = _get(mesh.corner_normals, "vector", loops, 3, np.float32).astype(np.float64)
    out = MeshArrays(positions, sizes, corner_verts, normals)
    if want_uvs:
        for layer in mesh.uv_layers:
            uv = _get(layer.uv, "vector", loops, 2, np.float32).astype(np.float64)
            out.uv_layers.append((layer.name, uv))
    if want_colors and len(mesh.color_attributes):
        attr = mesh.color_attributes.get("Color") or mesh.color_attributes[0]
        if attr.domain in ("POINT", "CORNER"):
            count = n if attr.domain == "POINT" else loops
            out.colors = _get(attr.data, "color_srgb", count, 4, np.float32).astype(np.float64)
            out.colors_per_corner = attr.domain == "CORNER"
    if f:
        out.material_indices = _get(mesh.polygons, "material_index", f, 1, np.int32).astype(
            np.int64
        )
    edge_count = len(mesh.edges)
    if edge_count:
        used = np.zeros(edge_count, dtype=bool)
        used[_get(mesh.loops, "edge_index", loops, 1, np.int32)] = True
        out.loose_edges = np.flatnonzero(~used)
    return out


@dataclass(eq=False)
class VertexMap:
    """File vertices against Blender vertices."""

    source: np.ndarray  # (file n,) Blender vertex of each file vertex
    first: np.ndarray  # (Blender n,) first file vertex of each Blender vertex
    loop_vertex: np.ndarray  # (loops,) file vertex of each Blender corner
    split: bool  # some Blender vertex became several file vertices


def _consistent(per_loop: np.ndarray, loop_vertex: np.ndarray, n: int) -> bool:
    per_vertex = np.zeros((n, per_loop.shape[1]))
    per_vertex[loop_vertex] = per_loop
    return bool(np.array_equal(per_vertex[loop_vertex], per_loop))


def vertex_map(arrays: MeshArrays) -> VertexMap:
    """Identity unless per-corner UVs/colours disagree at a vertex; then one file vertex per
    distinct (vertex, corner values), in Blender vertex order."""
    n = len(arrays.positions)
    loops = arrays.corner_verts
    corner_data = [uv for _, uv in arrays.uv_layers]
    if arrays.colors is not None and arrays.colors_per_corner:
        corner_data.append(arrays.colors)
    if all(_consistent(d, loops, n) for d in corner_data):
        identity = np.arange(n, dtype=np.int64)
        return VertexMap(identity, identity, loops, False)
    key = np.column_stack([loops.astype(np.float64), *corner_data])
    unique, inverse = np.unique(key, axis=0, return_inverse=True)
    source = unique[:, 0].astype(np.int64)
    first = np.full(n, -1, dtype=np.int64)
    first[source[::-1]] = np.arange(len(source) - 1, -1, -1)
    missing = first < 0  # vertices no face uses keep one copy at the end
    if missing.any():
        extra = np.flatnonzero(missing)
        first[extra] = len(source) + np.arange(len(extra))
        source = np.concatenate([source, extra])
    return VertexMap(source, first, inverse.reshape(-1).astype(np.int64), True)


def per_file_vertex(per_loop: np.ndarray, vmap: VertexMap) -> np.ndarray:
    """A per-corner array that is consistent per file vertex, as one row per file vertex."""
    out = np.zeros((len(vmap.source), per_loop.shape[1]))
    out[vmap.loop_vertex] = per_loop
    return out
