"""MeshData -> a Blender mesh, vectorised (attribute buffers, no per-vertex Python).

Vertices are exactly the file's, in file order (cloth masses, springs, skin weights and morph
targets index them). Faces keep their corner count (n-gons stay n-gons) with the winding
reversed by the mirror. Faces Blender cannot hold (fewer than 3 corners, out-of-range or
repeated vertices) are dropped with a warning; everything else of the mesh still imports.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import bpy
import numpy as np

from ...xfile.views.model import MaterialData, MeshData, SceneData
from .convert import Conversion
from .faces import FacePlan, plan_faces
from .normals import set_custom_normals
from .options import MeshOptions


@dataclass(eq=False)
class MeshBuild:
    """A built mesh and how its faces/corners relate to the file's."""

    mesh: bpy.types.Mesh
    faces: FacePlan  # kept faces, and ``faces.per_loop`` / ``faces.loop_to_corner`` for corners
    warnings: list[str] = field(default_factory=list)


#: the largest magnitude a Blender coordinate (float32) holds
_FLOAT32_MAX = float(np.finfo(np.float32).max)


def finite_positions(scene: SceneData, scale: float = 1.0) -> list[str]:
    """Vertex positions Blender cannot hold: NaN, infinite (``1.#QNAN0``, ``1.#INF00``,
    ``1e400``) or past float32's range once scaled. Each is set to the mesh's origin, in a
    copy (the document keeps the file's values), so the mesh, its shape keys, skin and cloth
    all see the same point; one warning per mesh says how many, which, and what was done."""
    warnings: list[str] = []
    for mesh in scene.all_meshes():
        positions = np.asarray(mesh.positions, dtype=np.float64)
        if positions.ndim != 2 or not positions.size:
            continue
        with np.errstate(over="ignore", invalid="ignore"):
            # the usual case in two passes and no temporaries (NaN makes both NaN)
            low, high = float(positions.min()), float(positions.max())
            if math.isfinite(low + high) and max(-low, high) * abs(scale) <= _FLOAT32_MAX:
                continue
            ok = np.isfinite(positions).all(axis=1)
            ok &= (
                np.abs(np.where(np.isfinite(positions), positions, 0.0)).max(axis=1) * abs(scale)
                <= _FLOAT32_MAX
            )
        if ok.all():
            continue
        bad = np.flatnonzero(~ok)
        fixed = positions.copy()
        fixed[bad] = 0.0
        mesh.positions = fixed
        which = ", ".join(str(int(i)) for i in bad[:5]) + (", ..." if len(bad) > 5 else "")
        label = f"mesh {mesh.name!r}" if mesh.name else "an unnamed mesh"
        if mesh.source is not None and mesh.source.where:
            label += f" (at {mesh.source.where})"
        warnings.append(
            f"{label}: {len(bad)} vertex position(s) not finite (NaN, infinite or too large "
            f"for Blender): set to the mesh's origin (vertex {which})"
        )
    return warnings


def _set_attr(
    mesh: bpy.types.Mesh, name: str, kind: str, domain: str, prop: str, values: np.ndarray
) -> None:
    attr = mesh.attributes.get(name)
    if attr is None:
        attr = mesh.attributes.new(name, kind, domain)  # type: ignore[arg-type]
    attr.data.foreach_set(prop, np.ascontiguousarray(values).ravel())  # type: ignore[attr-defined]


def _set_topology(
    mesh: bpy.types.Mesh, positions: np.ndarray, loop_starts: np.ndarray, loops: np.ndarray
) -> None:
    mesh.vertices.add(len(positions))
    mesh.loops.add(len(loops))
    mesh.polygons.add(len(loop_starts))
    pos32 = np.ascontiguousarray(positions, dtype=np.float32)
    loops32 = np.ascontiguousarray(loops, dtype=np.int32)
    try:
        mesh.attributes["position"].data.foreach_set("vector", pos32.ravel())  # type: ignore[attr-defined]
        mesh.attributes[".corner_vert"].data.foreach_set("value", loops32)  # type: ignore[attr-defined]
    except KeyError:  # internal attribute names not exposed: the slower RNA path
        mesh.vertices.foreach_set("co", pos32.ravel())
        mesh.loops.foreach_set("vertex_index", loops32)
    mesh.polygons.foreach_set("loop_start", loop_starts)
    mesh.update(calc_edges=True)


