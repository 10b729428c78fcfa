"""The import's animation step: every AnimationSet as an action (see :mod:`.animation`).

Options come from ``ImportOptions.extra["animation"]`` (the operator's Animation panel):
``enabled`` (bool, default True); ``scene_timing`` (bool, default True) sets the scene's frame
rate (when the key spacing gives a whole one) and frame range from the file;
``slerp_step_degrees`` (float, default 4): rotation spans wider than this get extra keys so
Blender's interpolation follows the file's slerp; 0 keeps exactly the file's key times.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import bpy
import numpy as np

from ..imp.context import BuildStep
from ..rig.step import Rig, options_of, rig_of
from .animation import AnimationTargets, BoneTarget, apply_scene_timing, build_actions
from .key_sampling import DEFAULT_MAX_STEP

if TYPE_CHECKING:
    from ..imp.context import BuildContext


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
    opts = options_of(ctx, "animation")
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


ANIMATION_STEP = BuildStep("animation", 300.0, build_animation)
