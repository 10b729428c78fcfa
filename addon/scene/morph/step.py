"""The importer's morph step: MorphAnimationSets become shape keys after meshes exist.

Options come from ``ImportOptions.extra["morphs"]``: ``keep_targets`` (keep the target meshes
as objects too) and ``loop_all`` (cycle every set). Runs at order 400 (after animation).
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
    extra = ctx.options.extra.get("morphs", {})
    options = MorphOptions(
        keep_targets=bool(extra.get("keep_targets", False)),
        loop_all=bool(extra.get("loop_all", False)),
        to_blender=ctx.conversion.positions,
    )
    scene = ctx.blender_scene or bpy.context.scene
    assert scene is not None
    morphs = build_morphs(
        ctx.scene, scene, ctx.collection, ctx.mesh_objects, options, lambda o: _forget(ctx, o)
    )
    ctx.result.warnings.extend(morphs.warnings)
    for obj in morphs.objects:
        if obj not in ctx.result.objects:  # a fallback object made here
            ctx.result.objects.append(obj)
            ctx.track(obj)
    for action in morphs.actions:
        ctx.track(action)


def _forget(ctx: BuildContext, obj: bpy.types.Object) -> None:
    """Drop a consumed target from every list and map of the build, before it is removed."""
    mesh = obj.data
    for items in (ctx.result.objects, ctx.result.roots, ctx.roots):
        while obj in items:
            items.remove(obj)
    if mesh in ctx.result.meshes:
        ctx.result.meshes.remove(mesh)
    for data in [m for m, o in ctx.mesh_objects.items() if o == obj]:
        del ctx.mesh_objects[data]
        ctx.mesh_builds.pop(data, None)
    for frame in [f for f, o in ctx.frame_objects.items() if o == obj]:
        del ctx.frame_objects[frame]


MORPH_STEP = BuildStep("morphs", 400, run)
