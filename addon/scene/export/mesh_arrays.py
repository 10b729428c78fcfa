"""A Blender mesh as numpy arrays (bulk ``foreach_get``), and the vertex split .X needs.

.X stores UVs and colours per vertex, Blender per corner. When a vertex's corners disagree
(UV seams), the vertex is written once per distinct corner value; ``VertexMap`` says which
Blender vertex each file vertex came from, so skin weights, cloth data and shape keys follow.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass, field

import bpy
import numpy as np

#: corners from which a mesh's export runs some numpy work in one helper thread (the loose
#: edge scan, the corner normals' check) beside the main one: numpy lets go of the GIL
#: inside take, equal and scatters, and Blender's reads and the UV check go on meanwhile
PARALLEL_CORNERS = 1 << 16

#: corners (faces) per block of the agreement checks and the last-corner scatter: a block
#: stays in the cache (fresh whole-size temporaries cost twice the time, mostly page faults)
_BLOCK = 1 << 15


@contextlib.contextmanager
def helper_thread(corners: int) -> Iterator[Executor | None]:
    """One worker thread for a big mesh (None for a small one: a thread costs more there)."""
    if corners < PARALLEL_CORNERS:
        yield None
        return
    with ThreadPoolExecutor(1, thread_name_prefix="xof-export") as pool:
        yield pool


def _get(collection: object, prop: str, count: int, width: int, dtype: type) -> np.ndarray:
    """A bulk read."""
    out: np.ndarray = np.empty(count * width, dtype=dtype)
    collection.foreach_get(prop, out)  # type: ignore[attr-defined]
    return out.reshape(-1, width) if width > 1 else out


@dataclass(eq=False)
class MeshArrays:
    positions: np.ndarray  # (n, 3) Blender object space (file space after build_mesh_object)
    sizes: np.ndarray  # (f,) corners per polygon
    corner_verts: np.ndarray  # (loops,)
    normals: np.ndarray | None = None  # (n, 3), (f, 3) or (loops, 3) by ``normals_domain``
    normals_domain: str = "CORNER"  # POINT (smooth), FACE (flat) or CORNER (split)
    uv_layers: list[tuple[str, np.ndarray]] = field(default_factory=list)  # (loops, 2) each
    colors: np.ndarray | None = None  # (n, 4) per vertex or (loops, 4) per corner
    colors_per_corner: bool = False
    material_indices: np.ndarray | None = None  # (f,)
    #: edges no face uses, or their scan still running in a helper thread
    loose: np.ndarray | Future[np.ndarray] = field(
        default_factory=lambda: np.zeros(0, dtype=np.int64)
    )

    def loose_edges(self) -> np.ndarray:
        loose = self.loose
        return loose.result() if isinstance(loose, Future) else loose


def _attribute(mesh: bpy.types.Mesh, name: str, prop: str, count: int, dtype: type) -> np.ndarray:
    """A generic attribute's values: the fast bulk path (no per-element RNA structs)."""
    return _get(mesh.attributes[name].data, prop, count, 1, dtype)  # type: ignore[attr-defined]


def _has(mesh: bpy.types.Mesh, name: str, domain: str) -> bool:
    attr = mesh.attributes.get(name)
    return attr is not None and attr.domain == domain


def _normals(mesh: bpy.types.Mesh, n: int, f: int, loops: int) -> tuple[np.ndarray, str]:
    """Normals on the coarsest domain that holds them: per vertex when every corner of a vertex
    agrees (smooth, or custom normals per vertex), per face when flat, else per corner."""
    domain = getattr(mesh, "normals_domain", "CORNER")
    if domain == "POINT":
        return _get(mesh.vertex_normals, "vector", n, 3, np.float32), "POINT"
    if domain == "FACE":
        return _get(mesh.polygon_normals, "vector", f, 3, np.float32), "FACE"
    return _get(mesh.corner_normals, "vector", loops, 3, np.float32), "CORNER"


