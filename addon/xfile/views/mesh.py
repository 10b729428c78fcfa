"""Mesh objects to :class:`MeshData`: faces, per-corner normals, UVs, colours, materials,
skin, vertex declarations. Broken indices become warnings on the mesh, never exceptions."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..document import Ragged, XObject
from ..names import fold
from .cloth import cloth_from_children
from .decl import decode_decl, decode_fvf
from .materials import material_list
from .model import MaterialData, MeshData, SkinData, SkinWeightsData
from .values import DATA_ERRORS, children_named, flat_floats, matrix16, member, ragged_parts, rows


def mesh_data(obj: XObject, materials: dict[int, MaterialData]) -> MeshData:
    warnings: list[str] = []
    positions = rows(member(obj, 1, "vertices"), 3)
    n = len(positions)
    faces = member(obj, 3, "faces")
    sizes, corners = ragged_parts(faces)
    mesh = MeshData(obj.name, positions, sizes, corners, source=obj, warnings=warnings)
    for child in obj.objects():
        kind = fold(child.template)
        try:
            if kind == "meshnormals":
                _normals(mesh, child, faces)
            elif kind == "meshtexturecoords":
                mesh.uv_sets.append(_per_vertex(rows(member(child, 1), 2), n, "UV", warnings))
            elif kind == "meshvertexcolors":
                _colors(mesh, child)
            elif kind == "meshmateriallist":
                mesh.material_indices, mesh.materials = material_list(
                    child, len(sizes), materials, warnings
                )
            elif kind == "decldata":
                mesh.decl.update(decode_decl(child, n, warnings))
            elif kind == "fvfdata":
                mesh.decl.update(decode_fvf(child, n, warnings))
        except DATA_ERRORS as exc:
            warnings.append(f"{child.template} ignored: {exc}")
    mesh.skin = _skin(obj, n, warnings)
    mesh.cloth = cloth_from_children(obj, n, warnings)
    _drop_bad_faces(mesh)
    return mesh


def _per_vertex(values: np.ndarray, n: int, what: str, warnings: list[str]) -> np.ndarray:
    if len(values) == n:
        return values
    warnings.append(f"{what}: {len(values)} entries for {n} vertices (padded/truncated)")
    out = np.zeros((n, values.shape[1]), dtype=np.float64)
    k = min(n, len(values))
    out[:k] = values[:k]
    return out


def _normals(mesh: MeshData, obj: XObject, faces: Any) -> None:
    normals = rows(member(obj, 1, "normals"), 3)
    mesh.normals = normals
    normal_faces = member(obj, 3, "faceNormals")
    if (  # the usual file: normals indexed like the vertices; the same arrays, not a copy
        isinstance(normal_faces, Ragged)
        and isinstance(faces, Ragged)
        and len(normal_faces) == len(faces)
        and np.array_equal(normal_faces.flat, faces.flat)
    ):
        sizes, corners = mesh.face_sizes, mesh.corners
    else:
        sizes, corners = ragged_parts(normal_faces)
    if len(sizes) != len(mesh.face_sizes) or not np.array_equal(sizes, mesh.face_sizes):
        mesh.warnings.append(
            f"MeshNormals: {len(sizes)} normal faces do not match the {len(mesh.face_sizes)} "
            "faces: per-corner normals ignored"
        )
        return
    if corners.size and (corners.min() < 0 or corners.max() >= len(normals)):
        mesh.warnings.append("MeshNormals: normal index out of range: per-corner normals ignored")
        return
    mesh.normal_corners = corners


def _colors(mesh: MeshData, obj: XObject) -> None:
    n = len(mesh.positions)
    table = rows(member(obj, 1, "vertexColors"), 5)
    first = table[:, 0]
    ok = np.isfinite(first) & (first >= 0) & (first < n)
    index = np.where(ok, first, 0).astype(np.int64)
    if not ok.all():
        mesh.warnings.append(f"MeshVertexColors: {int((~ok).sum())} index(es) out of range")
    colors = mesh.colors if mesh.colors is not None else np.ones((n, 4), dtype=np.float64)
    colors[index[ok]] = table[ok, 1:5]
    mesh.colors = colors


def _skin(obj: XObject, n: int, warnings: list[str]) -> SkinData | None:
    headers = children_named(obj, "XSkinMeshHeader")
    weights = children_named(obj, "SkinWeights")
    if not headers and not weights:
        return None
    skin = SkinData(None, None, None)
    if headers:
        h = headers[0]
        skin.max_weights_per_vertex = int(member(h, 0))
        skin.max_weights_per_face = int(member(h, 1))
        skin.bone_count = int(member(h, 2))
    for sw in weights:
        try:
            name = str(member(sw, 0, "transformNodeName"))
            indices = np.asarray(member(sw, 2, "vertexIndices"), dtype=np.int64).ravel()
            values = flat_floats(member(sw, 3, "weights"))
            offset = matrix16(member(sw, 4, "matrixOffset"))
        except DATA_ERRORS as exc:
            warnings.append(f"SkinWeights ignored: {exc}")
            continue
        if len(indices) != len(values):
            warnings.append(f"SkinWeights {name}: {len(indices)} indices, {len(values)} weights")
            k = min(len(indices), len(values))
            indices, values = indices[:k], values[:k]
        bad = (indices < 0) | (indices >= n)
        if bad.any():
            warnings.append(
                f"SkinWeights {name}: {int(bad.sum())} vertex index(es) out of range "
                f"0..{n - 1} dropped"
            )
            indices, values = indices[~bad], values[~bad]
        skin.weights.append(SkinWeightsData(name, indices, values, offset))
    return skin


def _drop_bad_faces(mesh: MeshData) -> None:
    """Faces naming a vertex that does not exist are dropped (with their per-face data)."""
    n = len(mesh.positions)
    corners = mesh.corners
    if corners.size == 0 or (corners.min() >= 0 and corners.max() < n):
        return
    bad_corner = (corners < 0) | (corners >= n)
    face_of_corner = np.repeat(np.arange(len(mesh.face_sizes)), mesh.face_sizes)
    bad_face = np.zeros(len(mesh.face_sizes), dtype=bool)
    bad_face[face_of_corner[bad_corner]] = True
    keep_corner = ~bad_face[face_of_corner]
    mesh.warnings.append(
        f"{int(bad_face.sum())} face(s) with a vertex index >= {n} (nVertices) dropped"
    )
    mesh.corners = corners[keep_corner]
    mesh.face_sizes = mesh.face_sizes[~bad_face]
    if mesh.normal_corners is not None:
        mesh.normal_corners = mesh.normal_corners[keep_corner]
    if mesh.material_indices is not None:
        mesh.material_indices = mesh.material_indices[~bad_face]
