"""File normals -> Blender's space-relative custom normals, by the cheapest way to the same data.

Blender keeps custom normals as a corner attribute ``custom_normal`` (INT16_2D: each corner's
normal relative to its smooth fan's automatic normal, so the Armature modifier, shape keys and
other deformers carry it along; a free float ``custom_normal`` would stay at its rest
direction). ``Mesh.normals_split_custom_set`` builds it but parses its (n, 3) argument row by
row. Here, in order:

- all-zero offsets are stored when the file's normals are what Blender computes anyway: the
  smooth vertex normals, or (per corner) the face normals with the edges between differing
  faces sharp -- what Blender's own call stores then, with those same sharp edges;
- one normal per vertex (or per corner, but the same at every corner of a vertex) goes
  through ``normals_split_custom_set_from_vertices``: one row per vertex, and Blender's own
  work is less than that of the per-corner call, or of the Geometry Nodes below;
- other per-corner normals: a Geometry Nodes "Set Mesh Normal" (Tangent Space) evaluation of
  a float attribute computes the per-corner call's INT16_2D data and sharp edges (bit for
  bit) without the row parsing, and they are copied in with ``foreach_set``; the call itself
  is the fallback, and the way for small meshes.
"""

from __future__ import annotations

import math
from functools import cached_property
from typing import Any

import bpy
import numpy as np

#: largest per-component difference from Blender's automatic normal that still counts as equal;
#: Blender stores a zero (automatic) offset up to 1e-4, this stays clear of that bound
TOLERANCE = 5e-5
#: 1 - cos of the face angles bracketing Blender's fan split (1 - dot < 1e-4 stays one fan):
#: flat normals are reproduced by sharp edges only when no face angle lies in between
_SAME, _SPLIT = 1e-5, 1e-3

_INPUT = "xof_custom_normal_in"
#: below this many corners the per-corner call beats the Geometry Nodes set-up (~1.5 ms)
NODES_MIN_CORNERS = 4096


def set_custom_normals(
    mesh: bpy.types.Mesh, normals: np.ndarray, bad: np.ndarray | None, domain: str
) -> str:
    """Unit normals per loop (or per vertex, ``domain="POINT"``); ``bad`` ones keep Blender's.

    The mesh ends smooth-shaded with the custom normals (or sharp edges) Blender's
    ``normals_split_custom_set`` / ``..._from_vertices`` would give. Returns how: "smooth",
    "flat" (zero offsets, and sharp edges for "flat"), "vertices" (the per-vertex call),
    "nodes" or "call" (the per-corner call).
    """
    if bad is not None:
        auto = np.empty(len(normals) * 3, dtype=np.float32)
        source = mesh.vertex_normals if domain == "POINT" else mesh.corner_normals
        source.foreach_get("vector", auto)
        normals[bad] = auto.reshape(-1, 3)[bad]
    mesh.shade_smooth()
    values = np.ascontiguousarray(normals, dtype=np.float32).reshape(-1, 3)
    topo = _Topology(mesh)
    if _is_smooth(mesh, topo, values, domain):
        _store_offsets(mesh, np.zeros(2 * len(mesh.loops), dtype=np.int16))
        return "smooth"
    if domain == "CORNER" and _make_flat(mesh, topo, values):
        _store_offsets(mesh, np.zeros(2 * len(mesh.loops), dtype=np.int16))
        return "flat"
    if domain == "CORNER":
        per_vertex = _per_vertex(values, topo.corner_vert, len(mesh.vertices))
        if per_vertex is not None:
            values, domain = per_vertex, "POINT"
    if domain == "POINT":
        mesh.normals_split_custom_set_from_vertices(values)
        return "vertices"
    if len(values) >= NODES_MIN_CORNERS and _set_by_nodes(mesh, values):
        return "nodes"
    mesh.normals_split_custom_set(values)
    return "call"


def _per_vertex(values: np.ndarray, corner_vert: np.ndarray, n_verts: int) -> np.ndarray | None:
    """The per-vertex normals when every corner of each vertex has the same one, else None
    (vertices without corners get zero: Blender's own normal)."""
    per_vertex = np.zeros((n_verts, 3), dtype=np.float32)
    per_vertex[corner_vert] = values
    return per_vertex if np.array_equal(per_vertex[corner_vert], values) else None


