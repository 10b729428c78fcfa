"""File > Import > DirectX Animation onto Armature: a file's AnimationSets on the active rig."""

from __future__ import annotations

import bpy
from bpy.props import BoolProperty, StringProperty
from bpy_extras.io_utils import ImportHelper, orientation_helper

from ..addon.scene.anim.animation_only import import_animation_file
from ..addon.scene.imp.options import DEFAULTS, AnimationOptions, TransformOptions
from ..addon.scene.importer import ImportOptions
from ..addon.xfile import XFileError
from ..addon.xfile.errors import printable
from . import anim_props


@orientation_helper(  # type: ignore[func-returns-value]
    axis_forward=DEFAULTS.transform.axis_forward, axis_up=DEFAULTS.transform.axis_up
)
class IMPORT_ANIM_OT_x_onto_armature(bpy.types.Operator, ImportHelper):  # type: ignore[misc]
    """Apply a DirectX .X file's animation sets to the active armature, bone by bone name"""

    bl_idname = "import_anim.x_onto_armature"
    bl_label = "Import DirectX Animation (.x)"
    bl_options = {"REGISTER", "UNDO"}

    filename_ext = ".x"
    filter_glob: StringProperty(default="*.x;*.X", options={"HIDDEN"})  # type: ignore[valid-type]
    scene_timing: BoolProperty(  # type: ignore[valid-type]
        name="Scene Frame Rate and Range",
        description="Set the scene's frame rate (when the keys show one) and range from the file",
        default=DEFAULTS.animation.scene_timing,
    )

    ticks_per_second: anim_props.ticks_per_second()  # type: ignore[valid-type]
    custom_ticks_per_second: anim_props.custom_ticks_per_second()  # type: ignore[valid-type]
    animation_sets: anim_props.animation_sets()  # type: ignore[valid-type]

    strip_prefix: StringProperty(  # type: ignore[valid-type]
        name="Strip Prefix",
        description=(
            "Remove this from the file's frame names before matching bones (names ending in "
            "a bone's name after _ : | . - match anyway when only one bone fits)"
        ),
        default=DEFAULTS.animation.strip_prefix,
    )

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        obj = context.active_object
        return obj is not None and obj.type == "ARMATURE"

    def execute(self, context: bpy.types.Context) -> set[str]:  # type: ignore[override]
        armature = context.active_object
        if armature is None or armature.type != "ARMATURE":
            self.report({"ERROR"}, "Select an armature first")
            return {"CANCELLED"}
        options = ImportOptions(
            transform=TransformOptions(
                axis_forward=self.axis_forward,  # type: ignore[attr-defined]
                axis_up=self.axis_up,  # type: ignore[attr-defined]
            ),
            animation=AnimationOptions(
                scene_timing=self.scene_timing,
                ticks_per_second=self.ticks_per_second,
                custom_ticks_per_second=self.custom_ticks_per_second,
                animation_sets=self.animation_sets,
                strip_prefix=self.strip_prefix,
            ),
        )
        filepath: str = self.filepath  # type: ignore[attr-defined]
        try:
            result = import_animation_file(filepath, armature, options, self.scene_timing)
        except (XFileError, OSError) as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        for warning in result.warnings:
            self.report({"WARNING"}, printable(warning))
        for note in result.notes:
            self.report({"INFO"}, printable(note))
        self.report(
            {"INFO"},
            f"{len(result.actions)} action(s) on {armature.name}: {len(result.matched)} bones "
            f"matched, {len(result.unmatched)} names unmatched",
        )
        return {"FINISHED"}


def menu_func(self: bpy.types.Menu, context: bpy.types.Context) -> None:
    if self.layout is not None:
        self.layout.operator(
            IMPORT_ANIM_OT_x_onto_armature.bl_idname, text="DirectX Animation (.x)"
        )


def register() -> None:
    bpy.utils.register_class(IMPORT_ANIM_OT_x_onto_armature)
    bpy.types.TOPBAR_MT_file_import.append(menu_func)


def unregister() -> None:
    bpy.types.TOPBAR_MT_file_import.remove(menu_func)
    bpy.utils.unregister_class(IMPORT_ANIM_OT_x_onto_armature)
