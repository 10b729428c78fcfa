"""Import build step: a file's ClothMasses / ClothSprings become cloth data on the mesh.

Meshes with cloth data get it stored (see :mod:`.data`) and, when xof's physics properties
are registered and ``ImportOptions.cloth.enable`` is set, xof cloth enabled over the scene's
frame range (:func:`.switch.enable`) -- unless a morph set animates the mesh (a bake
written by the exporter), which then plays instead. The importer keeps the file's vertex
order, so file indices are Blender vertex indices.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import bpy
import numpy as np

from ..imp.context import BuildStep
from .data import apply_cloth_data
from .switch import enable

if TYPE_CHECKING:
    from ..imp.context import BuildContext
    from ..imp.options import ImportOptions


#: a model taller than this (Blender units, metres to the solver) gets a scale hint
TALL = 50.0


def _plays_morphs(obj: bpy.types.Object) -> bool:
    """The mesh's shape keys are animated (a baked simulation written as a morph set):
    live cloth would fight them."""
    key = getattr(obj.data, "shape_keys", None)
    anim = key.animation_data if key is not None else None
    return anim is not None and anim.action is not None


def import_cloth(ctx: BuildContext) -> None:
    simulate = ctx.options.cloth.enable
    enabled: list[bpy.types.Object] = []
    for mesh_data, obj in ctx.mesh_objects.items():
        cloth = mesh_data.cloth
        if cloth is None or (cloth.masses is None and cloth.springs is None):
            continue
        for text in apply_cloth_data(obj, cloth):
            ctx.warn(f"{obj.name}: {text}")
        if simulate and getattr(obj, "xof_physics", None) is not None:
            if _plays_morphs(obj):
                ctx.warn(f"{obj.name}: cloth data kept, live cloth off: a morph set plays it")
                continue
            enable(obj, ctx.blender_scene)
            enabled.append(obj)
    if enabled:
        if bpy.context.view_layer is not None:
            bpy.context.view_layer.update()  # world matrices after the rig step's parenting
        hint = scale_hint(model_size(list(ctx.mesh_objects.values())), ctx.options)
        if hint:
            ctx.warn(f"{enabled[0].name}: {hint}")


def model_size(objects: list[bpy.types.Object]) -> float:
    """The largest extent (Blender units) of the objects' world bounding boxes together."""
    with np.errstate(over="ignore", invalid="ignore"):  # a box near float32's end: not finite
        corners = [
            np.asarray(o.matrix_world) @ np.c_[np.asarray(o.bound_box), np.ones(8)].T
            for o in objects
            if o.type == "MESH"
        ]
        if not corners:
            return 0.0
        points = np.concatenate([c[:3].T for c in corners])
        return float(np.max(np.ptp(points, axis=0)))  # not finite: no hint (``scale_hint``)


def scale_hint(size: float, options: ImportOptions) -> str | None:
    """What to say when a model is too big for a solver in metres (None when it is not)."""
    if not np.isfinite(size) or size <= TALL:
        return None
    factor = 10.0 ** -math.ceil(math.log10(size / 5.0))  # brings it under 5 m
    scale = options.transform.global_scale * factor
    return (
        f"the model is {size:.0f} units across and xof's cloth works in metres (gravity "
        f"9.81 m/s^2): it will move as if {size:.0f} m tall; import with Scale {scale:g} "
        f"for {size * factor:.2g} m"
    )


CLOTH_STEP = BuildStep("cloth", import_cloth)
