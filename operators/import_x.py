"""File > Import > DirectX (.x): the import operator (also what drag and drop and scripts call)."""

from __future__ import annotations

import math
import os
import traceback
from pathlib import Path
from typing import TYPE_CHECKING

import bpy
from bpy.props import (
    BoolProperty,
    CollectionProperty,
    EnumProperty,
    FloatProperty,
    IntProperty,
    StringProperty,
)
from bpy_extras.io_utils import ImportHelper, orientation_helper

from ..addon.scene.imp.options import (
    DEFAULTS,
    AnimationOptions,
    ArmatureOptions,
    ClothOptions,
    FileOptions,
    MeshOptions,
    MorphImportOptions,
    TransformOptions,
)
from ..addon.scene.importer import ImportOptions, ImportResult, import_files
from ..addon.xfile import ENCODING_CHOICES, XFileError
from ..addon.xfile.errors import printable, shown_path
from . import anim_props

if TYPE_CHECKING:
    from bpy.stub_internal.rna_enums import OperatorReturnItems


@orientation_helper(  # type: ignore[func-returns-value]
    axis_forward=DEFAULTS.transform.axis_forward, axis_up=DEFAULTS.transform.axis_up
)
class IMPORT_SCENE_OT_x(bpy.types.Operator, ImportHelper):  # type: ignore[misc]
    """Import DirectX .X files (text, binary or compressed)"""

    bl_idname = "import_scene.x"
    bl_label = "Import DirectX (.x)"
    bl_options = {"REGISTER", "UNDO", "PRESET"}

    filename_ext = ".x"
    filter_glob: StringProperty(default="*.x;*.X", options={"HIDDEN"})  # type: ignore[valid-type]
    files: CollectionProperty(  # type: ignore[valid-type]
        type=bpy.types.OperatorFileListElement, options={"HIDDEN", "SKIP_SAVE"}
    )
    directory: StringProperty(subtype="DIR_PATH", options={"HIDDEN", "SKIP_SAVE"})  # type: ignore[valid-type]

    global_scale: FloatProperty(  # type: ignore[valid-type]
        name="Scale",
        description="Multiply positions and translations by this",
        default=DEFAULTS.transform.global_scale,
        min=1e-6,
        max=1e6,
        soft_min=0.001,
        soft_max=1000.0,
    )
    use_custom_normals: BoolProperty(  # type: ignore[valid-type]
        name="Custom Normals",
        description="Use the file's normals (MeshNormals) as custom split normals",
        default=DEFAULTS.mesh.use_custom_normals,
    )
    shading: EnumProperty(  # type: ignore[valid-type]
        name="Shading",
        description="Shading of meshes without normals (or when custom normals are off)",
        items=(
            ("SMOOTH", "Smooth", "Smooth shading (what D3D's computed normals give)"),
            ("FLAT", "Flat", "Flat shading"),
        ),
        default=DEFAULTS.mesh.shading,
    )
    use_uvs: BoolProperty(  # type: ignore[valid-type]
        name="UVs", description="Import every UV set", default=DEFAULTS.mesh.use_uvs
    )
    use_colors: BoolProperty(  # type: ignore[valid-type]
        name="Vertex Colors",
        description="Import vertex colours as a colour attribute",
        default=DEFAULTS.mesh.use_colors,
    )
    use_materials: BoolProperty(  # type: ignore[valid-type]
        name="Materials",
        description="Import materials and their textures",
        default=DEFAULTS.mesh.use_materials,
    )
    keep_empty_frames: BoolProperty(  # type: ignore[valid-type]
        name="Keep Empty Frames",
        description="Keep frames that hold no mesh (as empties)",
        default=DEFAULTS.mesh.keep_empty_frames,
    )
    morph_keep_targets: BoolProperty(  # type: ignore[valid-type]
        name="Keep Morph Targets",
        description="Keep the meshes that became shape keys as objects too",
        default=DEFAULTS.morphs.keep_targets,
    )
    morph_loop: BoolProperty(  # type: ignore[valid-type]
        name="Loop Morphs",
        description="Cycle every morph animation set, not only those whose file says Loop = 1",
        default=DEFAULTS.morphs.loop_all,
    )

    morph_targets_as_shape_keys: BoolProperty(  # type: ignore[valid-type]
        name="Targets as Shape Keys",
        description=(
            "In a file without morph sets whose meshes share a vertex count (facial targets), "
            "make the first mesh the Basis and the others its shape keys"
        ),
        default=DEFAULTS.morphs.targets_as_shape_keys,
    )
    morph_phoneme_map: StringProperty(  # type: ignore[valid-type]
        name="Phoneme Targets",
        description=(
            "Lip-sync files: the shape key of each of the 38 phonemes (0 silence, 1 AA ... 37 "
            "ZH), comma-separated; the book's map by default"
        ),
        default=DEFAULTS.morphs.phoneme_map,
    )
    cloth_enable: BoolProperty(  # type: ignore[valid-type]
        name="Simulate Cloth",
        description=(
            "Turn on xof's cloth simulation for meshes whose file gives ClothMasses or "
            "ClothSprings (the data is imported either way)"
        ),
        default=DEFAULTS.cloth.enable,
    )

    armature_every_frame: BoolProperty(  # type: ignore[valid-type]
        name="Bones From Every Frame",
        description=(
            "Make every frame a bone, not only the frames that skin or animate something "
            "and their ancestors"
        ),
        default=DEFAULTS.armature.every_frame,
    )
    animation_enabled: BoolProperty(  # type: ignore[valid-type]
        name="Import Animation",
        description="Import every AnimationSet as an action (the first plays, the others on NLA)",
        default=DEFAULTS.animation.enabled,
    )
    animation_scene_timing: BoolProperty(  # type: ignore[valid-type]
        name="Set Scene Timing",
        description=(
            "Set the scene's frame rate (when the key spacing shows one) and frame range "
            "from the file"
        ),
        default=DEFAULTS.animation.scene_timing,
    )
    animation_slerp_step: FloatProperty(  # type: ignore[valid-type]
        name="Slerp Step",
        description=(
            "Rotations turning more than this between keys get extra keys, so that Blender's "
            "interpolation follows the file's slerp; 0 keeps exactly the file's key times"
        ),
        subtype="ANGLE",
        default=DEFAULTS.animation.slerp_step,
        min=0.0,
        max=math.pi,
    )

    animation_ticks_per_second: anim_props.ticks_per_second()  # type: ignore[valid-type]
    animation_custom_ticks_per_second: anim_props.custom_ticks_per_second()  # type: ignore[valid-type]
    animation_sets: anim_props.animation_sets()  # type: ignore[valid-type]
    names_encoding: EnumProperty(  # type: ignore[valid-type]
        name="Names' Encoding",
        description="How the names inside the file are decoded (Auto guesses legacy code pages)",
        items=ENCODING_CHOICES,
        default=DEFAULTS.files.names_encoding,
    )
    texture_folders: StringProperty(  # type: ignore[valid-type]
        name="Texture Folders",
        description=(
            "More folders to take textures from, separated by ';' (else textures are only "
            "taken from the .x file's folder tree and the folders beside it)"
        ),
        default=";".join(DEFAULTS.files.texture_folders),
    )

    max_inflated_mib: IntProperty(  # type: ignore[valid-type]
        name="Max Decompressed Size",
        description="MiB a compressed (tzip/bzip) file may decompress to; a file declaring "
        "more is refused before it is decompressed",
        default=DEFAULTS.files.max_inflated >> 20, min=1, max=1 << 30, subtype="NONE",
    )  # fmt: skip
    max_inflate_ratio: FloatProperty(  # type: ignore[valid-type]
        name="Max Compression Ratio",
        description="How many times its own size a compressed file past 64 MiB decompressed "
        "may grow (real files: 3-10x; a decompression bomb: hundreds)",
        default=DEFAULTS.files.max_inflate_ratio, min=1.0, max=1e6,
    )  # fmt: skip

    def import_options(self) -> ImportOptions:
        folders = tuple(f.strip() for f in self.texture_folders.split(";") if f.strip())
        return ImportOptions(
            files=FileOptions(
                names_encoding=self.names_encoding,
                texture_folders=folders,
                max_inflated=self.max_inflated_mib << 20,
                max_inflate_ratio=self.max_inflate_ratio,
            ),
            transform=TransformOptions(
                axis_forward=self.axis_forward,  # type: ignore[attr-defined]
                axis_up=self.axis_up,  # type: ignore[attr-defined]
                global_scale=self.global_scale,
            ),
            mesh=MeshOptions(
                use_custom_normals=self.use_custom_normals,
                shading=self.shading,
                use_uvs=self.use_uvs,
                use_colors=self.use_colors,
                use_materials=self.use_materials,
                keep_empty_frames=self.keep_empty_frames,
            ),
            armature=ArmatureOptions(every_frame=self.armature_every_frame),
            animation=AnimationOptions(
                enabled=self.animation_enabled,
                scene_timing=self.animation_scene_timing,
                slerp_step=self.animation_slerp_step,
                ticks_per_second=self.animation_ticks_per_second,
                custom_ticks_per_second=self.animation_custom_ticks_per_second,
                animation_sets=self.animation_sets,
            ),
            morphs=MorphImportOptions(
                keep_targets=self.morph_keep_targets,
                loop_all=self.morph_loop,
                targets_as_shape_keys=self.morph_targets_as_shape_keys,
                phoneme_map=self.morph_phoneme_map,
            ),
            cloth=ClothOptions(enable=self.cloth_enable),
        )

    def paths(self) -> list[str | Path]:
        """The files to import: ``directory`` + ``files`` when given, else ``filepath``."""
        if self.directory and len(self.files):
            names = [f.name for f in self.files if f.name]
            if names:
                return [os.path.join(self.directory, name) for name in names]
        filepath: str = self.filepath  # type: ignore[attr-defined]
        return [filepath] if filepath else []

    def invoke(  # type: ignore[override]
        self, context: bpy.types.Context, event: bpy.types.Event
    ) -> set[OperatorReturnItems]:
        # dropped files (filepath already set): an options popup; else the file browser
        return self.invoke_popup(context)  # type: ignore[func-returns-value,return-value]

    def execute(self, context: bpy.types.Context) -> set[OperatorReturnItems]:
        paths = self.paths()
        if not paths:
            self.report({"ERROR"}, "No file given")
            return {"CANCELLED"}
        try:
            result = import_files(paths, self.import_options(), context.collection)
        except XFileError as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        except Exception as exc:
            traceback.print_exc()
            # printable: a file name's undecodable bytes as \xNN (a report is UTF-8)
            names = ", ".join(shown_path(p) for p in paths)
            self.report(
                {"ERROR"}, f"{names}: import failed: {type(exc).__name__}: {printable(str(exc))}"
            )
            return {"CANCELLED"}
        select_result(context, result)
        for warning in result.warnings:
            print(f"xof: warning: {printable(warning)}")
        for note in result.notes:
            print(f"xof: {printable(note)}")
        summary = printable(result.summary())
        self.report({"WARNING"} if result.warnings else {"INFO"}, summary)
        return {"FINISHED"}

    def draw(self, context: bpy.types.Context) -> None:
        layout = self.layout
        assert layout is not None
        layout.use_property_split = True
        layout.use_property_decorate = False
        header, body = layout.panel("XOF_import_include", default_closed=False)
        header.label(text="Include")
        if body:
            body.prop(self, "use_materials")
            body.prop(self, "use_uvs")
            body.prop(self, "use_colors")
            body.prop(self, "keep_empty_frames")
            body.prop(self, "texture_folders")
            body.prop(self, "names_encoding")
            body.prop(self, "max_inflated_mib")
            body.prop(self, "max_inflate_ratio")
        header, body = layout.panel("XOF_import_geometry", default_closed=False)
        header.label(text="Geometry")
        if body:
            body.prop(self, "use_custom_normals")
            body.prop(self, "shading")
        header, body = layout.panel("XOF_import_armature", default_closed=True)
        header.label(text="Armature")
        if body:
            body.prop(self, "armature_every_frame")
        header, body = layout.panel("XOF_import_animation", default_closed=True)
        header.label(text="Animation")
        if body:
            body.prop(self, "animation_enabled")
            column = body.column()
            column.active = self.animation_enabled
            column.prop(self, "animation_scene_timing")
            column.prop(self, "animation_slerp_step")
            column.prop(self, "animation_ticks_per_second")
            if self.animation_ticks_per_second == "CUSTOM":
                column.prop(self, "animation_custom_ticks_per_second")
            column.prop(self, "animation_sets")
        header, body = layout.panel("XOF_import_morphs", default_closed=True)
        header.label(text="Morphs")
        if body:
            body.prop(self, "morph_keep_targets")
            body.prop(self, "morph_loop")
            body.prop(self, "morph_targets_as_shape_keys")
            body.prop(self, "morph_phoneme_map")
        header, body = layout.panel("XOF_import_cloth", default_closed=True)
        header.label(text="Cloth")
        if body:
            body.prop(self, "cloth_enable")
        header, body = layout.panel("XOF_import_transform", default_closed=False)
        header.label(text="Transform")
        if body:
            body.prop(self, "global_scale")
            body.prop(self, "axis_forward")
            body.prop(self, "axis_up")


def select_result(context: bpy.types.Context, result: ImportResult) -> None:
    """Select what was imported (only that), with the first root active, like other importers."""
    view_layer = context.view_layer
    if view_layer is None or not result.objects:
        return
    view_layer.update()  # steps may have removed objects: resync the layer's bases first
    layer_objects = [o for o in view_layer.objects if o is not None]
    in_layer = {o.as_pointer() for o in layer_objects}
    for obj in layer_objects:
        obj.select_set(False)
    for obj in result.objects:
        if obj.as_pointer() in in_layer:
            obj.select_set(True)
    first = next((o for o in result.roots if o.as_pointer() in in_layer), None)
    if first is not None:
        view_layer.objects.active = first


CLASSES = (IMPORT_SCENE_OT_x,)


def register() -> None:
    for cls in CLASSES:
        bpy.utils.register_class(cls)


def unregister() -> None:
    for cls in reversed(CLASSES):
        bpy.utils.unregister_class(cls)
