"""Cloth data kept on a Blender mesh, Blender-native so the user sees and edits it.

Import side: a file's ClothMasses become the vertex group ``cloth_mass`` (weight = mass,
0 = pinned) and its pins the group ``cloth_pin`` (weight 1 = pinned, Blender's Cloth
convention), its ClothSprings a boolean edge attribute ``cloth_spring`` (springs that are not
face edges are added as loose edges, marked the same way), and the paintable per-vertex scales
``cloth_stiffness`` / ``cloth_damping`` vertex groups. Everything is plain mesh data, so it
survives saving and reopening the .blend.

Read side: ``read_cloth_inputs`` turns a mesh (imported or not) back into the arrays a
``ClothModel`` needs. Vertices outside a group take the default (mass 1, scale 1).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

import numpy as np

from ...sim import SpringKind, bend_springs, face_edges, merge_with_kinds, shear_springs
from ...xfile.views.model import ClothData

if TYPE_CHECKING:
    import bpy

MASS_GROUP = "cloth_mass"
STIFFNESS_GROUP = "cloth_stiffness"
DAMPING_GROUP = "cloth_damping"
SPRING_ATTRIBUTE = "cloth_spring"
PIN_GROUP = "cloth_pin"  # Blender's Cloth convention: weight 1 = pinned (mass 0)
REST_ATTRIBUTE = "cloth_rest"  # older versions' copy of the rest shape (see restore_legacy_rest)


# -- reading raw mesh arrays --------------------------------------------------------------------


def mesh_of(obj: bpy.types.Object) -> bpy.types.Mesh:
    """The object's mesh (only mesh objects carry cloth data)."""
    return cast("bpy.types.Mesh", obj.data)


def mesh_positions(mesh: bpy.types.Mesh) -> np.ndarray:
    """Object-space vertex positions ``(N, 3)`` float32."""
    if not len(mesh.vertices):  # an empty mesh has no position attribute
        return np.empty((0, 3), dtype=np.float32)
    out = np.empty(len(mesh.vertices) * 3, dtype=np.float32)
    position = cast("bpy.types.FloatVectorAttribute", mesh.attributes["position"])
    position.data.foreach_get("vector", out)
    return out.reshape(-1, 3)


def mesh_faces(mesh: bpy.types.Mesh) -> tuple[np.ndarray, np.ndarray]:
    """Face sizes ``(F,)`` and corner vertex indices ``(sum sizes,)`` as int64."""
    sizes = np.empty(len(mesh.polygons), dtype=np.int32)
    mesh.polygons.foreach_get("loop_total", sizes)
    corners = np.empty(len(mesh.loops), dtype=np.int32)
    mesh.loops.foreach_get("vertex_index", corners)
    return sizes.astype(np.int64), corners.astype(np.int64)


def mesh_edges(mesh: bpy.types.Mesh) -> np.ndarray:
    """Edge vertex pairs ``(E, 2)`` int64."""
    out = np.empty(len(mesh.edges) * 2, dtype=np.int32)
    mesh.edges.foreach_get("vertices", out)
    return out.astype(np.int64).reshape(-1, 2)


def _keys(pairs: np.ndarray, n: int) -> np.ndarray:
    return np.minimum(pairs[:, 0], pairs[:, 1]) * n + np.maximum(pairs[:, 0], pairs[:, 1])


def group_weights(obj: bpy.types.Object, name: str, default: float) -> np.ndarray | None:
    """Per-vertex weights of group ``name`` (``default`` outside it), or None without it."""
    return groups_weights(obj, [name], default)[0]


def groups_weights(
    obj: bpy.types.Object, names: list[str], default: float
) -> list[np.ndarray | None]:
    """``group_weights`` of several groups in one walk over the vertices (the Python API
    has no bulk read of vertex-group weights, so the walk is done once, not per group)."""
    n = len(mesh_of(obj).vertices)
    tables: dict[int, np.ndarray] = {}  # group index -> weights
    for name in names:
        group = obj.vertex_groups.get(name) if name else None
        if group is not None and group.index not in tables:
            tables[group.index] = np.full(n, default, dtype=np.float64)
    if tables:
        for vert in mesh_of(obj).vertices:
            for elem in vert.groups:
                table = tables.get(elem.group)
                if table is not None:
                    table[vert.index] = elem.weight
    out: list[np.ndarray | None] = []
    for name in names:
        group = obj.vertex_groups.get(name) if name else None
        out.append(None if group is None else tables[group.index].copy())
    return out