def _unit(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """Float32 ``vectors`` made unit in place, and a mask of unusable ones (zero or
    non-finite), None if none."""
    lengths = np.sqrt(np.einsum("ij,ij->i", vectors, vectors))
    bad = ~np.isfinite(lengths) | (lengths < 1e-12)
    vectors /= np.where(bad, np.float32(1.0), lengths)[:, None]
    return vectors, (bad if bad.any() else None)


def _file_normals(
    data: MeshData, conv: Conversion, plan: FacePlan
) -> tuple[np.ndarray | None, np.ndarray | None, str, str | None]:
    """Unit Blender normals from MeshNormals (or a per-vertex DeclData normal): the normals,
    those unusable (None if all fine), their domain ("POINT" when MeshNormals index exactly
    like the faces: one normal per vertex, no per-loop copy), or why there are none."""
    n_verts = len(data.positions)
    if data.normals is not None and data.normal_corners is not None:
        normals = np.asarray(data.normals, dtype=np.float64).reshape(-1, 3)
        idx = np.asarray(data.normal_corners, dtype=np.int64).ravel()
        if len(idx) != len(data.corners):
            msg = "MeshNormals face count differs from the mesh's: normals ignored"
            return None, None, "CORNER", msg
        if len(idx) and (int(idx.min()) < 0 or int(idx.max()) >= len(normals)):
            return None, None, "CORNER", "MeshNormals index out of range: normals ignored"
        unit, bad = _unit(conv.directions(normals, single=True))
        same = data.normal_corners is data.corners or np.array_equal(idx, data.corners)
        if len(normals) == n_verts and same:
            return unit, bad, "POINT", None
        per_loop = plan.per_loop(idx)
        return unit[per_loop], (bad[per_loop] if bad is not None else None), "CORNER", None
    per_vertex = data.decl.get("normal")
    if per_vertex is None:
        return None, None, "CORNER", None
    normals = np.asarray(per_vertex, dtype=np.float64)
    if normals.ndim != 2 or normals.shape[0] != n_verts or normals.shape[1] < 3:
        return None, None, "CORNER", f"DeclData normals have shape {normals.shape}: ignored"
    unit, bad = _unit(conv.directions(normals[:, :3], single=True))
    return unit, bad, "POINT", None


def _finite_uvs(values: np.ndarray, label: str) -> list[str]:
    """Set the vertices' UVs ``(V, 2)`` that are not finite (NaN, infinite, or past float32)
    to (0, 0) in place; a warning saying how many and which, or none."""
    bad = np.flatnonzero(~np.isfinite(values).all(axis=1))
    if not bad.size:
        return []
    values[bad] = 0.0
    which = ", ".join(str(int(i)) for i in bad[:5]) + (", ..." if len(bad) > 5 else "")
    return [
        f"{label}: {len(bad)} UV(s) not finite (NaN, infinite or too large): set to (0, 0) "
        f"(vertex {which})"
    ]


def _uv_sets(data: MeshData) -> list[np.ndarray]:
    """Every per-vertex UV set: MeshTextureCoords, then DeclData texture coordinates."""
    sets = [np.asarray(uv, dtype=np.float64) for uv in data.uv_sets]
    for key in sorted(k for k in data.decl if k.startswith("texcoord")):
        arr = np.asarray(data.decl[key], dtype=np.float64)
        if not any(arr.shape == s.shape and np.array_equal(arr, s) for s in sets):
            sets.append(arr)
    return sets


def build_mesh(
    data: MeshData,
    conv: Conversion,
    name: str,
    options: MeshOptions | None = None,
    material_for: Callable[[MaterialData], bpy.types.Material] | None = None,
) -> MeshBuild:
    """A new mesh datablock for ``data`` (Blender space, via ``conv``)."""
    options = options or MeshOptions()
    warnings: list[str] = []
    label = data.name or name
    positions = np.asarray(data.positions, dtype=np.float64).reshape(-1, 3)
    n_verts = len(positions)
    sizes = np.asarray(data.face_sizes, dtype=np.int64).ravel()
    corners = np.asarray(data.corners, dtype=np.int64).ravel()
    if int(sizes.sum()) != len(corners):
        raise ValueError(
            f"mesh {label!r}: face sizes add up to {int(sizes.sum())}, not {len(corners)}"
        )

    plan = plan_faces(sizes, corners, n_verts)
    warnings += [f"mesh {label!r}: {note}" for note in plan.notes]
    small = n_verts < 2**31 - 1
    corners_b = plan.per_loop(corners.astype(np.int32) if small else corners)

    mesh = bpy.data.meshes.new(name)
    try:
        _set_topology(mesh, conv.positions(positions, single=True), plan.loop_starts(), corners_b)
        if data.name is not None:
            mesh["xof_name"] = data.name

        normals, bad, domain, why = None, None, "CORNER", None
        if options.use_custom_normals:
            normals, bad, domain, why = _file_normals(data, conv, plan)
        if why:
            warnings.append(f"mesh {label!r}: {why}")
        if normals is not None and len(normals):
            set_custom_normals(mesh, normals, bad, domain)
        elif options.shading == "FLAT":
            mesh.shade_flat()
        else:
            mesh.shade_smooth()

        if options.use_uvs:
            for i, uv in enumerate(_uv_sets(data)):
                if uv.ndim != 2 or uv.shape != (n_verts, 2):
                    warnings.append(f"mesh {label!r}: UV set {i} has shape {uv.shape}: skipped")
                    continue
                layer = mesh.uv_layers.new(name="UVMap" if i == 0 else f"UVMap.{i:03d}")
                if layer is None:  # Blender holds at most 8 UV maps
                    warnings.append(f"mesh {label!r}: UV sets past Blender's 8: skipped")
                    break
                values = conv.uvs(uv, single=True)
                warnings += _finite_uvs(values, f"mesh {label!r}: UV set {i}")
                _set_attr(mesh, layer.name, "FLOAT2", "CORNER", "vector", values[corners_b])

        if options.use_colors and data.colors is not None:
            colors = np.asarray(data.colors, dtype=np.float64)
            if colors.shape == (n_verts, 4):
                attr = mesh.color_attributes.new("Color", "BYTE_COLOR", "POINT")
                values = np.clip(colors, 0.0, 1.0).astype(np.float32).ravel()
                attr.data.foreach_set("color_srgb", values)  # type: ignore[attr-defined]
            else:
                warnings.append(
                    f"mesh {label!r}: vertex colours have shape {colors.shape}: skipped"
                )

        if options.use_materials and material_for is not None and data.materials:
            for mat_data in data.materials:
                mesh.materials.append(material_for(mat_data))
            if data.material_indices is not None:
                idx = np.asarray(data.material_indices, dtype=np.int64).ravel()
                if len(idx) != len(sizes):
                    warnings.append(
                        f"mesh {label!r}: {len(idx)} material indices for {len(sizes)} faces"
                    )
                    idx = np.resize(idx, len(sizes)) if len(idx) else np.zeros(len(sizes), np.int64)
                idx = idx[plan.kept]
                bad = (idx < 0) | (idx >= len(data.materials))
                if bad.any():
                    warnings.append(
                        f"mesh {label!r}: {int(bad.sum())} material indices out of range (set to 0)"
                    )
                    idx = np.where(bad, 0, idx)
                _set_attr(mesh, "material_index", "INT", "FACE", "value", idx.astype(np.int32))

        if options.use_uvs and options.use_materials and not len(mesh.uv_layers):
            warnings += _first_texel_uvs(mesh, data, label)
        _set_duplication_indices(mesh, data)
        warnings += _set_decl_attributes(mesh, data, conv, options, label)
        mesh.update()
    except BaseException:
        bpy.data.meshes.remove(mesh)
        raise
    return MeshBuild(mesh, plan, warnings)


def _first_texel_uvs(mesh: bpy.types.Mesh, data: MeshData, label: str) -> list[str]:
    """A mesh without texture coordinates whose material has a texture: D3D samples texel
    (0, 0) everywhere; a UV map at that texel's centre (top left) shows the same colour."""
    textured = [m for m in data.materials if m.texture]
    if not textured or not len(mesh.loops):
        return []
    width = height = 0
    for mat in mesh.materials:
        tree = mat.node_tree if mat is not None else None
        for node in tree.nodes if tree is not None else []:
            image = getattr(node, "image", None)
            if node.type == "TEX_IMAGE" and image is not None and image.size[0] > 0:
                width, height = int(image.size[0]), int(image.size[1])
                break
        if width:
            break
    u = 0.5 / width if width else 0.0
    v = 1.0 - 0.5 / height if height else 1.0
    layer = mesh.uv_layers.new(name="UVMap")
    uv = np.tile(np.array([u, v], dtype=np.float32), len(mesh.loops))
    _set_attr(mesh, layer.name, "FLOAT2", "CORNER", "vector", uv)
    name = textured[0].name
    which = f"material {name!r}" if name else "an unnamed material"
    return [
        f"mesh {label!r}: no texture coordinates, but {which} has a "
        "texture: every corner shows its first texel, as in D3D (a UV map at that texel)"
    ]


#: DeclData per-vertex directions, converted like normals
_DIRECTION_KEYS = ("tangent", "binormal")
#: attribute type and value property by number of components
_ATTR_KINDS = {1: ("FLOAT", "value"), 2: ("FLOAT2", "vector"), 3: ("FLOAT_VECTOR", "vector"),
               4: ("FLOAT_COLOR", "color")}  # fmt: skip


def _set_decl_attributes(
    mesh: bpy.types.Mesh, data: MeshData, conv: Conversion, options: MeshOptions, label: str
) -> list[str]:
    """DeclData/FVFData beyond normals and UVs: colours, tangents, anything else, per vertex.

    Colours become colour attributes (``Color`` when the mesh has none from
    MeshVertexColors); the rest generic point attributes ``xof_<usage>`` (directions mirrored).
    """
    notes: list[str] = []
    n = len(mesh.vertices)
    for key in sorted(data.decl):
        if key == "normal" or key.startswith("texcoord"):
            continue  # used as custom normals / UV maps
        arr = np.asarray(data.decl[key], dtype=np.float64)
        if arr.ndim == 1:
            arr = arr[:, None]
        if arr.ndim != 2 or arr.shape[0] != n or arr.shape[1] not in _ATTR_KINDS:
            notes.append(f"mesh {label!r}: DeclData {key!r} has shape {arr.shape}: skipped")
            continue
        if key.startswith("color"):
            if not options.use_colors:
                continue
            rgba = np.c_[arr, np.ones((n, 4 - arr.shape[1]))] if arr.shape[1] < 4 else arr
            if data.colors is not None and np.allclose(rgba, data.colors, atol=1 / 255):
                continue
            name = "Color" if "Color" not in mesh.color_attributes else f"Color.{key}"
            attr = mesh.color_attributes.new(name, "BYTE_COLOR", "POINT")
            values = np.clip(rgba, 0.0, 1.0).astype(np.float32).ravel()
            attr.data.foreach_set("color_srgb", values)  # type: ignore[attr-defined]
            continue
        if key in _DIRECTION_KEYS and arr.shape[1] >= 3:
            arr = np.c_[conv.directions(arr[:, :3]), arr[:, 3:]]
        kind, prop = _ATTR_KINDS[arr.shape[1]]
        _set_attr(mesh, f"xof_{key}", kind, "POINT", prop, arr.astype(np.float32))
    return notes


def _set_duplication_indices(mesh: bpy.types.Mesh, data: MeshData) -> None:
    """VertexDuplicationIndices as a point attribute: lossless, and free to carry around."""
    if data.source is None:
        return
    for child in data.source.objects("VertexDuplicationIndices"):
        try:  # a file-declared template may make these records (dicts): not usable
            values = np.asarray(child.get("indices", []), dtype=np.int64).ravel()
        except (TypeError, ValueError, OverflowError):
            return
        if len(values) == len(mesh.vertices):
            _set_attr(
                mesh, "xof_duplication_index", "INT", "POINT", "value", values.astype(np.int32)
            )
            original = child.get("nOriginalVertices", len(values))
            # an ID property holds a C int; a file-declared template may make it anything
            if isinstance(original, (int, np.integer)) and 0 <= original < 2**31:
                mesh["xof_original_vertices"] = int(original)
        return
