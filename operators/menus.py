"""Menu entries: File > Import > DirectX (.x)."""

from __future__ import annotations

import bpy

from .import_x import IMPORT_SCENE_OT_x


def menu_import(self: bpy.types.Menu, context: bpy.types.Context) -> None:
    layout = self.layout
    if layout is not None:
        layout.operator(IMPORT_SCENE_OT_x.bl_idname, text="DirectX (.x)")


def register() -> None:
    bpy.types.TOPBAR_MT_file_import.append(menu_import)


def unregister() -> None:
    bpy.types.TOPBAR_MT_file_import.remove(menu_import)