def set_group_weights(
    obj: bpy.types.Object, name: str, weights: np.ndarray
) -> bpy.types.VertexGroup:
    """Create or refill vertex group ``name`` with one weight per vertex."""
    group = obj.vertex_groups.get(name) or obj.vertex_groups.new(name=name)
    values = np.asarray(weights, dtype=np.float64).reshape(-1)
    unique, inverse = np.unique(values, return_inverse=True)
    for k, value in enumerate(unique.tolist()):
        group.add(np.flatnonzero(inverse == k).tolist(), float(value), "REPLACE")
    return group


def set_pin_group(obj: bpy.types.Object, masses: np.ndarray) -> bpy.types.VertexGroup:
    """``cloth_pin``: the points of mass 0 at weight 1, for Blender's own Cloth pin group."""
    group = obj.vertex_groups.get(PIN_GROUP) or obj.vertex_groups.new(name=PIN_GROUP)
    group.remove(list(range(len(mesh_of(obj).vertices))))
    pinned = np.flatnonzero(np.asarray(masses).reshape(-1) <= 0.0)
    if pinned.size:
        group.add(pinned.tolist(), 1.0, "REPLACE")
    return group


# -- import side --------------------------------------------------------------------------------


def apply_cloth_data(
    obj: bpy.types.Object, cloth: ClothData | None, vertex_map: np.ndarray | None = None
) -> list[str]:
    """Store a file's cloth data on ``obj``'s mesh; returns warnings.

    ``vertex_map[i]`` is the Blender vertex of file vertex ``i`` (identity when None: the
    importer keeps the file's vertex order). Without ClothMasses every vertex gets mass 1;
    without ClothSprings every face edge is a spring.
    """
    mesh = mesh_of(obj)
    n = len(mesh.vertices)
    warnings: list[str] = []
    vmap = np.arange(n, dtype=np.int64) if vertex_map is None else np.asarray(vertex_map)
    masses = np.ones(n, dtype=np.float64)
    if cloth is not None and cloth.masses is not None:
        file_masses = np.asarray(cloth.masses, dtype=np.float64).reshape(-1)
        if file_masses.size != vmap.size:
            warnings.append(
                f"ClothMasses has {file_masses.size} values for {vmap.size} vertices: ignored"
            )
        else:
            bad = ~np.isfinite(file_masses) | (file_masses < 0)
            if bad.any():
                warnings.append(f"{int(bad.sum())} negative or non-finite masses: pinned")
                file_masses[bad] = 0.0
            if (file_masses > 1.0).any():
                warnings.append("masses above 1 clamped to 1 (vertex group weights are 0..1)")
            masses[vmap] = np.clip(file_masses, 0.0, 1.0)
    set_group_weights(obj, MASS_GROUP, masses)
    set_pin_group(obj, masses)
    for name in (STIFFNESS_GROUP, DAMPING_GROUP):
        set_group_weights(obj, name, np.ones(n))
    springs = None if cloth is None or cloth.springs is None else np.asarray(cloth.springs)
    if springs is not None:
        springs = vmap[_valid_pairs(springs.reshape(-1, 2), vmap.size, warnings)]
    warnings.extend(mark_springs(mesh, springs))
    return warnings


def _valid_pairs(pairs: np.ndarray, n: int, warnings: list[str]) -> np.ndarray:
    pairs = pairs.astype(np.int64)
    ok = (pairs >= 0).all(axis=1) & (pairs < n).all(axis=1) & (pairs[:, 0] != pairs[:, 1])
    if not ok.all():
        warnings.append(f"{int((~ok).sum())} ClothSprings out of range or self-joined: dropped")
    return pairs[ok]


