"""A SkeletonPlan -> an armature object: edit bones at rest, the file's frame pose on top.

Edit bones need edit mode, which needs the armature active in the view layer; the previous
active object and mode are restored afterwards. Rest matrices are read back from Blender
(float32) and used for every later pose computation, so poses are exact for what Blender
actually stores. Each bone keeps its bind matrix as the custom property ``xof_bind`` so an
animation-only file can later be applied to this armature.
"""

from __future__ import annotations

from dataclasses import dataclass

import bpy
import numpy as np
from mathutils import Matrix, Vector

from .rig_math import safe_inverse4
from .skeleton import SkeletonPlan


@dataclass(eq=False)
class BuiltArmature:
    obj: bpy.types.Object
    rests: np.ndarray  # (bones, 4, 4) Bone.matrix_local as Blender stores it
    lengths: np.ndarray  # (bones,)


@dataclass(eq=False)
class Rig:
    """What the rig step hands the later steps (``BuildContext.rig``)."""

    plan: SkeletonPlan
    armature: BuiltArmature | None  # None: the plan has no bones
    skinned: set[bpy.types.Object]  # mesh objects deformed by the armature


def as_matrix(m: np.ndarray) -> Matrix:
    return Matrix([[float(v) for v in row] for row in np.asarray(m).reshape(4, 4)])


def read_matrix(m: Matrix) -> np.ndarray:
    return np.array([[m[r][c] for c in range(4)] for r in range(4)], dtype=np.float64)


def _view_layer() -> bpy.types.ViewLayer:
    view_layer = bpy.context.view_layer
    assert view_layer is not None
    return view_layer


def _enter_edit_mode(obj: bpy.types.Object) -> tuple[bpy.types.Object | None, str]:
    view_layer = _view_layer()
    previous = view_layer.objects.active
    mode = previous.mode if previous is not None else "OBJECT"
    if mode != "OBJECT":
        bpy.ops.object.mode_set(mode="OBJECT")
    view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    return previous, mode


def build_armature(
    plan: SkeletonPlan, name: str, collection: bpy.types.Collection
) -> BuiltArmature:
    """Create and link the armature; bones get head, tail and roll from ``plan``."""
    data = bpy.data.armatures.new(name)
    obj = bpy.data.objects.new(name, data)
    collection.objects.link(obj)
    scene = bpy.context.scene
    assert scene is not None
    scene_root = scene.collection
    borrowed = collection != scene_root and obj.name not in _view_layer().objects
    if borrowed:
        scene_root.objects.link(obj)  # edit mode needs it in the view layer
    obj.show_in_front = True
    previous, mode = _enter_edit_mode(obj)
    try:
        edit_bones = []
        for bone in plan.bones:
            eb = data.edit_bones.new(bone.name)
            head = bone.rest[:3, 3]
            eb.head = Vector(head.tolist())
            eb.tail = Vector((head + bone.rest[:3, 1] * bone.length).tolist())
            eb.align_roll(Vector(bone.rest[:3, 2].tolist()))
            eb.use_connect = False
            eb.use_deform = True
            edit_bones.append(eb)
        for eb, bone in zip(edit_bones, plan.bones, strict=True):
            if bone.parent >= 0:
                eb.parent = edit_bones[bone.parent]
    finally:
        bpy.ops.object.mode_set(mode="OBJECT")
        _view_layer().objects.active = previous
        if previous is not None and mode != "OBJECT":
            bpy.ops.object.mode_set(mode=mode)  # type: ignore[arg-type]
    if borrowed:
        scene_root.objects.unlink(obj)
    rests = np.stack([read_matrix(data.bones[b.name].matrix_local) for b in plan.bones])
    lengths = np.array([data.bones[b.name].length for b in plan.bones])
    for b in plan.bones:
        data.bones[b.name]["xof_bind"] = [float(v) for v in b.bind.reshape(-1)]
    return BuiltArmature(obj, rests, lengths)


def basis_sides(
    rest: np.ndarray, bind: np.ndarray, parent_bind: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(left, right)`` with ``matrix_basis = left @ local @ right`` (see :func:`bone_basis`)."""
    return _inverse(rest) @ parent_bind, _inverse(bind) @ rest


def _inverse(m: np.ndarray) -> np.ndarray:
    return safe_inverse4(m)


def bone_basis(
    rest: np.ndarray, bind: np.ndarray, parent_bind: np.ndarray, local: np.ndarray
) -> np.ndarray:
    """Pose-bone ``matrix_basis`` that gives the bone the Blender local ``local`` (stacked).

    Blender poses ``P_b = P_p @ R_p^-1 @ R_b @ basis``; skinning uses ``P_b @ R_b^-1``. We
    want the skin matrix ``C_b @ bind_b^-1`` with ``C_b = C_p @ local``, which gives
    ``basis = R_b^-1 @ bind_p @ local @ bind_b^-1 @ R_b``.
    """
    left, right = basis_sides(rest, bind, parent_bind)
    return left @ np.asarray(local, dtype=np.float64) @ right


def pose_bones(obj: bpy.types.Object, names: list[str], bases: np.ndarray) -> None:
    """Set ``matrix_basis`` of the named pose bones."""
    pose = obj.pose
    assert pose is not None
    for name, basis in zip(names, bases, strict=True):
        pose.bones[name].matrix_basis = as_matrix(basis)
