"""Skinned meshes onto the armature, and the other objects of bone frames onto their bones.

- A skinned mesh object: parented to the armature (plain object parent, no bone), placed at
  its skin-space matrix (identity unless its offsets say otherwise: the scale or mirror of
  its frame, :mod:`.stretch`), one vertex group per SkinWeights (named after the bone), an
  Armature modifier. D3D skins in the skeleton's space and ignores the mesh's own frame
  matrix; so does this. A skin space with shear, which an object's location, rotation and
  scale cannot hold, goes into the parent inverse (a full matrix), the vertices unchanged.
- A frame that became a bone loses its empty; what hung under it (props, rigid meshes,
  frames that are not bones) hangs from the bone instead, keeping its world matrix and
  following the bone when it moves.
"""

from __future__ import annotations

import bpy
import numpy as np

from ...xfile.views.model import FrameData, MeshData
from .armature import BuiltArmature, as_matrix
from .rig_math import safe_inverse4
from .skeleton import SkeletonPlan, SpaceConversion, mesh_skin_space
from .skin_weights import GroupWeights, SkinPlan, plan_skin, weight_batches
from .stretch import storable


def is_skinned(mesh: MeshData) -> bool:
    return mesh.skin is not None and bool(mesh.skin.weights)


#: a group of at least this many vertices goes in whole through a float attribute (one
#: operator call, ~1.5 ms) instead of one ``VertexGroup.add`` a vertex (~2 us each)
WHOLE_GROUP_VERTICES = 1000


def write_vertex_groups(obj: bpy.types.Object, skin: SkinPlan, names: dict[str, str]) -> None:
    """One vertex group per file SkinWeights frame.

    ``VertexGroup.add`` takes one weight a call. Large groups are written as a float point
    attribute (``foreach_set``) that ``geometry.attribute_convert`` turns into the group: it
    adds the vertices whose weight is above zero, in vertex order, as ``add`` would. Smaller
    groups: weights shared by many vertices go in batches (:func:`weight_batches`); mostly
    distinct weights (what exporters usually write) one call a vertex.
    """
    quiet: bpy.types.Scene | None = None
    active = _active_attribute(obj)  # the attribute route makes its attribute the active one
    try:
        for group in skin.groups:
            name = names.get(group.frame_name, group.frame_name)
            w32 = np.asarray(group.weights, dtype=np.float64).astype(np.float32)
            if len(w32) >= WHOLE_GROUP_VERTICES:
                quiet = quiet or bpy.data.scenes.new("xof weights")
                if _whole_group(obj, group.indices, w32, name, quiet):
                    continue
            _added_group(obj, group, w32, name)
    finally:
        if quiet is not None:
            bpy.data.scenes.remove(quiet)
            _restore_active_attribute(obj, active)


def _active_attribute(obj: bpy.types.Object) -> str | None:
    me = obj.data
    if not isinstance(me, bpy.types.Mesh) or me.attributes.active is None:
        return None
    return str(me.attributes.active.name)


def _restore_active_attribute(obj: bpy.types.Object, name: str | None) -> None:
    me = obj.data
    if isinstance(me, bpy.types.Mesh) and name is not None and name in me.attributes:
        me.attributes.active = me.attributes[name]


def _added_group(obj: bpy.types.Object, group: GroupWeights, w32: np.ndarray, name: str) -> None:
    """A new vertex group ``name`` through ``VertexGroup.add``."""
    vg = obj.vertex_groups.new(name=name)
    if 2 * len(np.unique(w32)) > len(w32):
        add = vg.add
        for index, value in zip(group.indices.tolist(), w32.tolist(), strict=True):
            add([index], value, "REPLACE")
        return
    for indices, value, mode in weight_batches(group.indices, group.weights):
        vg.add(indices.tolist(), value, mode)  # type: ignore[arg-type]