def mark_springs(mesh: bpy.types.Mesh, springs: np.ndarray | None) -> list[str]:
    """Mark spring edges in ``cloth_spring``; add loose edges for springs that are not edges.

    ``springs`` None marks every face edge. Duplicate springs collapse into one edge.
    """
    n = len(mesh.vertices)
    edges = mesh_edges(mesh)
    edge_keys = _keys(edges, n)
    if springs is None:
        sizes, corners = mesh_faces(mesh)
        wanted = _keys(face_edges(sizes, corners, n), n)
        added = np.empty(0, dtype=np.int64)
    else:
        wanted = np.unique(_keys(np.asarray(springs, dtype=np.int64).reshape(-1, 2), n))
        added = wanted[~np.isin(wanted, edge_keys)]
    if added.size:
        old = len(mesh.edges)
        mesh.edges.add(int(added.size))
        new_edges = np.concatenate([edges, np.stack([added // n, added % n], axis=1)])
        mesh.edges.foreach_set("vertices", new_edges.astype(np.int32).ravel())
        edge_keys = np.concatenate([edge_keys, added])
        assert len(mesh.edges) == old + added.size
    marked = np.isin(edge_keys, wanted)
    attr = mesh.attributes.get(SPRING_ATTRIBUTE)
    if attr is None or attr.domain != "EDGE" or attr.data_type != "BOOLEAN":
        if attr is not None:
            mesh.attributes.remove(attr)
        attr = mesh.attributes.new(SPRING_ATTRIBUTE, "BOOLEAN", "EDGE")
    cast("bpy.types.BoolAttribute", attr).data.foreach_set("value", marked)
    mesh.update()
    return []


# -- read side ----------------------------------------------------------------------------------


@dataclass
class ClothInputs:
    """What a ClothModel is built from, read off a mesh (object space)."""

    rest: np.ndarray  # (N, 3) float64
    masses: np.ndarray  # (N,)
    springs: np.ndarray  # (S, 2) int64
    kinds: np.ndarray  # (S,) uint8 SpringKind
    stiffness_scale: np.ndarray | None
    damping_scale: np.ndarray | None
    warnings: list[str] = field(default_factory=list)
    face_sizes: np.ndarray | None = None  # (F,) corners per face, for the face wind
    face_corners: np.ndarray | None = None  # (C,) vertex per corner


def rest_positions(obj: bpy.types.Object) -> np.ndarray:
    """The object-space rest shape: the mesh itself (playback never writes it)."""
    restore_legacy_rest(mesh_of(obj))
    return mesh_positions(mesh_of(obj))


def restore_legacy_rest(mesh: bpy.types.Mesh) -> bool:
    """Files saved by versions that wrote the simulation into the mesh keep the rest shape in
    ``cloth_rest`` and a simulated frame in ``position``: put the rest shape back (once)."""
    attr = mesh.attributes.get(REST_ATTRIBUTE)
    if attr is None:
        return False
    n = len(mesh.vertices)
    if attr.domain == "POINT" and attr.data_type == "FLOAT_VECTOR" and len(attr.data) == n:
        rest = np.empty(n * 3, dtype=np.float32)
        attr.data.foreach_get("vector", rest)
        mesh.attributes["position"].data.foreach_set("vector", rest)
    mesh.attributes.remove(mesh.attributes[REST_ATTRIBUTE])
    mesh.update()
    return True


def spring_edges(mesh: bpy.types.Mesh, source: str) -> np.ndarray:
    """Structural springs: marked edges (``'FILE'``) or unique face edges (``'FACE_EDGES'``).

    ``'FILE'`` falls back to face edges when the mesh has no ``cloth_spring`` attribute.
    """
    attr = mesh.attributes.get(SPRING_ATTRIBUTE)
    if source == "FILE" and attr is not None and attr.domain == "EDGE":
        marked = np.zeros(len(mesh.edges), dtype=bool)
        attr.data.foreach_get("value", marked)
        return mesh_edges(mesh)[marked]
    sizes, corners = mesh_faces(mesh)
    return face_edges(sizes, corners, len(mesh.vertices))


def read_cloth_inputs(
    obj: bpy.types.Object,
    *,
    springs_source: str = "FILE",
    use_shear: bool = False,
    use_bend: bool = False,
    mass_group: str = MASS_GROUP,
) -> ClothInputs:
    """Everything a ClothModel needs from ``obj``'s mesh (see the module docstring)."""
    mesh = mesh_of(obj)
    n = len(mesh.vertices)
    rest = rest_positions(obj).astype(np.float64)
    masses, stiffness_scale, damping_scale = groups_weights(
        obj, [mass_group, STIFFNESS_GROUP, DAMPING_GROUP], 1.0
    )
    structural = spring_edges(mesh, springs_source)
    parts: list[np.ndarray] = [structural]
    kinds: list[int] = [int(SpringKind.STRUCTURAL)]
    if use_shear or use_bend:
        sizes, corners = mesh_faces(mesh)
        if use_shear:
            parts.append(shear_springs(sizes, corners, n))
            kinds.append(int(SpringKind.SHEAR))
        if use_bend:  # a non-finite rest point is measured where the model holds it
            held = np.where(np.isfinite(rest).all(axis=1)[:, None], rest, 0.0)
            parts.append(bend_springs(sizes, corners, held, exclude=structural))
            kinds.append(int(SpringKind.BEND))
    springs, source = merge_with_kinds(*parts)
    kind_of_source = np.asarray(kinds, dtype=np.uint8)
    face_sizes, face_corners = mesh_faces(mesh)
    return ClothInputs(
        rest=rest,
        masses=np.ones(n) if masses is None else masses,
        springs=springs,
        kinds=kind_of_source[source] if source.size else np.empty(0, dtype=np.uint8),
        stiffness_scale=stiffness_scale,
        damping_scale=damping_scale,
        face_sizes=face_sizes,
        face_corners=face_corners,
    )