class _Topology:
    """Corner vertices, face sizes, and (on demand) the edges that bound every corner fan."""

    def __init__(self, mesh: bpy.types.Mesh) -> None:
        self.mesh = mesh

    @cached_property
    def corner_vert(self) -> np.ndarray:
        return _corner_ints(self.mesh, ".corner_vert", "vertex_index", len(self.mesh.loops))

    @cached_property
    def starts(self) -> np.ndarray:
        out = np.empty(len(self.mesh.polygons), dtype=np.int32)
        self.mesh.polygons.foreach_get("loop_start", out)
        return out

    @cached_property
    def sizes(self) -> np.ndarray:
        out = np.empty(len(self.mesh.polygons), dtype=np.int32)
        self.mesh.polygons.foreach_get("loop_total", out)
        return out

    @cached_property
    def free_edges(self) -> np.ndarray:
        """Edges not shared by exactly two consistently wound faces: Blender ends fans there."""
        mesh, n = self.mesh, len(self.corner_vert)
        corner_edge = _corner_ints(mesh, ".corner_edge", "edge_index", n)
        following = np.arange(1, n + 1, dtype=np.int64)
        following[self.starts + self.sizes - 1] = self.starts  # a face's last corner -> first
        uses = np.bincount(corner_edge, minlength=len(mesh.edges))
        ahead = np.where(self.corner_vert < self.corner_vert[following], 1.0, -1.0)
        winding = np.bincount(corner_edge, weights=ahead, minlength=len(mesh.edges))
        return np.flatnonzero((uses != 2) | (winding != 0))


def _corner_ints(mesh: bpy.types.Mesh, name: str, prop: str, n: int) -> np.ndarray:
    out = np.empty(n, dtype=np.int32)
    attr: Any = mesh.attributes.get(name)
    if attr is not None:
        attr.data.foreach_get("value", out)
    else:
        mesh.loops.foreach_get(prop, out)
    return out


def _vectors(collection: object, n: int) -> np.ndarray:
    out = np.empty(n * 3, dtype=np.float32)
    collection.foreach_get("vector", out)  # type: ignore[attr-defined]
    return out.reshape(-1, 3)


def _close(a: np.ndarray, b: np.ndarray, block: int = 1 << 16) -> bool:
    """Every component within ``TOLERANCE``: a block of rows at a time (small temporaries,
    and normals that differ are usually told by the first block)."""
    if len(a) != len(b):
        return False
    for first in range(0, len(a), block):
        if not np.all(np.abs(a[first : first + block] - b[first : first + block]) <= TOLERANCE):
            return False
    return True


def _is_smooth(mesh: bpy.types.Mesh, topo: _Topology, values: np.ndarray, domain: str) -> bool:
    """Whether the normals are Blender's smooth ones (each corner's fan normal)."""
    vertex = _vectors(mesh.vertex_normals, len(mesh.vertices))
    if domain == "POINT":
        if not _close(values, vertex):
            return False
        per_corner = values[topo.corner_vert]
    else:
        per_corner = values
        if not _close(per_corner, vertex[topo.corner_vert]):
            return False
    if not len(topo.free_edges):
        return True  # one fan per vertex: fan normals are the vertex normals
    # Fans end at free edges; marking one sharp (no change to any fan) makes Blender give
    # per-fan corner normals, the ones its own custom-normal call compares against.
    before = _sharp_edges(mesh)
    flags = np.zeros(len(mesh.edges), dtype=bool) if before is None else before.copy()
    flags[topo.free_edges[0]] = True
    _set_sharp_edges(mesh, flags)
    fans = _vectors(mesh.corner_normals, len(mesh.loops))
    _set_sharp_edges(mesh, before)
    return _close(per_corner, fans)


def _make_flat(mesh: bpy.types.Mesh, topo: _Topology, values: np.ndarray) -> bool:
    """Whether the normals are the face normals; if so, the edges between faces that differ
    are made sharp (what Blender's call would mark) and True is returned."""
    faces = _vectors(mesh.polygon_normals, len(mesh.polygons))
    if not _close(values, np.repeat(faces, topo.sizes, axis=0)):
        return False
    before = _sharp_edges(mesh)
    marks = []
    for gap in (_SAME, _SPLIT):
        mesh.set_sharp_from_angle(angle=math.acos(1.0 - gap))
        marks.append(_sharp_edges(mesh))
    # the second marking is in place; the fans it leaves joined must give the face normals
    if (
        marks[0] is not None
        and marks[1] is not None
        and np.array_equal(marks[0], marks[1])
        and _close(values, _vectors(mesh.corner_normals, len(mesh.loops)))
    ):
        return True
    _set_sharp_edges(mesh, before)
    return False


