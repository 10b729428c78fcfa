"""The "xof Cloth / Soft Body" panel in the Physics properties tab, for any mesh."""

from __future__ import annotations

from typing import Any

import bpy

from ..addon.scene.cloth.object_solver import needs_confirmation


class XOF_PT_physics(bpy.types.Panel):
    """Settings, cache state and bake buttons of the object's xof simulation"""

    bl_label = "xof Cloth / Soft Body"
    bl_idname = "XOF_PT_physics"
    bl_space_type = "PROPERTIES"
    bl_region_type = "WINDOW"
    bl_context = "physics"
    bl_options = {"DEFAULT_CLOSED"}

    @classmethod
    def poll(cls, context: Any) -> bool:
        obj = context.object
        return obj is not None and obj.type == "MESH"

    def draw_header(self, context: Any) -> None:
        if self.layout is not None:
            self.layout.prop(context.object.xof_physics, "enabled", text="")

    def draw(self, context: Any) -> None:
        layout = self.layout
        if layout is None:
            return
        layout.use_property_split = True
        obj = context.object
        props = obj.xof_physics
        layout.enabled = props.enabled
        baked = props.cache_state == "BAKED"

        col = layout.column()
        col.enabled = not baked
        col.prop(props, "sim_type")
        col.prop(props, "solver")
        col.prop_search(props, "mass_group", obj, "vertex_groups")
        col.prop(props, "springs_source")
        row = col.row(heading="Extra Springs")
        row.prop(props, "use_shear", text="Shear", toggle=True)
        row.prop(props, "use_bend", text="Bend", toggle=True)
        col.separator()
        col.prop(props, "stiffness")
        sub = col.column(align=True)
        sub.active = props.use_shear
        sub.prop(props, "shear_stiffness")
        sub = col.column(align=True)
        sub.active = props.use_bend
        sub.prop(props, "bend_stiffness")
        col.prop(props, "damping")
        if props.solver == "CLASSIC":
            col.prop(props, "spring_damping")
        col.prop(props, "drag")
        col.prop(props, "gravity")
        col.prop(props, "wind")
        col.prop(props, "wind_model")
        col.prop(props, "time_scale")
        col.prop(props, "substeps")
        if props.solver == "CLASSIC":
            col.prop(props, "max_substeps")
        if props.sim_type == "SOFT":
            col.prop(props, "shape_stiffness")
        col.separator()
        col.prop(props, "collider_collection")
        sub = col.column(align=True)
        sub.active = props.collider_collection is not None
        sub.prop(props, "friction")
        sub.prop(props, "collision_margin")
        if props.sim_type == "CLOTH":
            row = col.row(heading="Self Collision")
            row.prop(props, "self_collision", text="")
            sub = row.row()
            sub.active = props.self_collision
            sub.prop(props, "self_distance", text="Distance")

        box = layout.box()
        row = box.row(align=True)
        row.enabled = not baked
        row.prop(props, "frame_start")
        row.prop(props, "frame_end")
        box.label(text=f"Cache: {props.cache_state.title()}", icon="PHYSICS")
        box.prop(context.scene, "xof_cloth_helpers")
        if props.enabled and needs_confirmation(obj):  # a big cloth builds on this button only
            points = len(obj.data.vertices)
            box.operator("xof.sim_build", icon="MOD_CLOTH", text=f"Build ({points:,} points)")
        if props.last_warning:
            box.label(text=props.last_warning, icon="ERROR")
        box.prop(props, "bake_target")
        if props.bake_target == "PC2":
            box.prop(props, "bake_path")
        row = box.row(align=True)
        row.operator("xof.sim_reset", icon="FILE_REFRESH")
        if baked:
            row.operator("xof.sim_free_bake", icon="TRASH")
        else:
            row.operator("xof.sim_bake", icon="REC")


class XOF_PT_collider(bpy.types.Panel):
    """How this object collides with xof cloth that has it in its collider collection"""

    bl_label = "xof Collider"
    bl_idname = "XOF_PT_collider"
    bl_space_type = "PROPERTIES"
    bl_region_type = "WINDOW"
    bl_context = "physics"
    bl_options = {"DEFAULT_CLOSED"}

    @classmethod
    def poll(cls, context: Any) -> bool:
        obj = context.object
        return obj is not None and obj.type in {"MESH", "CURVE", "SURFACE", "FONT", "META"}

    def draw(self, context: Any) -> None:
        layout = self.layout
        if layout is None:
            return
        layout.use_property_split = True
        obj = context.object
        props = obj.xof_physics
        col = layout.column()
        col.prop(props, "collider_shape")
        if any(m.type == "COLLISION" for m in obj.modifiers):
            col.label(text="Thickness and friction: the Collision modifier's", icon="INFO")
            return
        sub = col.column()
        sub.active = props.collider_shape == "SURFACE"
        sub.prop(props, "collider_thickness")
        sub.prop(props, "collider_single_sided")
        row = sub.row()
        row.active = props.collider_single_sided
        row.prop(props, "collider_inner")
        row = col.row(heading="Own Friction")
        row.prop(props, "collider_use_friction", text="")
        sub = row.row()
        sub.active = props.collider_use_friction
        sub.prop(props, "collider_friction", text="")


def register() -> None:
    bpy.utils.register_class(XOF_PT_physics)
    bpy.utils.register_class(XOF_PT_collider)


def unregister() -> None:
    bpy.utils.unregister_class(XOF_PT_collider)
    bpy.utils.unregister_class(XOF_PT_physics)