def _loose_edges(corner_edges: np.ndarray, edge_count: int) -> np.ndarray:
    used = np.zeros(edge_count, dtype=bool)
    used[corner_edges] = True
    return np.flatnonzero(~used)


def _sizes_from_triangles(mesh: bpy.types.Mesh, f: int, loops: int) -> np.ndarray | None:
    """Corners per face from the faces' triangles (Blender gives a face of k corners k - 2, so
    a face's size is its triangle count + 2), or None when they do not add up to ``loops``
    (faces of fewer than 3 corners). Sizes found so are never below the true ones, so equal
    sums mean equal sizes."""
    if not hasattr(mesh, "loop_triangle_polygons") or len(mesh.loop_triangles) != loops - 2 * f:
        return None  # pragma: no cover - every mesh of 4.x/5.x has them
    faces_of = _get(mesh.loop_triangle_polygons, "value", loops - 2 * f, 1, np.int32)
    k = loops // f
    if loops == k * f and k in (3, 4) and _each_face_k(faces_of, f, k):
        return np.full(f, k, dtype=np.int64)
    if len(faces_of) and (int(faces_of.min()) < 0 or int(faces_of.max()) >= f):
        return None  # pragma: no cover
    sizes = np.bincount(faces_of, minlength=f)
    sizes += 2
    return sizes if int(sizes.sum()) == loops else None


def _each_face_k(faces_of: np.ndarray, f: int, k: int) -> bool:
    """Whether the triangles' faces are ``0 .. f-1``, each ``k - 2`` times in a row (every face
    has k corners): for quads each pair of int32 as one int64, ``i * (2**32 + 1)`` (both
    halves ``i`` in either byte order); block by block, no face-long temporaries."""
    width = k - 2
    words = faces_of.view(np.int64) if width == 2 else faces_of
    factor = (1 << 32) + 1 if width == 2 else 1
    steps = np.arange(min(_BLOCK, f), dtype=np.int64) * factor
    want = np.empty_like(steps)
    same = np.empty(len(steps), dtype=bool)
    for start in range(0, f, _BLOCK):
        got = words[start : start + _BLOCK]
        np.add(steps[: len(got)], start * factor, out=want[: len(got)])
        if not np.equal(got, want[: len(got)], out=same[: len(got)]).all():
            return False
    return True


def face_sizes(mesh: bpy.types.Mesh, f: int, loops: int) -> np.ndarray:
    """(f,) int64 corners per face. ``loop_triangle_polygons`` is a bulk read (~1 ms for the
    2M triangles of 1M quads, Blender keeps them with the mesh); ``loop_start``, the fallback,
    goes through per-element RNA (~25 ms per 1M faces)."""
    if not f:
        return np.empty(0, dtype=np.int64)
    sizes = _sizes_from_triangles(mesh, f, loops)
    if sizes is not None:
        return sizes.astype(np.int64, copy=False)
    starts = _get(mesh.polygons, "loop_start", f, 1, np.int32)
    sizes = np.empty(f, dtype=np.int64)  # int32 differences straight into the int64 sizes
    np.subtract(starts[1:], starts[:-1], out=sizes[:-1])
    sizes[-1] = loops - int(starts[-1])
    return sizes


