"""One Blender mesh -> a .X Mesh: positions, faces (winding reversed by the mirror),
MeshNormals, MeshTextureCoords per UV map, MeshVertexColors, MeshMaterialList.

Exactly the importer's conversion backwards: file vertex order is Blender's (split only at
UV/colour seams, with VertexDuplicationIndices saying so), faces keep their order and
corner counts, per-corner data follows the same winding permutation.
"""

from __future__ import annotations

from concurrent.futures import Executor, Future
from dataclasses import dataclass, field

import numpy as np

from ...xfile.document import Ragged, XObject, XReference
from ...xfile.writer import objects as xo
from ..imp.convert import reversed_winding_order
from .mesh_arrays import (
    MeshArrays,
    VertexMap,
    by_file_vertex,
    corner_normals_per_vertex,
    last_corners,
    per_file_vertex,
    vertex_map,
)
from .space import FileSpace


@dataclass(eq=False)
class MeshExport:
    obj: XObject
    vmap: VertexMap
    corners: np.ndarray | None  # file_corners, or None: taken from the face table when asked
    sizes: np.ndarray
    warnings: list[str] = field(default_factory=list)

    @property
    def file_corners(self) -> np.ndarray:
        """(loops,) file vertex per file corner."""
        if self.corners is None:  # the face table of one corner count k: [k, i0..ik-1] rows
            flat = self.obj.members["faces"].flat
            rows = flat.reshape(len(self.sizes), -1)
            self.corners = np.ascontiguousarray(rows[:, 1:]).reshape(-1)
        return self.corners


def _normals_per_vertex(
    normals: np.ndarray, loop_vertex: np.ndarray, n: int, last: np.ndarray | None, space: FileSpace
) -> np.ndarray | None:
    """Corner normals as one per vertex in file space, or None (some vertex's differ)."""
    per_vertex = corner_normals_per_vertex(normals, loop_vertex, n, last)
    return None if per_vertex is None else space.directions(per_vertex, in_place=True)


def _normals(
    arrays: MeshArrays,
    space: FileSpace,
    vmap: VertexMap,
    faces: Ragged,
    early: Future[np.ndarray | None] | None = None,
) -> XObject:
    """MeshNormals on the coarsest domain that holds them: one per file vertex (indexed like
    the faces) when Blender holds them per vertex or every corner of a vertex agrees, one per
    face, or one per corner. ``early``: the per-vertex check run beside on Blender's vertices
    (:func:`_normals_per_vertex`), used when no vertex was split."""
    assert arrays.normals is not None
    sizes = arrays.sizes
    per_vertex = None
    if arrays.normals_domain == "POINT":
        per_vertex = space.directions(by_file_vertex(arrays.normals, vmap))
    elif arrays.normals_domain == "CORNER":  # custom normals: per vertex when smooth
        if early is not None and not vmap.split:
            per_vertex = early.result()
        else:
            n = len(vmap.source)
            per_vertex = _normals_per_vertex(arrays.normals, vmap.loop_vertex, n, vmap.last, space)
    if per_vertex is not None:  # indexed like the faces: share their records
        out = xo.mesh_normals(per_vertex, sizes[:0], sizes[:0])
        out.members["nFaceNormals"] = len(sizes)
        out.members["faceNormals"] = faces
        return out
    normals = space.directions(arrays.normals)
    if arrays.normals_domain == "FACE":
        per_corner = np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)
        return xo.mesh_normals(normals, sizes, per_corner)
    ordered = in_file_winding(normals, sizes)
    return xo.mesh_normals(ordered, sizes, np.arange(len(ordered), dtype=np.int64))


def winding_order(sizes: np.ndarray) -> np.ndarray:
    """:func:`..convert.reversed_winding_order`, by one reshape when every face has the same
    corner count (the common all-quads or all-triangles mesh skips the general path)."""
    sizes = np.asarray(sizes)
    if len(sizes) and sizes[0] > 0 and np.all(sizes == sizes[0]):
        k = int(sizes[0])
        columns = (k - np.arange(k)) % k  # a, d, c, b
        return np.arange(len(sizes) * k, dtype=np.int64).reshape(-1, k)[:, columns].reshape(-1)
    return reversed_winding_order(sizes)


#: faces per block of the face table (16k quads: 320 KB of records)
_FACE_BLOCK = 1 << 14


