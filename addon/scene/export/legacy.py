"""The Legacy compatibility mode: what readers stricter than D3DX need.

Old engines (OpenBVE/BVE, GameGuru, OMSI, Irrlicht-based ones) load ``xof 0302`` files with
Microsoft's standard templates only, triangles, at most four skin weights a vertex and
ASCII names. Here: the fan triangulation of the mesh arrays (per-corner data follows its
corners, per-face data is repeated) and the four-strongest-weights rule.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .mesh_arrays import MeshArrays

D3DX9 = "D3DX9"
LEGACY = "LEGACY"
COMPATIBILITY = (D3DX9, LEGACY)
#: skin weights a vertex keeps in Legacy files (fixed-function and early shader skinning)
MAX_WEIGHTS = 4


def fan_corners(sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(corners (3t,), faces (t,))``: the corner indices of each polygon's triangle fan
    ``(0, i, i + 1)`` in Blender's order (the winding kept) and the polygon of each triangle."""
    sizes = np.asarray(sizes, dtype=np.int64)
    starts = np.zeros(len(sizes), dtype=np.int64)
    if len(sizes) > 1:
        np.cumsum(sizes[:-1], out=starts[1:])
    per_face = np.maximum(sizes - 2, 0)
    face = np.repeat(np.arange(len(sizes)), per_face)
    first = np.zeros(len(sizes), dtype=np.int64)
    if len(sizes) > 1:
        np.cumsum(per_face[:-1], out=first[1:])
    i = np.arange(len(face)) - first[face] + 1  # 1 .. k-2 within each polygon
    base = starts[face]
    corners = np.column_stack([base, base + i, base + i + 1]).reshape(-1)
    return corners, face


def triangulate(arrays: MeshArrays) -> tuple[MeshArrays, int]:
    """The mesh as triangles, and how many polygons had more than three corners."""
    sizes = np.asarray(arrays.sizes)
    bigger = int(np.count_nonzero(sizes > 3))
    if not bigger:
        return arrays, 0
    corners, face = fan_corners(sizes)
    normals = arrays.normals
    if normals is not None:
        if arrays.normals_domain == "CORNER":
            normals = normals[corners]
        elif arrays.normals_domain == "FACE":
            normals = normals[face]
    colors = arrays.colors
    if colors is not None and arrays.colors_per_corner:
        colors = colors[corners]
    out = replace(
        arrays,
        sizes=np.full(len(face), 3, dtype=np.int64),
        corner_verts=arrays.corner_verts[corners],
        normals=normals,
        uv_layers=[(name, uv[corners]) for name, uv in arrays.uv_layers],
        colors=colors,
        material_indices=(
            arrays.material_indices[face] if arrays.material_indices is not None else None
        ),
    )
    return out, bigger


def strongest_weights(
    entries: list[tuple[np.ndarray, np.ndarray]], n_vertices: int, limit: int = MAX_WEIGHTS
) -> tuple[list[tuple[np.ndarray, np.ndarray]], int]:
    """Each vertex's ``limit`` strongest weights, scaled to the vertex's old sum; entries are
    ``(vertex indices, weights)`` per bone. Returns the new entries and how many vertices
    had more."""
    if not entries:
        return entries, 0
    vertex = np.concatenate([idx for idx, _ in entries]).astype(np.int64)
    weight = np.concatenate([w for _, w in entries]).astype(np.float64)
    bone = np.repeat(np.arange(len(entries)), [len(idx) for idx, _ in entries])
    order = np.lexsort((-weight, vertex))  # by vertex, strongest first
    ranked = np.empty(len(order), dtype=np.int64)
    starts = np.searchsorted(vertex[order], vertex[order], side="left")
    ranked[order] = np.arange(len(order)) - starts
    counts = np.bincount(vertex, minlength=n_vertices)
    over = int(np.count_nonzero(counts > limit))
    if not over:
        return entries, 0
    keep = ranked < limit
    total = np.bincount(vertex, weights=weight, minlength=n_vertices)
    kept = np.bincount(vertex[keep], weights=weight[keep], minlength=n_vertices)
    scale = np.divide(total, kept, out=np.ones(n_vertices), where=kept > 0)
    weight = weight * scale[vertex]
    out = []
    for b in range(len(entries)):
        mine = keep & (bone == b)
        out.append((vertex[mine], weight[mine]))
    return out, over
