"""File > Export > DirectX (.x): the export operator (also what scripts call headless)."""

from __future__ import annotations

import traceback
from typing import TYPE_CHECKING

import bpy
from bpy.props import BoolProperty, EnumProperty, FloatProperty, IntProperty, StringProperty
from bpy_extras.io_utils import ExportHelper, orientation_helper

from ..addon.scene.export.exporter import export_scene
from ..addon.scene.export.plan.options import ExportOptions
from ..addon.xfile import XFileError
from ..addon.xfile.errors import printable, shown_path

if TYPE_CHECKING:
    from bpy.stub_internal.rna_enums import OperatorReturnItems


@orientation_helper(axis_forward="Z", axis_up="Y")  # type: ignore[func-returns-value]
class EXPORT_SCENE_OT_x(bpy.types.Operator, ExportHelper):  # type: ignore[misc]
    """Export DirectX .X (text, binary or compressed) with skins, animation, morphs, cloth"""

    bl_idname = "export_scene.x"
    bl_label = "Export DirectX (.x)"
    bl_options = {"REGISTER", "PRESET"}

    filename_ext = ".x"
    filter_glob: StringProperty(default="*.x;*.X", options={"HIDDEN"})  # type: ignore[valid-type]

    use_selection: BoolProperty(name="Selected Only", default=False)  # type: ignore[valid-type]
    use_visible: BoolProperty(name="Visible Only", default=False)  # type: ignore[valid-type]
    apply_modifiers: BoolProperty(  # type: ignore[valid-type]
        name="Apply Modifiers",
        description="Write meshes with their modifiers (never the Armature modifier)",
        default=False,
    )
    global_scale: FloatProperty(  # type: ignore[valid-type]
        name="Scale", description="The import scale this file is read with", default=1.0,
        min=1e-6, max=1e6,
    )  # fmt: skip
    file_format: EnumProperty(  # type: ignore[valid-type]
        name="Format",
        items=(
            ("txt", "Text", "Readable text"),
            ("bin", "Binary", "Binary tokens"),
            ("tzip", "Compressed Text", "MSZIP-compressed text"),
            ("bzip", "Compressed Binary", "MSZIP-compressed binary"),
        ),
        default="txt",
    )
    compatibility: EnumProperty(  # type: ignore[valid-type]
        name="Compatibility",
        items=(
            ("D3DX9", "D3DX 9", "What D3DX 9 reads: xof 0303, n-gons, every weight, "
             "the cloth and morph templates declared in the file"),
            ("LEGACY", "Legacy", "For stricter readers (old game engines): xof 0302, standard "
             "templates only, no template declarations, triangles, at most 4 weights a "
             "vertex, ASCII names"),
        ),
        default="D3DX9",
    )  # fmt: skip
    float_bits: EnumProperty(  # type: ignore[valid-type]
        name="Floats", items=(("32", "32-bit", ""), ("64", "64-bit", "")), default="32"
    )
    use_normals: BoolProperty(name="Normals", default=True)  # type: ignore[valid-type]
    use_uvs: BoolProperty(name="UVs", default=True)  # type: ignore[valid-type]
    use_colors: BoolProperty(name="Vertex Colors", default=True)  # type: ignore[valid-type]
    use_materials: BoolProperty(name="Materials", default=True)  # type: ignore[valid-type]
    use_skin: BoolProperty(name="Skinning", default=True)  # type: ignore[valid-type]
    use_animation: BoolProperty(name="Animation", default=True)  # type: ignore[valid-type]
    use_morphs: BoolProperty(name="Morphs", default=True)  # type: ignore[valid-type]
    use_cloth: BoolProperty(name="Cloth", default=True)  # type: ignore[valid-type]
    path_mode: EnumProperty(  # type: ignore[valid-type]
        name="Path Mode",
        description="How texture paths are written",
        items=(
            ("AUTO", "Auto", "Relative when the image is in the file's folder (or below it), "
             "else copied beside the file: what a re-import or a shared folder finds"),
            ("COPY", "Copy", "Copy every image beside the file and write plain names"),
            ("RELATIVE", "Relative", "Relative to the file wherever the image is "
             "(the importer refuses paths that leave the model's folder)"),
            ("ABSOLUTE", "Absolute", "Full paths"),
            ("STRIP", "Strip Path", "Plain file names, nothing copied"),
        ),
        default="AUTO",
    )  # fmt: skip
    bake_step: IntProperty(  # type: ignore[valid-type]
        name="Bake Key Step",
        description="A baked simulation is written as a morph set: one key mesh every N baked "
        "frames (D3D blends the meshes between keys)",
        default=1, min=1, max=1000,
    )  # fmt: skip
    ticks_per_second: IntProperty(  # type: ignore[valid-type]
        name="Ticks per Second",
        description="AnimTicksPerSecond; 0: the scene's frame rate when every key is on a "
        "whole frame (a re-import gets the rate back), else 4800",
        default=0, min=0, max=1_000_000,
    )  # fmt: skip

    def export_options(self) -> ExportOptions:
        return ExportOptions(
            axis_forward=self.axis_forward,  # type: ignore[attr-defined]
            axis_up=self.axis_up,  # type: ignore[attr-defined]
            global_scale=self.global_scale,
            use_selection=self.use_selection,
            use_visible=self.use_visible,
            apply_modifiers=self.apply_modifiers,
            format=self.file_format,
            compatibility=self.compatibility,
            float_bits=int(self.float_bits),
            use_normals=self.use_normals,
            use_uvs=self.use_uvs,
            use_colors=self.use_colors,
            use_materials=self.use_materials,
            use_skin=self.use_skin,
            use_animation=self.use_animation,
            use_morphs=self.use_morphs,
            use_cloth=self.use_cloth,
            bake_step=self.bake_step,
            path_mode=self.path_mode,
            ticks_per_second=self.ticks_per_second,
        )

    def execute(self, context: bpy.types.Context) -> set[OperatorReturnItems]:
        try:
            result = export_scene(self.filepath, self.export_options(), context)  # type: ignore[attr-defined]
        except (XFileError, OSError) as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        except Exception as exc:
            traceback.print_exc()
            why = printable(f"{type(exc).__name__}: {exc}")  # a report is UTF-8: \xNN for bytes
            self.report({"ERROR"}, f"{shown_path(self.filepath)}: export failed: {why}")  # type: ignore[attr-defined]
            return {"CANCELLED"}
        for warning in result.warnings:
            print(f"xof: warning: {printable(warning)}")
        self.report({"WARNING"} if result.warnings else {"INFO"}, printable(result.summary()))
        return {"FINISHED"}


def menu_export(self: bpy.types.Menu, context: bpy.types.Context) -> None:
    self.layout.operator(EXPORT_SCENE_OT_x.bl_idname, text="DirectX (.x)")  # type: ignore[union-attr]


def register() -> None:
    bpy.utils.register_class(EXPORT_SCENE_OT_x)
    bpy.types.TOPBAR_MT_file_export.append(menu_export)


def unregister() -> None:
    bpy.types.TOPBAR_MT_file_export.remove(menu_export)
    bpy.utils.unregister_class(EXPORT_SCENE_OT_x)