def _sharp_edges(mesh: bpy.types.Mesh) -> np.ndarray | None:
    attr: Any = mesh.attributes.get("sharp_edge")
    if attr is None:
        return None
    flags = np.empty(len(mesh.edges), dtype=bool)
    attr.data.foreach_get("value", flags)
    return flags


def _set_sharp_edges(mesh: bpy.types.Mesh, flags: np.ndarray | None) -> None:
    """Set the ``sharp_edge`` attribute (removed for None)."""
    attr = mesh.attributes.get("sharp_edge")
    if flags is None:
        if attr is not None:
            mesh.attributes.remove(attr)
        return
    if attr is None:
        attr = mesh.attributes.new("sharp_edge", "BOOLEAN", "EDGE")
    attr.data.foreach_set("value", flags)  # type: ignore[attr-defined]


def _normals_tree() -> bpy.types.NodeTree:
    """Geometry -> Set Mesh Normal (Tangent Space) of the float attribute ``_INPUT``."""
    tree = bpy.data.node_groups.new("xof custom normals", "GeometryNodeTree")
    interface: Any = tree.interface
    interface.new_socket("Geometry", in_out="INPUT", socket_type="NodeSocketGeometry")
    interface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
    nodes, links = tree.nodes, tree.links
    source = nodes.new("NodeGroupInput")
    sink = nodes.new("NodeGroupOutput")
    named = nodes.new("GeometryNodeInputNamedAttribute")
    named.data_type = "FLOAT_VECTOR"  # type: ignore[attr-defined]
    named.inputs["Name"].default_value = _INPUT  # type: ignore[attr-defined]
    setter = nodes.new("GeometryNodeSetMeshNormal")
    setter.mode = "TANGENT_SPACE"  # type: ignore[attr-defined]
    setter.domain = "CORNER"  # type: ignore[attr-defined]
    links.new(source.outputs[0], setter.inputs["Mesh"])
    links.new(named.outputs["Attribute"], setter.inputs["Custom Normal"])
    links.new(setter.outputs[0], sink.inputs[0])
    return tree


def _set_by_nodes(mesh: bpy.types.Mesh, values: np.ndarray) -> bool:
    """Per-corner custom normals computed by a Geometry Nodes evaluation in a scratch scene;
    False (mesh unchanged) where that is unavailable."""
    if not hasattr(bpy.types, "GeometryNodeSetMeshNormal") or _INPUT in mesh.attributes:
        return False
    tree = scene = obj = None
    try:
        attr = mesh.attributes.new(_INPUT, "FLOAT_VECTOR", "CORNER")
        attr.data.foreach_set("vector", values.ravel())  # type: ignore[attr-defined]
        tree = _normals_tree()
        scene = bpy.data.scenes.new("xof custom normals")
        obj = bpy.data.objects.new("xof custom normals", mesh)
        scene.collection.objects.link(obj)
        modifier = obj.modifiers.new("normals", "NODES")
        modifier.node_group = tree  # type: ignore[attr-defined]
        layer: Any = scene.view_layers[0]
        layer.update()
        result: Any = obj.evaluated_get(layer.depsgraph).data
        encoded = result.attributes["custom_normal"]
        if encoded.domain != "CORNER" or encoded.data_type != "INT16_2D":
            return False
        offsets = np.empty(len(mesh.loops) * 2, dtype=np.int16)
        encoded.data.foreach_get("value", offsets)
        sharp = result.attributes.get("sharp_edge")
        flags = None
        if sharp is not None:
            flags = np.empty(len(mesh.edges), dtype=bool)
            sharp.data.foreach_get("value", flags)
    except (AttributeError, KeyError, RuntimeError, TypeError, ValueError):
        return False
    finally:
        if obj is not None:
            bpy.data.objects.remove(obj)
        if scene is not None:
            bpy.data.scenes.remove(scene)
        if tree is not None:
            bpy.data.node_groups.remove(tree)
        if _INPUT in mesh.attributes:
            mesh.attributes.remove(mesh.attributes[_INPUT])
    _store_offsets(mesh, offsets)
    if flags is not None:
        _set_sharp_edges(mesh, flags)
    return True


def _store_offsets(mesh: bpy.types.Mesh, offsets: np.ndarray) -> None:
    """Blender's custom normal offsets (two int16 per corner) as its ``custom_normal``."""
    old = mesh.attributes.get("custom_normal")
    if old is not None:
        mesh.attributes.remove(old)
    target = mesh.attributes.new("custom_normal", "INT16_2D", "CORNER")
    target.data.foreach_set("value", offsets)  # type: ignore[attr-defined]
