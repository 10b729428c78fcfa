"""Add Shape Keys from .X: the meshes of one or more .x files as shape keys of the active mesh.

Headless: ``bpy.ops.xof.shape_keys_from_x(filepath=path)`` or with ``directory`` + ``files``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import bpy
from bpy.props import CollectionProperty, FloatProperty, StringProperty
from bpy_extras.io_utils import ImportHelper, orientation_helper

from ..addon.scene.morph.shape_key_import import add_meshes_as_shape_keys
from ..addon.xfile import XFileError, read, scene_of

if TYPE_CHECKING:
    from bpy.stub_internal.rna_enums import OperatorReturnItems

    from ..addon.xfile.views.model import SceneData


def scene_of_file(path: Path) -> SceneData:
    """The typed views of one file."""
    return scene_of(read(str(path)))


# The importer's axis defaults, so keys line up with meshes it imported.
@orientation_helper(axis_forward="Z", axis_up="Y")  # type: ignore[func-returns-value]
class XOF_OT_shape_keys_from_x(bpy.types.Operator, ImportHelper):  # type: ignore[misc]
    """Add the meshes of .X files as shape keys of the active mesh (matching vertex counts)"""

    bl_idname = "xof.shape_keys_from_x"
    bl_label = "Add Shape Keys from .X"
    bl_options = {"REGISTER", "UNDO"}

    filename_ext = ".x"
    filepath: StringProperty(subtype="FILE_PATH", options={"SKIP_SAVE"})  # type: ignore[valid-type]
    filter_glob: StringProperty(default="*.x;*.X", options={"HIDDEN"})  # type: ignore[valid-type]
    files: CollectionProperty(  # type: ignore[valid-type]
        type=bpy.types.OperatorFileListElement, options={"HIDDEN", "SKIP_SAVE"}
    )
    directory: StringProperty(subtype="DIR_PATH", options={"HIDDEN", "SKIP_SAVE"})  # type: ignore[valid-type]
    global_scale: FloatProperty(  # type: ignore[valid-type]
        name="Scale", default=1.0, min=1e-6, max=1e6, description="Scale of file positions"
    )

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        obj = context.active_object
        return obj is not None and obj.type == "MESH" and obj.mode == "OBJECT"

    def _paths(self) -> list[Path]:
        names = [f.name for f in self.files if f.name]
        if names and self.directory:
            return [Path(self.directory) / n for n in names]
        return [Path(self.filepath)] if self.filepath else []

    def execute(self, context: bpy.types.Context) -> set[OperatorReturnItems]:
        from ..addon.scene.imp.convert import Conversion

        obj = context.active_object
        if obj is None or obj.type != "MESH":
            self.report({"ERROR"}, "the active object must be a mesh")
            return {"CANCELLED"}
        try:
            conversion = Conversion.from_options(
                self.axis_forward,  # type: ignore[attr-defined]
                self.axis_up,  # type: ignore[attr-defined]
                self.global_scale,
            )
        except ValueError as error:
            self.report({"ERROR"}, str(error))
            return {"CANCELLED"}
        added: list[str] = []
        failed: list[str] = []
        for path in self._paths():
            try:
                data = scene_of_file(path)
            except (OSError, XFileError) as error:
                failed.append(str(error) if path.name in str(error) else f"{path.name}: {error}")
                continue
            outcome = add_meshes_as_shape_keys(obj, data, path.stem, conversion.positions)
            for warning in outcome.warnings:
                self.report({"WARNING"}, warning)
            added.extend(outcome.added)
        if not added:
            if failed:  # the read error is the news, not the missing mesh
                self.report({"ERROR"}, "; ".join(failed))
            else:
                count = len(obj.data.vertices)  # type: ignore[union-attr]
                self.report({"ERROR"}, f"no mesh with {count} vertices was found")
            return {"CANCELLED"}
        for message in failed:
            self.report({"WARNING"}, message)
        self.report({"INFO"}, f"added {len(added)} shape key(s): {', '.join(added)}")
        return {"FINISHED"}


def _menu_entry(self: bpy.types.Menu, context: bpy.types.Context) -> None:
    if self.layout is not None:
        self.layout.separator()
        self.layout.operator(XOF_OT_shape_keys_from_x.bl_idname, icon="SHAPEKEY_DATA")


def register() -> None:
    bpy.utils.register_class(XOF_OT_shape_keys_from_x)
    bpy.types.MESH_MT_shape_key_context_menu.append(_menu_entry)


def unregister() -> None:
    bpy.types.MESH_MT_shape_key_context_menu.remove(_menu_entry)
    bpy.utils.unregister_class(XOF_OT_shape_keys_from_x)
