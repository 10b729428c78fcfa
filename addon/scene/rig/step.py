"""The import's rig step: the armature from the frames, skinned meshes onto it.

Options come from ``ImportOptions.extra["armature"]`` (the operator's Armature panel):
``every_frame`` (bool, default False) makes every frame a bone, not only the skinning ones,
the animated ones in their trees and their ancestors.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import bpy
import numpy as np

from ..imp.context import BuildStep
from .armature import BuiltArmature, bone_basis, build_armature, pose_bones
from .skeleton import SkeletonPlan, convert_matrices, plan_skeleton
from .skinning import attach_to_bones, is_skinned, remove_objects, skin_object

if TYPE_CHECKING:
    from ..imp.context import BuildContext

_RIG = "_xof_rig"
#: pose-bone property: the ``matrix_basis`` of the file's frame pose (16 floats, row-major)
FILE_POSE = "xof_pose"  # attribute on the BuildContext that carries the rig to the animation step


@dataclass(eq=False)
class Rig:
    plan: SkeletonPlan
    armature: BuiltArmature | None
    skinned: set[bpy.types.Object]


def options_of(ctx: BuildContext, step: str) -> dict:
    value = ctx.options.extra.get(step, {})
    return value if isinstance(value, dict) else {}


def rig_of(ctx: BuildContext) -> Rig | None:
    rig = getattr(ctx, _RIG, None)
    return rig if isinstance(rig, Rig) else None


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
    opts = options_of(ctx, "armature")
    plan = plan_skeleton(ctx.scene, ctx.conversion, bool(opts.get("every_frame", False)))
    ctx.result.warnings.extend(plan.warnings)
    setattr(ctx, _RIG, Rig(plan, None, set()))
    if not plan.bones:
        return
    name = Path(ctx.filepath).stem if ctx.filepath else "Armature"
    armature = build_armature(plan, name, ctx.collection)
    ctx.result.objects.append(armature.obj)
    ctx.result.roots.append(armature.obj)
    ctx.roots.append(armature.obj)
    show_file_pose(plan, armature, ctx.conversion)
    skinned: set[bpy.types.Object] = set()
    for mesh, obj in ctx.mesh_objects.items():
        if is_skinned(mesh) and obj.type == "MESH":
            ctx.result.warnings.extend(skin_object(obj, mesh, plan, armature, ctx.conversion))
            skinned.add(obj)
    doomed = attach_to_bones(plan, armature, ctx.frame_objects, skinned)
    remove_objects(doomed, ctx.frame_objects, ctx.result.objects, ctx.result.roots, ctx.roots)
    setattr(ctx, _RIG, Rig(plan, armature, skinned))


RIG_STEP = BuildStep("armature", 100.0, build_rig)
