"""Reset, Build, Bake and Free Bake for an object's xof simulation."""

from __future__ import annotations

import os
from typing import Any, Literal

import bpy

from ..addon.scene.cloth import bake as cloth_bake
from ..addon.scene.cloth import runtime as cloth_runtime
from ..addon.scene.cloth import together
from ..addon.scene.cloth.object_solver import needs_confirmation, unconfirmed_note

Result = set[Literal["RUNNING_MODAL", "CANCELLED", "FINISHED", "PASS_THROUGH", "INTERFACE"]]


def _sim_object(context: Any) -> Any:
    obj = context.object
    if obj is None or obj.type != "MESH" or not obj.xof_physics.enabled:
        return None
    return obj


def pc2_path(obj: Any) -> str:
    """Where the .pc2 goes (absolute): the user's path, else next to the saved .blend, named
    after the .blend and the object, with a number added while another object's Mesh Cache
    modifier reads that file ("Flag.001" and "Flag_001" both clean to "Flag_001")."""
    props = obj.xof_physics
    if props.bake_path:
        return os.path.normpath(str(bpy.path.abspath(props.bake_path)))
    if not bpy.data.filepath:
        raise RuntimeError("save the .blend first or set a PC2 file path")
    folder = os.path.dirname(bpy.data.filepath)
    stem = os.path.splitext(os.path.basename(bpy.data.filepath))[0]
    base = f"{stem}_{bpy.path.clean_name(obj.name)}"
    path = os.path.join(folder, f"{base}.pc2")
    number = 2
    while cloth_bake.cache_readers(path, obj):  # at most one pass per Mesh Cache modifier
        path = os.path.join(folder, f"{base}_{number}.pc2")
        number += 1
    return path


class XOF_OT_sim_reset(bpy.types.Operator):
    """Free the cached frames and put the mesh back in its rest shape"""

    bl_idname = "xof.sim_reset"
    bl_label = "Reset Simulation"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context: Any) -> bool:
        obj = _sim_object(context)
        return obj is not None and obj.xof_physics.cache_state != "BAKED"

    def execute(self, context: Any) -> Result:
        obj = _sim_object(context)
        cloth_runtime.free_cache(obj)
        cloth_runtime.forget(obj)
        cloth_runtime.restore_rest(obj)
        return {"FINISHED"}


class XOF_OT_sim_build(bpy.types.Operator):
    """Build the cloth's solver now, with progress (a big cloth waits for this: building one
    takes seconds and much memory, so a frame change alone does not start it)"""

    bl_idname = "xof.sim_build"
    bl_label = "Build Cloth"
    bl_options = {"REGISTER"}

    confirmed: bpy.props.BoolProperty(  # type: ignore[valid-type]
        name="Confirmed",
        description="Build a big cloth without asking (the dialog's OK sets it)",
        default=False,
        options={"SKIP_SAVE", "HIDDEN"},
    )

    @classmethod
    def poll(cls, context: Any) -> bool:
        obj = _sim_object(context)
        return obj is not None and obj.xof_physics.cache_state != "BAKED"

    def invoke(self, context: Any, event: Any) -> Result:
        obj = _sim_object(context)
        if not needs_confirmation(obj):
            return self.execute(context)
        self.confirmed = True  # the dialog calls execute only on OK
        return context.window_manager.invoke_confirm(
            self,
            event,
            title=f"Build the cloth of {obj.name}?",
            message=unconfirmed_note(obj),
            confirm_text="Build",
        )

    def execute(self, context: Any) -> Result:
        obj = _sim_object(context)
        if needs_confirmation(obj) and not self.confirmed:
            self.report({"WARNING"}, unconfirmed_note(obj))
            return {"CANCELLED"}
        points = len(obj.data.vertices)
        props = obj.xof_physics
        props.confirmed_points = max(int(props.confirmed_points), points)
        props.last_warning = ""
        scene = context.scene
        try:
            cloth_runtime.runtime_for(obj, scene)
            together.update_object(obj, scene, context.evaluated_depsgraph_get())
        except (RuntimeError, ValueError, MemoryError) as exc:
            self.report({"ERROR"}, f"Build failed: {exc}")
            return {"CANCELLED"}
        self.report({"INFO"}, f"Built the cloth of {obj.name} ({points:,} points)")
        return {"FINISHED"}


