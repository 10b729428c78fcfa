"""The import's animation step: every AnimationSet as an action (see :mod:`.animation`).

Options: ``ImportOptions.animation`` (``enabled``, ``scene_timing``, ``slerp_step`` in
radians); the bones come from the rig step's ``ctx.rig``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import bpy
import numpy as np

from ..imp.context import BuildStep
from ..rig.armature import Rig
from .animation import AnimationTargets, BoneTarget, apply_scene_timing, build_actions

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
    opts = ctx.options.animation
    if not ctx.scene.animation_sets or not opts.enabled:
        return
    scene = ctx.blender_scene or bpy.context.scene
    assert scene is not None
    if opts.scene_timing:
        apply_scene_timing(ctx.scene, scene)
    targets = animation_targets(ctx, ctx.rig)
    actions, warnings = build_actions(
        ctx.scene, targets, ctx.conversion, scene, opts.scene_timing, opts.slerp_step
    )
    ctx.result.warnings.extend(warnings)
    for action in actions:
        ctx.track(action)


ANIMATION_STEP = BuildStep("animation", 300.0, build_animation)