def read_mesh(
    mesh: bpy.types.Mesh,
    want_normals: bool,
    want_uvs: bool,
    want_colors: bool,
    pool: Executor | None = None,
) -> MeshArrays:
    """Everything the writer needs, read in bulk (generic attributes where Blender has them:
    ``MeshLoop`` and ``MeshPolygon`` reads go through per-element structs, far slower).
    With ``pool``, the loose edge scan runs there while the rest is read."""
    n, f, loops = len(mesh.vertices), len(mesh.polygons), len(mesh.loops)
    uv_layers = list(mesh.uv_layers) if want_uvs else []
    loose: np.ndarray | Future[np.ndarray] = np.zeros(0, dtype=np.int64)
    edge_count = len(mesh.edges)
    if edge_count:  # first: the scan (a 4-byte scatter per corner) overlaps the reads
        if _has(mesh, ".corner_edge", "CORNER"):
            corner_edges = _attribute(mesh, ".corner_edge", "value", loops, np.int32)
        else:  # pragma: no cover
            corner_edges = _get(mesh.loops, "edge_index", loops, 1, np.int32)
        if pool is not None:
            loose = pool.submit(_loose_edges, corner_edges, edge_count)
        else:
            loose = _loose_edges(corner_edges, edge_count)
    if _has(mesh, "position", "POINT"):
        position = mesh.attributes["position"]
        positions = _get(position.data, "vector", n, 3, np.float32)  # type: ignore[attr-defined]
    else:  # pragma: no cover - every mesh of 4.x/5.x has it
        positions = _get(mesh.vertices, "co", n, 3, np.float32)
    sizes = face_sizes(mesh, f, loops)
    if _has(mesh, ".corner_vert", "CORNER"):
        corner_verts = _attribute(mesh, ".corner_vert", "value", loops, np.int32)
    else:  # pragma: no cover
        corner_verts = _get(mesh.loops, "vertex_index", loops, 1, np.int32)
    out = MeshArrays(positions, sizes, corner_verts, loose=loose)  # Blender's float32/int32
    if want_normals and loops:
        out.normals, out.normals_domain = _normals(mesh, n, f, loops)
    for layer in uv_layers:
        uv = _get(layer.uv, "vector", loops, 2, np.float32)
        out.uv_layers.append((layer.name, uv))
    if want_colors and len(mesh.color_attributes):
        attr = mesh.color_attributes.get("Color") or mesh.color_attributes[0]
        if attr.domain in ("POINT", "CORNER"):
            count = n if attr.domain == "POINT" else loops
            srgb = _get(attr.data, "color_srgb", count, 4, np.float32)  # type: ignore[attr-defined]
            out.colors = srgb
            out.colors_per_corner = attr.domain == "CORNER"
    if f:
        if _has(mesh, "material_index", "FACE"):
            out.material_indices = _attribute(mesh, "material_index", "value", f, np.int32)
        else:  # every face uses slot 0
            out.material_indices = np.zeros(f, dtype=np.int64)
    return out


@dataclass(eq=False)
class VertexMap:
    """File vertices against Blender vertices."""

    source: np.ndarray  # (file n,) Blender vertex of each file vertex
    first: np.ndarray  # (Blender n,) first file vertex of each Blender vertex
    loop_vertex: np.ndarray  # (loops,) file vertex of each Blender corner
    split: bool  # some Blender vertex became several file vertices
    #: per-corner arrays already gathered per file vertex (by the no-split check)
    tables: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)
    #: (file n,) the last corner of each file vertex (-1: none), when nothing was split
    last: np.ndarray | None = None


def _words(a: np.ndarray) -> np.ndarray:
    """Rows as one item each (a float32 UV is one 8-byte word, a normal one 12-byte void):
    numpy scatters and gathers one item per row much faster than a few floats."""
    a = np.ascontiguousarray(a)
    width = a.shape[1] * a.dtype.itemsize
    if width == 8:
        return a.view(np.uint64).reshape(-1)
    return a.view(np.dtype((np.void, width))).reshape(-1)


def last_corners(loop_vertex: np.ndarray, n: int) -> np.ndarray:
    """(n,) the last corner of each vertex, -1 for vertices no face uses (int32 while the
    corners fit: half the bytes to scatter)."""
    dtype = np.int32 if len(loop_vertex) < 2**31 else np.int64
    last = np.full(n, -1, dtype=dtype)
    steps = np.arange(min(_BLOCK, len(loop_vertex)), dtype=dtype)
    values = np.empty_like(steps)
    for start in range(0, len(loop_vertex), _BLOCK):  # in order: the last corner's stays
        index = loop_vertex[start : start + _BLOCK]
        got = values[: len(index)]
        np.add(steps[: len(index)], start, out=got)  # no corner-long arange (page faults)
        last[index] = got
    return last


