"""The importer's morph step: MorphAnimationSets become shape keys after meshes exist.

Options: ``ImportOptions.morphs`` (``keep_targets``, ``loop_all``, ``targets_as_shape_keys``
for files of same-sized meshes and no morph set, :mod:`.targets`; ``phoneme_map`` for
lip-sync files, :mod:`.lipsync`). Runs after animation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import bpy

from ..imp.context import BuildStep
from .build import MorphOptions, build_morphs
from .lipsync import import_lipsync
from .targets import targets_as_shape_keys

if TYPE_CHECKING:
    from ..imp.context import BuildContext


def run(ctx: BuildContext) -> None:
    if ctx.scene.morph_sets:
        morph_sets(ctx)
    elif ctx.options.morphs.targets_as_shape_keys:
        if ctx.targets_later is not None:
            ctx.targets_later.append(ctx)
        else:
            targets_as_shape_keys(ctx)
    import_lipsync(ctx)


def morph_sets(ctx: BuildContext) -> None:
    options = MorphOptions(
        keep_targets=ctx.options.morphs.keep_targets,
        loop_all=ctx.options.morphs.loop_all,
        to_blender=ctx.conversion.positions,
        # the range is the morph sets' unless skeletal sets set it
        set_scene_range=ctx.options.animation.scene_timing and not ctx.scene.animation_sets,
    )
    scene = ctx.blender_scene or bpy.context.scene
    assert scene is not None
    morphs = build_morphs(ctx.scene, scene, ctx.collection, ctx.mesh_objects, options, ctx.forget)
    ctx.result.warnings.extend(morphs.warnings)
    for obj in morphs.objects:
        if obj not in ctx.result.objects:  # a fallback object made here
            ctx.result.objects.append(obj)
            ctx.track(obj)
    for action in morphs.actions:
        ctx.track(action)


MORPH_STEP = BuildStep("morphs", run)
