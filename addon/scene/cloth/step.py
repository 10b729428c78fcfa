"""Import build step: a file's ClothMasses / ClothSprings become cloth data on the mesh.

Meshes with cloth data get it stored (see :mod:`.data`) and, when xof's physics properties
are registered and ``ImportOptions.cloth.enable`` is set, xof cloth enabled over the scene's
frame range (:func:`.switch.enable`) -- unless a morph set animates the mesh (a bake
written by the exporter), which then plays instead. The importer keeps the file's vertex
order, so file indices are Blender vertex indices.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..imp.context import BuildStep
from .data import apply_cloth_data
from .switch import enable

if TYPE_CHECKING:
    from ..imp.context import BuildContext


def _plays_morphs(obj: Any) -> bool:
    """The mesh's shape keys are animated (a baked simulation written as a morph set):
    live cloth would fight them."""
    key = getattr(obj.data, "shape_keys", None)
    anim = key.animation_data if key is not None else None
    return anim is not None and anim.action is not None


def import_cloth(ctx: BuildContext) -> None:
    simulate = ctx.options.cloth.enable
    for mesh_data, obj in ctx.mesh_objects.items():
        cloth = mesh_data.cloth
        if cloth is None or (cloth.masses is None and cloth.springs is None):
            continue
        for text in apply_cloth_data(obj, cloth):
            ctx.warn(f"{obj.name}: {text}")
        if simulate and getattr(obj, "xof_physics", None) is not None:
            if _plays_morphs(obj):
                ctx.warn(f"{obj.name}: cloth data kept, live cloth off: a morph set plays it")
            else:
                enable(obj, ctx.blender_scene)


CLOTH_STEP = BuildStep("cloth", 500, import_cloth)
