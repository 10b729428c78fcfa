"""Build steps of the import: the armature and skins (order 100), then animation (300).

Options come from ``ImportOptions.extra`` (the import operator's Armature and Animation
panels fill them):

- ``extra["armature"]["every_frame"]`` (bool, default False): every frame becomes a bone,
  not only the skinning ones, the animated ones in their trees and their ancestors;
- ``extra["animation"]["scene_timing"]`` (bool, default True): set the scene's frame rate
  (when the key spacing gives a whole one) and frame range from the file;
- ``extra["animation"]["enabled"]`` (bool, default True);
- ``extra["animation"]["slerp_step_degrees"]`` (float, default 4): rotation spans wider than
  this get extra keys so Blender's interpolation follows the file's slerp; 0 keeps exactly
  the file's key times (e.g. for round trips).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import bpy
import numpy as np

from .animation import AnimationTargets, BoneTarget, apply_scene_timing, build_actions
from .armature import BuiltArmature, bone_basis, build_armature, pose_bones
from .key_sampling import DEFAULT_MAX_STEP
from .skeleton import SkeletonPlan, convert_matrices, plan_skeleton
from .skinning import attach_to_bones, is_skinned, remove_objects, skin_object
from .steps import BuildStep

if TYPE_CHECKING:
    from .importer import BuildContext

_RIG = "_xof_rig"  # attribute on the BuildContext that carries the rig to the animation step


@dataclass(eq=False)
class Rig:
    plan: SkeletonPlan
    armature: BuiltArmature | None
    skinned: set[bpy.types.Object]


def _options(ctx: BuildContext, step: str) -> dict:
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


def build_rig(ctx: BuildContext) -> None:
    """Armature from the frames, skinned meshes onto it, bone frames' objects onto bones."""
    opts = _options(ctx, "armature")
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


def animation_targets(ctx: BuildContext, rig: Rig | None) -> AnimationTargets:
    """Bones of the built armature and the objects of the other animated frames."""
    targets = AnimationTargets()
    if rig is not None and rig.armature is not None:
        targets.armature = rig.armature.obj
        plan = rig.plan
        for k, b in enumerate(plan.bones):
            name = plan.frames[b.frame].name
            if name is not None and name not in targets.bones:
                targets.bones[name] = BoneTarget(
                    b.name, rig.armature.rests[k], b.bind, plan.bind_of_parent(b),
                    plan.frames[b.frame].local,
                )  # fmt: skip
    skinned = rig.skinned if rig is not None else set()
    for frame, obj in ctx.frame_objects.items():
        if frame.name is None or frame.name in targets.bones or frame.name in targets.objects:
            continue
        if obj in skinned:
            targets.skipped.add(frame.name)  # D3D skins ignore the mesh's frame matrix
            continue
        targets.objects[frame.name] = obj
        targets.rest_locals[frame.name] = np.asarray(frame.matrix, dtype=np.float64)
    return targets


def build_animation(ctx: BuildContext) -> None:
    """Every AnimationSet as an action (see :mod:`.animation`)."""
    opts = _options(ctx, "animation")
    if not ctx.scene.animation_sets or not opts.get("enabled", True):
        return
    scene = ctx.blender_scene or bpy.context.scene
    assert scene is not None
    timing = bool(opts.get("scene_timing", True))
    if timing:
        apply_scene_timing(ctx.scene, scene)
    targets = animation_targets(ctx, rig_of(ctx))
    step = np.radians(float(opts.get("slerp_step_degrees", np.degrees(DEFAULT_MAX_STEP))))
    actions, warnings = build_actions(ctx.scene, targets, ctx.conversion, scene, timing, step)
    ctx.result.warnings.extend(warnings)
    for action in actions:
        ctx.track(action)


BUILD_STEPS = [
    BuildStep("armature", 100.0, build_rig),
    BuildStep("animation", 300.0, build_animation),
]
