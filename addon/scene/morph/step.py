"""The importer's morph step: MorphAnimationSets become shape keys after meshes exist.

Options: ``ImportOptions.morphs`` (``keep_targets``, ``loop_all``). Runs after animation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import bpy

from ..imp.context import BuildStep
from .build import MorphOptions, build_morphs

if TYPE_CHECKING:
    from ..imp.context import BuildContext


def run(ctx: BuildContext) -> None:
    if not ctx.scene.morph_sets:
        return
    options = MorphOptions(
        keep_targets=ctx.options.morphs.keep_targets,
        loop_all=ctx.options.morphs.loop_all,
        to_blender=ctx.conversion.positions,
    )
    scene = ctx.blender_scene or bpy.context.scene
    assert scene is not None
    morphs = build_morphs(
        ctx.scene, scene, ctx.collection, ctx.mesh_objects, options, ctx.forget
    )
    ctx.result.warnings.extend(morphs.warnings)
    for obj in morphs.objects:
        if obj not in ctx.result.objects:  # a fallback object made here
            ctx.result.objects.append(obj)
            ctx.track(obj)
    for action in morphs.actions:
        ctx.track(action)


MORPH_STEP = BuildStep("morphs", 400, run)
