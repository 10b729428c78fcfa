"""Drag and drop: dropping .x files on a 3D viewport (or the outliner) imports them."""

from __future__ import annotations

import bpy

from .import_x import IMPORT_SCENE_OT_x


class XOF_FH_import_x(bpy.types.FileHandler):
    bl_idname = "XOF_FH_import_x"
    bl_label = "DirectX (.x)"
    bl_import_operator = IMPORT_SCENE_OT_x.bl_idname
    bl_file_extensions = ".x"

    @classmethod
    def poll_drop(cls, context: bpy.types.Context) -> bool:
        area = context.area
        return area is not None and area.type in {"VIEW_3D", "OUTLINER"}


def register() -> None:
    bpy.utils.register_class(XOF_FH_import_x)


def unregister() -> None:
    bpy.utils.unregister_class(XOF_FH_import_x)