def file_faces(loop_vertex: np.ndarray, sizes: np.ndarray) -> Ragged | None:
    """The MeshFace records of a mesh whose faces all have k corners (k <= 8), straight from
    the per-corner file vertices: one column copy per corner in file winding, no file corner
    array; the bytes of ``faces(sizes, in_file_winding(loop_vertex))``. Else None."""
    sizes = np.asarray(sizes)
    count = len(sizes)
    if not count or not 0 < sizes[0] <= 8 or len(loop_vertex) != count * int(sizes[0]):
        return None
    k = int(sizes[0])
    if not np.all(sizes == k):
        return None
    table = np.empty((count, k + 1), dtype=np.int32 if loop_vertex.dtype == np.int32 else np.int64)
    rows = loop_vertex.reshape(count, k)
    columns = (k - np.arange(k)) % k  # a, d, c, b
    for start in range(0, count, _FACE_BLOCK):  # a block's rows are filled while in the cache
        part, source = table[start : start + _FACE_BLOCK], rows[start : start + _FACE_BLOCK]
        part[:, 0] = k
        for j, column in enumerate(columns):
            part[:, 1 + j] = source[:, column]
    return Ragged(table.reshape(-1), np.arange(0, count * (k + 1), k + 1))


def in_file_winding(per_corner: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Per-corner rows in file corner order: :func:`winding_order` applied, as one column
    gather of a reshape when every face has the same corner count (no index array)."""
    sizes = np.asarray(sizes)
    if len(sizes) and sizes[0] > 0 and len(per_corner) == len(sizes) * int(sizes[0]):
        k = int(sizes[0])
        if np.all(sizes == k):
            columns = (k - np.arange(k)) % k
            rows = per_corner.reshape(len(sizes), k, *per_corner.shape[1:])
            # take: a C-ordered result (rows[:, columns] is strided, its reshape a 2nd copy)
            return np.take(rows, columns, axis=1).reshape(per_corner.shape)
    return per_corner[reversed_winding_order(sizes)]


def build_mesh_object(
    name: str,
    arrays: MeshArrays,
    space: FileSpace,
    materials: list[XObject | XReference] | None,
    pool: Executor | None = None,
) -> MeshExport:
    """The Mesh object (``materials``: its MeshMaterialList's entries); with ``pool`` (a
    helper thread), the corner normals' check runs there on Blender's vertices beside the UV
    check: it is the file's own when the UVs split no vertex (else its result is dropped and
    the check redone on the file's vertices)."""
    early: Future[np.ndarray | None] | None = None
    last = None
    if pool is not None and arrays.normals is not None and arrays.normals_domain == "CORNER":
        n, loops = len(arrays.positions), arrays.corner_verts
        last = last_corners(loops, n)
        early = pool.submit(_normals_per_vertex, arrays.normals, loops, n, last, space)
    vmap = vertex_map(arrays, last)
    warnings: list[str] = []
    if vmap.split:
        warnings.append(
            f"mesh {name!r}: UV/colour seams: {len(vmap.source) - len(vmap.first)} vertices "
            "duplicated (VertexDuplicationIndices written)"
        )
    faces = file_faces(vmap.loop_vertex, arrays.sizes)
    file_corners = None if faces is not None else in_file_winding(vmap.loop_vertex, arrays.sizes)
    # in place: Blender's positions are read for this alone (a split's gather is new too)
    positions = space.positions(by_file_vertex(arrays.positions, vmap), in_place=True)
    mesh = xo.mesh(name, positions, arrays.sizes, file_corners, faces)
    children = mesh.children
    if arrays.normals is not None and len(vmap.loop_vertex):
        children.append(_normals(arrays, space, vmap, mesh.members["faces"], early))
    for _, uv in arrays.uv_layers:
        per_vertex = per_file_vertex(uv, vmap)  # a new table (never ``uv``): flipped in place
        children.append(xo.texture_coords(space.file_uvs(per_vertex, in_place=True)))
    if arrays.colors is not None:
        colors = (
            per_file_vertex(arrays.colors, vmap)
            if arrays.colors_per_corner
            else by_file_vertex(arrays.colors, vmap)
        )
        children.append(xo.vertex_colors(colors))
    if materials:  # references to top-level Materials, or the Materials themselves
        indices = arrays.material_indices
        if indices is None:
            indices = np.zeros(len(arrays.sizes), dtype=np.int64)
        indices = np.clip(indices, 0, len(materials) - 1)
        children.append(xo.material_list(indices, materials))
    if vmap.split:
        firsts = vmap.first[vmap.source]
        children.append(xo.duplication_indices(firsts, len(vmap.first)))
    return MeshExport(mesh, vmap, file_corners, arrays.sizes, warnings)