def _agrees(words: np.ndarray, table: np.ndarray, loop_vertex: np.ndarray, dtype: np.dtype) -> bool:
    """Whether ``table[loop_vertex] == words`` compared as ``dtype`` values, block by block
    (stops at the first block that disagrees). ``loop_vertex`` must be in range (Blender's
    corner vertices are; :func:`last_corners` raises on any beyond ``n``)."""
    back = np.empty(min(_BLOCK, len(words)), dtype=words.dtype)
    same = np.empty(back.nbytes // dtype.itemsize, dtype=bool)
    for start in range(0, len(words), _BLOCK):
        index = loop_vertex[start : start + _BLOCK]
        got = back[: len(index)]
        np.take(table, index, out=got, mode="clip")  # "raise" would buffer the output
        a, b = got.view(np.uint8).view(dtype), words[start : start + len(index)]
        equal = same[: a.size]
        np.equal(a, b.view(np.uint8).view(dtype), out=equal)
        if not equal.all():
            return False
    return True


def _per_vertex(
    per_loop: np.ndarray,
    loop_vertex: np.ndarray,
    n: int,
    exact: bool = False,
    last: np.ndarray | None = None,
) -> np.ndarray | None:
    """The per-corner rows as one row per vertex (the last corner's, unused vertices 0), or
    None when some vertex's corners disagree (compared as floats: -0 == 0, NaN != NaN; with
    ``exact``, bit for bit). ``last``: :func:`last_corners`, shared by the arrays checked."""
    if not len(per_loop):  # a mesh without faces: every vertex unused
        return np.zeros((n, *per_loop.shape[1:]), dtype=per_loop.dtype)
    words = _words(per_loop)
    if last is None:
        last = last_corners(loop_vertex, n)
    table = words.take(last)  # one gather per vertex, not one scatter per corner
    unused = last < 0
    if unused.any():
        table[unused] = np.zeros(1, dtype=words.dtype)[0]
    rows = table.view(per_loop.dtype).reshape(n, -1)
    compared = np.dtype(f"u{per_loop.dtype.itemsize}") if exact else per_loop.dtype
    return rows if _agrees(words, table, loop_vertex, compared) else None


def corner_normals_per_vertex(
    normals: np.ndarray, loop_vertex: np.ndarray, n: int, last: np.ndarray | None = None
) -> np.ndarray | None:
    """Per-corner normals as one per vertex (of ``n``, ``loop_vertex`` per corner) when every
    corner of each vertex holds the same normal, bit for bit (smooth custom normals): then
    each reads back exactly. ``last``: :func:`last_corners` of ``loop_vertex``, if made."""
    return _per_vertex(normals, loop_vertex, n, exact=True, last=last)


def vertex_map(arrays: MeshArrays, last: np.ndarray | None = None) -> VertexMap:
    """Identity unless per-corner UVs/colours disagree at a vertex; then one file vertex per
    distinct (vertex, corner values), in Blender vertex order. ``last``: :func:`last_corners`
    of the mesh's corners, if already made."""
    n = len(arrays.positions)
    loops = arrays.corner_verts
    corner_data = [uv for _, uv in arrays.uv_layers]
    if arrays.colors is not None and arrays.colors_per_corner:
        corner_data.append(arrays.colors)
    tables = []
    if last is None:
        last = last_corners(loops, n)
    for data in corner_data:
        table = _per_vertex(data, loops, n, last=last)
        if table is None:
            break
        tables.append((data, table))
    else:
        identity = np.arange(n, dtype=np.int64)
        return VertexMap(identity, identity, loops, False, tables, last)
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
    for data, table in vmap.tables:
        if data is per_loop:
            return table
    out = np.zeros((len(vmap.source), per_loop.shape[1]), dtype=per_loop.dtype)
    out[vmap.loop_vertex] = per_loop
    return out


def by_file_vertex(per_vertex: np.ndarray, vmap: VertexMap) -> np.ndarray:
    """Per-Blender-vertex rows in file vertex order (no copy when nothing was split)."""
    return per_vertex[vmap.source] if vmap.split else per_vertex
