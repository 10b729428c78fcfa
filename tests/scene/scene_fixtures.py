"""Shared helpers of the import tests: a clean Blender, hand-made SceneData, tiny .X writers.

Expected values in the tests are computed here with plain numpy from the file's numbers
(``P`` swaps Y and Z, ``world = local * parent`` in row-vector order), never by the code
under test.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

P3 = np.array([[1.0, 0, 0], [0, 0, 1], [0, 1, 0]])

# A closed unit cube centred on the origin, 8 shared vertices, quads wound clockwise seen from
# outside (D3D's front faces, left-handed): an importer that forgets the mirror or the winding
# ends up with inward normals.
CUBE_VERTS = np.array(
    [
        [-1, -1, -1],
        [-1, 1, -1],
        [1, 1, -1],
        [1, -1, -1],
        [-1, -1, 1],
        [-1, 1, 1],
        [1, 1, 1],
        [1, -1, 1],
    ],
    dtype=np.float64,
)
CUBE_FACES = [
    [0, 1, 2, 3],  # -Z (front, seen from -Z: clockwise)
    [7, 6, 5, 4],  # +Z
    [4, 5, 1, 0],  # -X
    [3, 2, 6, 7],  # +X
    [1, 5, 6, 2],  # +Y
    [4, 0, 3, 7],  # -Y
]
CUBE_OUTWARD = np.array([[0, 0, -1], [0, 0, 1], [-1, 0, 0], [1, 0, 0], [0, 1, 0], [0, -1, 0.0]])


def reset_blender():
    import bpy

    bpy.ops.wm.read_homefile(use_empty=True)
    return bpy


def world_positions(obj) -> np.ndarray:
    """World-space vertex positions of a mesh object (float64)."""
    mesh = obj.data
    co = np.empty(len(mesh.vertices) * 3, dtype=np.float32)
    mesh.vertices.foreach_get("co", co)
    local = co.reshape(-1, 3).astype(np.float64)
    m = np.array(obj.matrix_world, dtype=np.float64)
    return local @ m[:3, :3].T + m[:3, 3]


def corner_face_angles(mesh) -> np.ndarray:
    """Degrees between each corner normal of ``mesh`` and its face's normal: shading that
    follows the shape keeps these small (stale normals on a deformed mesh do not)."""
    corners = np.empty(len(mesh.loops) * 3, dtype=np.float32)
    mesh.corner_normals.foreach_get("vector", corners)
    faces = np.empty(len(mesh.polygons) * 3, dtype=np.float32)
    mesh.polygons.foreach_get("normal", faces)
    sizes = np.empty(len(mesh.polygons), dtype=np.int32)
    mesh.polygons.foreach_get("loop_total", sizes)
    per_corner = np.repeat(faces.reshape(-1, 3), sizes, axis=0)
    cos = np.einsum("ij,ij->i", corners.reshape(-1, 3), per_corner)
    return np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))


def evaluated_corner_face_angles(obj) -> np.ndarray:
    """:func:`corner_face_angles` of the object as evaluated (modifiers, shape keys, cloth)."""
    import bpy

    ev = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    mesh = ev.to_mesh()
    try:
        return corner_face_angles(mesh)
    finally:
        ev.to_mesh_clear()


def polygons(mesh) -> list[list[int]]:
    return [list(p.vertices) for p in mesh.polygons]


def _floats(values, per_line: int = 1) -> str:
    return ",".join(";".join(f"{v:.9g}" for v in row) + ";" for row in values)


def mesh_text(
    name: str,
    verts: np.ndarray,
    faces: list[list[int]],
    *,
    normals: np.ndarray | None = None,
    normal_faces: list[list[int]] | None = None,
    uvs: np.ndarray | None = None,
    colors: np.ndarray | None = None,
    materials: list[str] | None = None,
    material_indices: list[int] | None = None,
) -> str:
    """A Mesh data object in text .X syntax."""
    out = [f"Mesh {name} {{", f" {len(verts)};", " " + _floats(verts) + ";", f" {len(faces)};"]
    out.append(
        " " + ",".join(f"{len(f)};" + ",".join(str(i) for i in f) + ";" for f in faces) + ";"
    )
    if normals is not None:
        nf = normal_faces if normal_faces is not None else faces
        out += [
            " MeshNormals {",
            f"  {len(normals)};",
            "  " + _floats(normals) + ";",
            f"  {len(nf)};",
        ]
        out.append(
            "  " + ",".join(f"{len(f)};" + ",".join(str(i) for i in f) + ";" for f in nf) + ";"
        )
        out.append(" }")
    if uvs is not None:
        out += [" MeshTextureCoords {", f"  {len(uvs)};", "  " + _floats(uvs) + ";", " }"]
    if colors is not None:
        body = ",".join(
            f"{i};" + ";".join(f"{c:.6g}" for c in row) + ";;" for i, row in enumerate(colors)
        )
        out += [" MeshVertexColors {", f"  {len(colors)};", "  " + body + ";", " }"]
    if materials:
        idx = material_indices if material_indices is not None else [0] * len(faces)
        out += [" MeshMaterialList {", f"  {len(materials)};", f"  {len(idx)};"]
        out.append("  " + ",".join(str(i) for i in idx) + ";")
        out += ["  " + m for m in materials]
        out.append(" }")
    out.append("}")
    return "\n".join(out)


def material_text(
    name: str | None, rgba, power: float, spec, emis, texture: str | None = None
) -> str:
    head = f"Material {name} {{" if name else "Material {"
    body = [
        head,
        " " + ";".join(f"{v:.6g}" for v in rgba) + ";;",
        f" {power:.6g};",
        " " + ";".join(f"{v:.6g}" for v in spec) + ";;",
        " " + ";".join(f"{v:.6g}" for v in emis) + ";;",
    ]
    if texture is not None:
        body.append(f' TextureFilename {{ "{texture}"; }}')
    body.append("}")
    return "\n".join(body)


def frame_text(name: str, matrix: np.ndarray, inner: list[str]) -> str:
    m = ",".join(f"{v:.9g}" for v in np.asarray(matrix, dtype=np.float64).ravel())
    body = [f"Frame {name} {{", f" FrameTransformMatrix {{ {m};; }}"]
    body += inner
    body.append("}")
    return "\n".join(body)


def write_x(path: Path, parts: list[str]) -> Path:
    path.write_text("xof 0303txt 0032\n" + "\n".join(parts) + "\n", encoding="ascii")
    return path


def trs(translate=(0, 0, 0), rot_y_deg: float = 0.0, scale=(1, 1, 1)) -> np.ndarray:
    """A D3D row-vector matrix: scale, then rotation about Y, then translation."""
    a = np.radians(rot_y_deg)
    c, s = np.cos(a), np.sin(a)
    rot = np.array([[c, 0, -s], [0, 1, 0], [s, 0, c]])  # D3DXMatrixRotationY (row vectors)
    m = np.eye(4)
    m[:3, :3] = np.diag(scale) @ rot
    m[3, :3] = translate
    return m
