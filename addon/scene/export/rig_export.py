"""Armatures -> bone frames, and skinned meshes -> XSkinMeshHeader + SkinWeights.

A bone's frame matrix is the pose it stands in relative to its parent (the file's frame
pose after an import; the bind, ``xof_bind`` when the importer made the bone, else the rest
matrix, when it is at rest). A SkinWeights' ``matrixOffset`` is the inverse
bind in the mesh's space, ``bind^-1 @ S`` with ``S`` the mesh object relative to the
armature, which is exactly what the importer reads back into the same bind.
"""

from __future__ import annotations

import bpy
import numpy as np

from ...xfile.document import XObject
from ...xfile.writer import objects as xo
from ..cloth.data import DAMPING_GROUP, MASS_GROUP, STIFFNESS_GROUP
from ..rig.armature import read_matrix
from ..rig.rig_math import safe_inverse4
from .legacy import strongest_weights
from .mesh_arrays import VertexMap
from .plan.names import ascii_name, sanitize
from .space import FileSpace

_CLOTH_GROUPS = (MASS_GROUP, STIFFNESS_GROUP, DAMPING_GROUP)


def bind_of(bone: bpy.types.Bone) -> np.ndarray:
    stored = bone.get("xof_bind")
    if stored is not None and len(stored) == 16:
        return np.array(list(stored), dtype=np.float64).reshape(4, 4)
    return read_matrix(bone.matrix_local)


def bone_world(arm: bpy.types.Object, name: str) -> np.ndarray:
    """The bone frame's current world matrix ``arm @ P @ R^-1 @ bind`` (bind pose at rest)."""
    data = arm.data
    assert isinstance(data, bpy.types.Armature)
    bone = data.bones[name]
    pose = arm.pose.bones[name].matrix if arm.pose is not None else bone.matrix_local
    posed = read_matrix(pose) @ safe_inverse4(read_matrix(bone.matrix_local)) @ bind_of(bone)
    return read_matrix(arm.matrix_world) @ posed


def bone_locals(
    arm: bpy.types.Object, space: FileSpace, keyed: set[str] | frozenset[str] = frozenset()
) -> dict[str, np.ndarray]:
    """File-space frame matrix of every bone: the pose it shows with no action, relative to
    its parent.

    The importer poses each bone as its frame matrix says (``matrix_basis`` from
    ``armature.bone_basis``, kept as ``xof_pose``); this is that relation inverted,
    ``parent_bind^-1 @ rest @ basis @ rest^-1 @ bind``. Bones in ``keyed`` (an action moves
    them, so their current basis is the action's) take the stored file pose, else the rest;
    the others their current pose.
    """
    data = arm.data
    assert isinstance(data, bpy.types.Armature)
    pose = arm.pose
    out = {}
    for bone in data.bones:
        parent = bind_of(bone.parent) if bone.parent else np.eye(4)
        rest = read_matrix(bone.matrix_local)
        basis = np.eye(4)
        pose_bone = pose.bones.get(bone.name) if pose is not None else None
        if pose_bone is not None:
            stored = pose_bone.get("xof_pose")
            if bone.name not in keyed:
                basis = read_matrix(pose_bone.matrix_basis)
            elif stored is not None and len(stored) == 16:
                basis = np.array(list(stored), dtype=np.float64).reshape(4, 4)
        with np.errstate(over="ignore", invalid="ignore"):  # said by the writer's check
            local = safe_inverse4(parent) @ rest @ basis @ safe_inverse4(rest) @ bind_of(bone)
        out[bone.name] = space.matrix(local)
    return out


def vertex_weights(obj: bpy.types.Object) -> dict[int, tuple[list[int], list[float]]]:
    """Vertex group index -> (vertex indices, weights) (one pass over the vertices)."""
    out: dict[int, tuple[list[int], list[float]]] = {}
    mesh = obj.data
    assert isinstance(mesh, bpy.types.Mesh)
    for vert in mesh.vertices:
        for elem in vert.groups:
            if elem.weight > 0.0:
                entry = out.setdefault(elem.group, ([], []))
                entry[0].append(vert.index)
                entry[1].append(elem.weight)
    return out


