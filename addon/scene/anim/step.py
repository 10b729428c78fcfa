"""The import's animation step: every AnimationSet as an action (see :mod:`.animation`).

Options: ``ImportOptions.animation`` (``enabled``, ``scene_timing``, ``slerp_step`` in
radians, ``ticks_per_second`` (:mod:`.timing`), ``animation_sets`` (:mod:`.set_groups`));
the bones come from the rig step's ``ctx.rig``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import bpy
import numpy as np

from ...xfile.errors import printable
from ...xfile.views.model import SceneData
from ..imp.context import BuildStep
from ..imp.options import AnimationOptions
from ..rig.armature import Rig
from .animation import AnimationTargets, BoneTarget, apply_scene_timing, build_actions
from .set_groups import sets_key_disjoint_frames
from .timing import TickRate, resolve_ticks_per_second

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
    if not ctx.scene.animation_sets:
        return
    if not ctx.scene.all_meshes():
        ctx.result.warnings.insert(0, animation_only_hint(ctx))
    if not opts.enabled:
        return
    scene = ctx.blender_scene or bpy.context.scene
    assert scene is not None
    rate, together = timing_and_sets(ctx.scene, scene, opts, ctx.result.notes)
    targets = animation_targets(ctx, ctx.rig)
    actions, warnings = build_actions(
        ctx.scene, targets, ctx.conversion, scene, opts.scene_timing, opts.slerp_step,
        rate.ticks_per_second, together,
    )  # fmt: skip
    ctx.result.warnings.extend(warnings)
    for action in actions:
        ctx.track(action)


def animation_only_hint(ctx: BuildContext) -> str:
    """What a file of animation sets and no mesh is, and where it belongs."""
    data = ctx.scene
    frames = {a.frame_name for s in data.animation_sets for a in s.animations if a.frame_name}
    name = printable(Path(ctx.filepath).name) if ctx.filepath else "the file"
    return (
        f"{name} is an animation-only file ({len(data.animation_sets)} animation set(s) for "
        f"{len(frames)} frame(s), no mesh): to play it on a character, select the character's "
        "armature and use File > Import > DirectX Animation (.x); here its frames are empties"
    )


def timing_and_sets(
    data: SceneData, scene: bpy.types.Scene, opts: AnimationOptions, notes: list[str]
) -> tuple[TickRate, bool]:
    """The tick rate (the scene's rate set from it first, with ``scene_timing``) and whether
    the sets play together; what was chosen goes to ``notes``."""
    fps = float(scene.render.fps) / float(scene.render.fps_base or 1.0)
    rate = resolve_ticks_per_second(data, fps, opts.tick_choice())
    if rate.note:
        notes.append(rate.note)
    if opts.scene_timing and rate.source != "frames":  # ticks as frames keep the scene rate
        apply_scene_timing(data, scene, rate.ticks_per_second)
    together = opts.animation_sets == "AUTO" and sets_key_disjoint_frames(data)
    if together:
        notes.append(
            f"{len(data.animation_sets)} animation sets key disjoint bones: all play together "
            "(unmuted NLA tracks)"
        )
    return rate, together


ANIMATION_STEP = BuildStep("animation", build_animation)