def _whole_group(
    obj: bpy.types.Object, indices: np.ndarray, w32: np.ndarray, name: str, quiet: bpy.types.Scene
) -> bool:
    """A new vertex group ``name`` holding ``w32`` at ``indices``, through a point attribute;
    False (nothing changed) where that route does not apply. The operator runs with the
    empty scene ``quiet``'s view layer: ``bpy.ops`` updates the context's view layer before
    and after the call, which would evaluate the whole scene (the mesh) each time."""
    me = obj.data
    if not isinstance(me, bpy.types.Mesh) or not np.all(w32 > 0.0):  # zeros would be skipped
        return False
    full = np.zeros(len(me.vertices), dtype=np.float32)
    full[indices] = np.minimum(w32, 1.0)  # VertexGroup.add clamps to [0, 1]
    attribute = me.attributes.new("xof weights", "FLOAT", "POINT")
    attribute.data.foreach_set("value", full)  # type: ignore[attr-defined]
    me.attributes.active = attribute
    before = len(obj.vertex_groups)
    try:
        layer = quiet.view_layers[0]
        with bpy.context.temp_override(
            object=obj, active_object=obj, scene=quiet, view_layer=layer
        ):
            ran = bpy.ops.geometry.attribute_convert(mode="VERTEX_GROUP")
        done: set[str] = set(ran or ())  # {"FINISHED"} (the stubs type operator calls as None)
    except RuntimeError:  # the operator's poll refused (e.g. no usable context)
        done = set[str]()
    if "FINISHED" not in done or len(obj.vertex_groups) != before + 1:
        if attribute.name in me.attributes:
            me.attributes.remove(attribute)
        return False
    obj.vertex_groups[before].name = name
    obj.vertex_groups.active_index = before  # as vertex_groups.new leaves it
    return True


def skin_object(
    obj: bpy.types.Object,
    mesh: MeshData,
    plan: SkeletonPlan,
    armature: BuiltArmature,
    conversion: SpaceConversion,
) -> list[str]:
    """Vertex groups, Armature modifier and parenting for one skinned mesh; its warnings."""
    me = obj.data
    assert isinstance(me, bpy.types.Mesh)
    skin = plan_skin(mesh, len(me.vertices))
    names = {}
    for group in skin.groups:
        bone = plan.bone_named_by_file(group.frame_name)
        if bone is not None:
            names[group.frame_name] = bone.name
    write_vertex_groups(obj, skin, names)
    space, notes = mesh_skin_space(plan, mesh, conversion)
    obj.parent = armature.obj
    obj.parent_type = "OBJECT"
    if storable(space):
        obj.matrix_parent_inverse.identity()
        obj.matrix_basis = as_matrix(space)
    else:
        obj.matrix_parent_inverse = as_matrix(space)
        obj.matrix_basis.identity()
    mod = obj.modifiers.new("Armature", "ARMATURE")
    assert isinstance(mod, bpy.types.ArmatureModifier)
    mod.object = armature.obj
    mod.use_vertex_groups = True
    mod.use_bone_envelopes = False
    return skin.warnings + notes


def bone_parent_inverse(rest: np.ndarray, bind: np.ndarray, length: float) -> np.ndarray:
    """``matrix_parent_inverse`` for a child of a bone: world = C_b @ basis.

    A bone parent gives ``P_b @ T(0, length, 0)``, and ``P_b = C_b @ bind^-1 @ rest``.
    """
    tail = np.eye(4)
    tail[1, 3] = length
    return safe_inverse4(tail) @ safe_inverse4(rest) @ bind


def _attach(obj: bpy.types.Object, armature: BuiltArmature, bone: str, inverse: np.ndarray) -> None:
    obj.parent = armature.obj
    obj.parent_type = "BONE"
    obj.parent_bone = bone
    obj.matrix_parent_inverse = as_matrix(inverse)


def attach_to_bones(
    plan: SkeletonPlan,
    armature: BuiltArmature,
    frame_objects: dict[FrameData, bpy.types.Object],
    skinned: set[bpy.types.Object],
) -> list[bpy.types.Object]:
    """Re-hang objects of bone frames and their children; returns the empties to remove.

    The caller drops them from its bookkeeping (``BuildContext.forget``), then deletes them.
    """
    inverses = [
        bone_parent_inverse(armature.rests[k], b.bind, float(armature.lengths[k]))
        for k, b in enumerate(plan.bones)
    ]
    bone_objects = {
        frame_objects[plan.frames[b.frame].data]: k
        for k, b in enumerate(plan.bones)
        if plan.frames[b.frame].data in frame_objects
    }
    # each empty's children, from one pass (``Object.children`` scans every object: a chain
    # of 5,000 bone frames asked it 5,000 times)
    children: dict[bpy.types.Object, list[bpy.types.Object]] = {}
    for child in bpy.data.objects:
        if child.parent in bone_objects:
            children.setdefault(child.parent, []).append(child)
    removed: list[bpy.types.Object] = []
    for obj, k in bone_objects.items():
        bone = plan.bones[k]
        if obj.type != "EMPTY":
            if obj not in skinned:  # a rigid mesh that is the frame's only content
                _attach(obj, armature, bone.name, inverses[k])
                obj.matrix_basis.identity()
            continue
        for child in children.get(obj, []):
            if child in bone_objects or child in skinned:
                continue
            _attach(child, armature, bone.name, inverses[k])
        removed.append(obj)
    return removed