def _skin_entry(
    name: str, group: bpy.types.VertexGroup | None,
    weights: dict[int, tuple[list[int], list[float]]], vmap: VertexMap,
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """File vertex indices and weights of one vertex group (empty when it holds none)."""
    if group is None or group.index not in weights:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    src, val = weights[group.index]
    per_vertex = np.zeros(len(vmap.first))
    per_vertex[np.asarray(src, dtype=np.int64)] = val
    file_w = per_vertex[vmap.source]
    idx = np.flatnonzero(file_w > 0.0)
    return idx, file_w[idx]


def skin_objects(
    obj: bpy.types.Object,
    arm: bpy.types.Object,
    bone_names: dict[str, str],
    vmap: VertexMap,
    file_corners: np.ndarray,
    sizes: np.ndarray,
    space: FileSpace,
    warnings: list[str] | None = None,
    max_weights: int = 0,
    ascii_names: bool = False,
) -> list[XObject]:
    """XSkinMeshHeader and one SkinWeights per bone that weighs some vertex of the mesh
    (helper frames and bones that move nothing stay frames without one).

    ``max_weights`` > 0 keeps each vertex's strongest weights, scaled to the same sum;
    ``ascii_names`` spells the stray groups' names in ASCII (both for Legacy files).
    Vertex groups with weights that name no bone (the importer keeps those of SkinWeights
    whose frame a file lacks) are written too, with an identity offset, and named in a warning.
    """
    data = arm.data
    assert isinstance(data, bpy.types.Armature)
    weights = vertex_weights(obj)
    s = safe_inverse4(read_matrix(arm.matrix_world)) @ read_matrix(obj.matrix_world)
    n_file = len(vmap.source)
    counts = np.zeros(n_file, dtype=np.int64)
    face_of = np.repeat(np.arange(len(sizes)), sizes)
    per_face = np.zeros(len(sizes), dtype=np.int64)
    out: list[XObject] = []
    entries: list[tuple[str, np.ndarray, np.ndarray, np.ndarray]] = []

    def add(name: str, idx: np.ndarray, w: np.ndarray, offset: np.ndarray) -> None:
        entries.append((name, idx, w, offset))

    def emit(name: str, idx: np.ndarray, w: np.ndarray, offset: np.ndarray) -> None:
        if len(idx):
            counts[idx] += 1
            has = np.zeros(n_file, dtype=bool)
            has[idx] = True
            per_face[np.unique(face_of[has[file_corners]])] += 1
        out.append(xo.skin_weights(name, idx, w, offset))

    for bone in data.bones:  # only the bones that move some vertex, as files have them
        idx, w = _skin_entry(bone.name, obj.vertex_groups.get(bone.name), weights, vmap)
        if len(idx):
            add(bone_names[bone.name], idx, w, space.matrix(safe_inverse4(bind_of(bone)) @ s))
    strays = [
        g for g in obj.vertex_groups
        if g.name not in data.bones and g.name not in _CLOTH_GROUPS and g.index in weights
    ]  # fmt: skip
    for group in strays:
        idx, w = _skin_entry(group.name, group, weights, vmap)
        add(ascii_name(group.name) if ascii_names else sanitize(group.name), idx, w, np.eye(4))
    if strays and warnings is not None:
        warnings.append(
            f"{obj.name}: vertex group(s) {', '.join(g.name for g in strays)} name no bone of "
            f"{arm.name}: written as SkinWeights of frames the file does not have"
        )
    if max_weights > 0:
        kept, over = strongest_weights([(e[1], e[2]) for e in entries], n_file, max_weights)
        entries = [(e[0], i, w, e[3]) for e, (i, w) in zip(entries, kept, strict=True) if len(i)]
        if over and warnings is not None:
            warnings.append(
                f"{obj.name}: {over} vertex(es) had more than {max_weights} skin weights: "
                "the strongest kept, scaled to the same sum"
            )
    for entry in entries:
        emit(*entry)
    most_per_face = int(per_face.max()) if per_face.size else 0
    header = xo.skin_header(int(counts.max()) if n_file else 0, most_per_face, len(out))
    return [header, *out]
