"""The import's rig step: the armature from the frames, skinned meshes onto it.

Options: ``ImportOptions.armature`` (``every_frame``). The rig goes to ``ctx.rig`` for the
animation step.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import bpy
import numpy as np

from ...xfile.errors import printable
from ..imp.context import BuildStep
from .armature import BuiltArmature, Rig, bone_basis, build_armature, pose_bones
from .skeleton import SkeletonPlan, convert_matrices, plan_skeleton
from .skinning import attach_to_bones, is_skinned, skin_object

if TYPE_CHECKING:
    from ..imp.context import BuildContext

#: pose-bone property: the ``matrix_basis`` of the file's frame pose (16 floats, row-major),
#: for the exporter (an action overwrites the pose bones' own values)
FILE_POSE = "xof_pose"


def show_file_pose(plan: SkeletonPlan, armature: BuiltArmature, conversion: object) -> None:
    """Pose the bones as the file's frame matrices say (the pose shown after import)."""
    locals_b = convert_matrices(
        conversion,  # type: ignore[arg-type]
        np.stack([plan.frames[b.frame].local for b in plan.bones]),
    )
    bases = np.stack(
        [
            bone_basis(armature.rests[k], b.bind, plan.bind_of_parent(b), locals_b[k])
            for k, b in enumerate(plan.bones)
        ]
    )
    pose_bones(armature.obj, [b.name for b in plan.bones], bases)
    pose = armature.obj.pose
    assert pose is not None
    for b, basis in zip(plan.bones, bases, strict=True):  # for the exporter: actions overwrite
        pose.bones[b.name][FILE_POSE] = [float(v) for v in basis.reshape(-1)]


def build_rig(ctx: BuildContext) -> None:
    """Armature from the frames, skinned meshes onto it, bone frames' objects onto bones."""
    plan = plan_skeleton(ctx.scene, ctx.conversion, ctx.options.armature.every_frame)
    ctx.result.warnings.extend(plan.warnings)
    ctx.rig = Rig(plan, None, set())
    if not plan.bones:
        return
    # named after the file; undecodable bytes of its name as \xNN (a Blender name is UTF-8)
    name = printable(Path(ctx.filepath).stem) if ctx.filepath else "Armature"
    holder = None  # the armature's own frame (the exporter's): its name, not the file's
    if plan.armature_frame >= 0:
        frame = plan.frames[plan.armature_frame]
        name = str(frame.name)
        holder = ctx.frame_objects.get(frame.data)
        if holder is not None:
            holder.name = "xof armature frame"  # the armature takes the name
    armature = build_armature(plan, name, ctx.collection)
    ctx.add_root(armature.obj)
    if holder is not None:  # at the identity: its children keep their world matrices
        for child in list(holder.children):
            child.parent = armature.obj
        ctx.forget(holder)
        bpy.data.objects.remove(holder)
    show_file_pose(plan, armature, ctx.conversion)
    skinned: set[bpy.types.Object] = set()
    for mesh, obj in ctx.mesh_objects.items():
        if is_skinned(mesh) and obj.type == "MESH":
            ctx.result.warnings.extend(skin_object(obj, mesh, plan, armature, ctx.conversion))
            skinned.add(obj)
    doomed = attach_to_bones(plan, armature, ctx.frame_objects, skinned)
    ctx.forget(*doomed)
    if doomed:  # at once: one by one, each removal walks every object (5,000 bones: 130 s)
        bpy.data.batch_remove(ids=list(doomed))
    ctx.rig = Rig(plan, armature, skinned)


RIG_STEP = BuildStep("armature", build_rig)