class XOF_OT_sim_bake(bpy.types.Operator):
    """Simulate the frame range and bake it to shape keys or a .pc2 file"""

    bl_idname = "xof.sim_bake"
    bl_label = "Bake"
    bl_options = {"REGISTER"}

    @classmethod
    def poll(cls, context: Any) -> bool:
        obj = _sim_object(context)
        return obj is not None and obj.xof_physics.cache_state != "BAKED"

    def execute(self, context: Any) -> Result:
        obj = _sim_object(context)
        props = obj.xof_physics
        if needs_confirmation(obj):
            self.report({"ERROR"}, f"Bake failed: {unconfirmed_note(obj)}")
            return {"CANCELLED"}
        try:
            path = pc2_path(obj) if props.bake_target == "PC2" else None
            if path is not None:  # refused before simulating: a file not ours to replace
                cloth_bake.check_pc2_target(obj, path)
            else:
                cloth_bake.check_shape_key_target(obj)
            start, frames = cloth_bake.simulate_range(context.scene, obj)
            if path is not None:
                cloth_bake.bake_pc2(obj, start, frames, path)
            else:
                cloth_bake.bake_shape_keys(obj, start, frames)
        except (RuntimeError, ValueError, OSError) as exc:
            self.report({"ERROR"}, f"Bake failed: {exc}")
            return {"CANCELLED"}
        cloth_runtime.set_baked(obj, True)
        self.report({"INFO"}, f"Baked {len(frames)} frames of {obj.name}")
        return {"FINISHED"}


class XOF_OT_sim_free_bake(bpy.types.Operator):
    """Remove the baked shape keys or Mesh Cache modifier; the live simulation takes over"""

    bl_idname = "xof.sim_free_bake"
    bl_label = "Free Bake"
    bl_options = {"REGISTER", "UNDO"}

    delete_file: bpy.props.BoolProperty(  # type: ignore[valid-type]
        name="Delete the .pc2 File",
        description="Also delete the point cache file the bake wrote",
        default=False,
    )

    @classmethod
    def poll(cls, context: Any) -> bool:
        obj = _sim_object(context)
        return obj is not None and obj.xof_physics.cache_state == "BAKED"

    def invoke(self, context: Any, event: Any) -> Result:
        path = cloth_bake.baked_file(_sim_object(context))
        if path is not None:
            width = min(max(300, 7 * len(path)), 1200)  # wide enough for the full path
            return context.window_manager.invoke_props_dialog(self, width=width)
        return self.execute(context)

    def draw(self, context: Any) -> None:
        lines = dialog_lines(_sim_object(context))
        if self.layout is None or lines is None:
            return
        path, kept = lines
        self.layout.label(text=path, icon="FILE")
        if kept is None:
            self.layout.prop(self, "delete_file")
        else:
            self.layout.label(text=kept, icon="INFO")

    def execute(self, context: Any) -> Result:
        obj = _sim_object(context)
        path = cloth_bake.baked_file(obj)
        keep = cloth_bake.why_not_delete(obj, path) if self.delete_file and path else None
        cloth_bake.free_bake(obj)
        cloth_runtime.set_baked(obj, False)
        if self.delete_file and path is not None and keep is not None:
            self.report({"WARNING"}, f"Bake freed; {path} kept: {keep}")
        elif self.delete_file and path is not None:
            try:
                os.remove(path)
            except OSError as exc:
                self.report({"WARNING"}, f"Bake freed; {path} not deleted: {exc}")
            else:
                self.report({"INFO"}, f"Deleted {path}")
        together.update_object(obj, context.scene, context.evaluated_depsgraph_get())
        return {"FINISHED"}


def dialog_lines(obj: Any) -> tuple[str, str | None] | None:
    """What the Free Bake dialog shows: the full path of the baked file and, when Free Bake
    keeps it whatever is asked, why (None: no file to delete)."""
    path = cloth_bake.baked_file(obj)
    if path is None:
        return None
    keep = cloth_bake.why_not_delete(obj, path)
    return path, None if keep is None else f"The file is kept: {keep}"


_CLASSES = (XOF_OT_sim_reset, XOF_OT_sim_build, XOF_OT_sim_bake, XOF_OT_sim_free_bake)


def register() -> None:
    for cls in _CLASSES:
        bpy.utils.register_class(cls)


def unregister() -> None:
    for cls in reversed(_CLASSES):
        bpy.utils.unregister_class(cls)
