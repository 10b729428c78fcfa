"""Import build step: a file's ClothMasses / ClothSprings become cloth data on the mesh.

Meshes with cloth data get it stored (see :mod:`.data`) and, when xof's physics properties
are registered and ``ImportOptions.cloth.enable`` is set, xof cloth enabled over the scene's
frame range (:func:`.switch.enable`). The importer keeps the file's vertex order, so file
indices are Blender vertex indices.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..imp.context import BuildStep
from .data import apply_cloth_data
from .switch import enable

if TYPE_CHECKING:
    from ..imp.context import BuildContext


def import_cloth(ctx: BuildContext) -> None:
    simulate = ctx.options.cloth.enable
    for mesh_data, obj in ctx.mesh_objects.items():
        cloth = mesh_data.cloth
        if cloth is None or (cloth.masses is None and cloth.springs is None):
            continue
        for text in apply_cloth_data(obj, cloth):
            ctx.warn(f"{obj.name}: {text}")
        if simulate and getattr(obj, "xof_physics", None) is not None:
            enable(obj, ctx.blender_scene)


CLOTH_STEP = BuildStep("cloth", 500, import_cloth)
