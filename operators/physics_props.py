"""Per-object cloth / soft-body settings (``Object.xof_physics``), saved with the .blend.

Every simulation setting bumps ``settings_revision`` and marks the cache outdated when it
changes, as Blender's own point cache does; the frame handler rebuilds the solver from the
new values on the next frame.
"""

from __future__ import annotations

import bpy
from bpy.props import (
    BoolProperty,
    EnumProperty,
    FloatProperty,
    FloatVectorProperty,
    IntProperty,
    PointerProperty,
    StringProperty,
)

from ..addon.scene.cloth import switch as cloth_switch
from ..addon.scene.cloth.data import MASS_GROUP
from ..addon.sim import MAX_FRAME_SUBSTEPS, SimSettings


def _changed(self: XOF_PG_physics, context: bpy.types.Context) -> None:
    """A simulation setting changed: rebuild the solver, the cache is now outdated."""
    obj = self.id_data
    if isinstance(obj, bpy.types.Object):
        frame = context.scene.frame_current if context.scene else self.frame_start
        cloth_switch.settings_changed(obj, frame)
    else:
        self.settings_revision += 1


def _type_changed(self: XOF_PG_physics, context: bpy.types.Context) -> None:
    """Switching cloth / soft body picks that kind's solver defaults (substeps, drag, shape)."""
    base = SimSettings.soft_body() if self.sim_type == "SOFT" else SimSettings.cloth()
    self.substeps = base.substeps
    self.drag = base.drag
    self.shape_stiffness = base.shape_stiffness
    _changed(self, context)


def _enabled_changed(self: XOF_PG_physics, context: bpy.types.Context) -> None:
    obj = self.id_data
    if not isinstance(obj, bpy.types.Object) or obj.type != "MESH":
        return
    cloth_switch.enabled_changed(obj)
    _changed(self, context)


class XOF_PG_physics(bpy.types.PropertyGroup):
    """Cloth or soft-body simulation of one mesh object, run by xof's frame handler."""

    enabled: BoolProperty(  # type: ignore[valid-type]
        name="xof Simulation",
        description="Simulate this mesh as cloth or a soft body while the timeline plays",
        default=False,
        update=_enabled_changed,
    )
    sim_type: EnumProperty(  # type: ignore[valid-type]
        name="Type",
        items=[
            ("CLOTH", "Cloth", "Mass-spring cloth hanging from its pinned points"),
            ("SOFT", "Soft Body", "Springs plus a pull back to the original shape"),
        ],
        default="CLOTH",
        update=_type_changed,
    )
    solver: EnumProperty(  # type: ignore[valid-type]
        name="Solver",
        items=[
            ("XPBD", "XPBD", "Small-step position-based solver, stable at any stiffness"),
            ("CLASSIC", "Classic", "The book's explicit mass-spring model (needs many substeps)"),
        ],
        default="XPBD",
        update=_changed,
    )
    mass_group: StringProperty(  # type: ignore[valid-type]
        name="Mass Group",
        description="Vertex group whose weight is each point's mass (0 = pinned; "
        "points outside the group weigh 1)",
        default=MASS_GROUP,
        update=_changed,
    )
    springs_source: EnumProperty(  # type: ignore[valid-type]
        name="Springs",
        items=[
            (
                "FILE",
                "Marked Edges",
                "Edges marked in the 'cloth_spring' attribute (from the "
                "file's ClothSprings); face edges when the mesh has no marks",
            ),
            ("FACE_EDGES", "Face Edges", "One spring per unique face edge"),
        ],
        default="FILE",
        update=_changed,
    )
    use_shear: BoolProperty(  # type: ignore[valid-type]
        name="Shear Springs",
        description="Add springs across faces",
        default=True,
        update=_changed,
    )
    use_bend: BoolProperty(  # type: ignore[valid-type]
        name="Bend Springs",
        description="Add springs across two edges in a row",
        default=True,
        update=_changed,
    )
    stiffness: FloatProperty(  # type: ignore[valid-type]
        name="Stiffness",
        description="Structural spring constant (N/m)",
        default=1.0e6,
        min=0.0,
        soft_max=1.0e7,
        update=_changed,
    )
    shear_stiffness: FloatProperty(  # type: ignore[valid-type]
        name="Shear",
        description="Shear spring constant (N/m)",
        default=1.0e4,
        min=0.0,
        soft_max=1.0e7,
        update=_changed,
    )
    bend_stiffness: FloatProperty(  # type: ignore[valid-type]
        name="Bend",
        description="Bend spring constant (N/m)",
        default=5.0e2,
        min=0.0,
        soft_max=1.0e7,
        update=_changed,
    )
    spring_damping: FloatProperty(  # type: ignore[valid-type]
        name="Spring Damping",
        description="Damper along each spring (classic solver, N s/m)",
        default=0.0,
        min=0.0,
        update=_changed,
    )
    damping: FloatProperty(  # type: ignore[valid-type]
        name="Damping",
        description="Per-point velocity damping (N s/m)",
        default=0.0,
        min=0.0,
        update=_changed,
    )
    gravity: FloatVectorProperty(  # type: ignore[valid-type]
        name="Gravity",
        subtype="ACCELERATION",
        size=3,
        default=(0.0, 0.0, -9.81),
        update=_changed,
    )
    wind: FloatVectorProperty(  # type: ignore[valid-type]
        name="Wind",
        description="Wind force (N): on every free point, or per face with the Face model",
        size=3,
        default=(0.0, 0.0, 0.0),
        update=_changed,
    )
    wind_model: EnumProperty(  # type: ignore[valid-type]
        name="Wind Model",
        items=[
            ("UNIFORM", "Uniform", "The same wind force on every free point"),
            (
                "FACE",
                "Face",
                "The book's model: each face pushed along its normal by the wind's part "
                "across it, so the cloth turns and flutters",
            ),
        ],
        default="UNIFORM",
        update=_changed,
    )
    time_scale: FloatProperty(  # type: ignore[valid-type]
        name="Speed Multiplier",
        description="Simulated time per frame, as a multiple of the frame's time",
        default=1.0,
        min=0.001,
        soft_min=0.1,
        soft_max=10.0,
        update=_changed,
    )
    max_substeps: IntProperty(  # type: ignore[valid-type]
        name="Max Substeps",
        description=(
            "Classic solver: the most substeps its stability limit may use; stiffer springs "
            "are softened (with a warning)"
        ),
        default=400,
        min=1,
        max=10000,
        update=_changed,
    )
    drag: FloatProperty(  # type: ignore[valid-type]
        name="Air Drag",
        description="Drag acceleration per unit speed (1/s)",
        default=0.5,
        min=0.0,
        soft_max=10.0,
        update=_changed,
    )
    substeps: IntProperty(  # type: ignore[valid-type]
        name="Substeps",
        description="Solver steps per frame",
        default=12,
        min=1,
        max=MAX_FRAME_SUBSTEPS,  # hard: each substep costs time on every frame change
        soft_max=200,
        update=_changed,
    )
    shape_stiffness: FloatProperty(  # type: ignore[valid-type]
        name="Shape Stiffness",
        description="Soft body: fraction of the way back to the original shape per frame",
        default=0.5,
        min=0.0,
        max=1.0,
        update=_changed,
    )
    friction: FloatProperty(  # type: ignore[valid-type]
        name="Friction",
        default=0.3,
        min=0.0,
        max=1.0,
        update=_changed,
    )
    collision_margin: FloatProperty(  # type: ignore[valid-type]
        name="Collision Margin",
        subtype="DISTANCE",
        default=0.005,
        min=0.0,
        update=_changed,
    )
    collider_collection: PointerProperty(  # type: ignore[valid-type]
        name="Colliders",
        type=bpy.types.Collection,
        description=(
            "Objects to collide with: meshes (and curves, text) as their evaluated surface, "
            "empties as spheres or planes"
        ),
        update=_changed,
    )
    self_collision: BoolProperty(  # type: ignore[valid-type]
        name="Self Collision",
        description="Cloth: keep the cloth from passing through itself",
        default=False,
        update=_changed,
    )
    self_distance: FloatProperty(  # type: ignore[valid-type]
        name="Self Distance",
        description="Distance kept between the cloth's points and its own faces",
        subtype="DISTANCE",
        default=0.015,
        min=0.0,
        soft_max=0.1,
        update=_changed,
    )
    # how this object collides when it is in a simulated object's collider collection
    collider_shape: EnumProperty(  # type: ignore[valid-type]
        name="Collide As",
        items=[
            ("SURFACE", "Surface", "Its evaluated triangles, as shown at each frame"),
            ("SPHERE", "Sphere", "The sphere around its bounding box"),
            ("PLANE", "Plane", "The plane through its centre, normal to its flattest axis"),
        ],
        default="SURFACE",
    )
    collider_thickness: FloatProperty(  # type: ignore[valid-type]
        name="Thickness",
        description="Distance kept in front of the surface (a Collision modifier's wins)",
        subtype="DISTANCE",
        default=0.01,
        min=0.0,
        soft_max=0.2,
    )
    collider_single_sided: BoolProperty(  # type: ignore[valid-type]
        name="Single Sided",
        description="Points behind the surface (within Inner) are pushed out to the front",
        default=False,
    )
    collider_inner: FloatProperty(  # type: ignore[valid-type]
        name="Inner",
        description="Single sided: how far behind the surface points are still pushed out",
        subtype="DISTANCE",
        default=0.02,
        min=0.0,
        soft_max=0.5,
    )
    collider_use_friction: BoolProperty(  # type: ignore[valid-type]
        name="Own Friction",
        description="Use this object's friction instead of the simulated object's",
        default=False,
    )
    collider_friction: FloatProperty(  # type: ignore[valid-type]
        name="Friction",
        default=0.3,
        min=0.0,
        max=1.0,
    )
    frame_start: IntProperty(  # type: ignore[valid-type]
        name="Start",
        description="Frame the simulation starts (and resets) at",
        default=1,
        update=_changed,
    )
    frame_end: IntProperty(  # type: ignore[valid-type]
        name="End",
        default=250,
        update=_changed,
    )
    cache_state: EnumProperty(  # type: ignore[valid-type]
        name="Cache",
        items=[
            ("EMPTY", "Empty", "Nothing simulated yet"),
            ("VALID", "Valid", "Cached frames match the settings"),
            ("OUTDATED", "Outdated", "Settings changed after frames were cached"),
            ("BAKED", "Baked", "Baked to shape keys or a point cache file"),
        ],
        default="EMPTY",
    )
    bake_target: EnumProperty(  # type: ignore[valid-type]
        name="Bake To",
        items=[
            ("SHAPE_KEYS", "Shape Keys", "One shape key per frame, animated"),
            ("PC2", "PC2 File", "A .pc2 point cache read by a Mesh Cache modifier"),
        ],
        default="SHAPE_KEYS",
    )
    bake_path: StringProperty(  # type: ignore[valid-type]
        name="PC2 File",
        subtype="FILE_PATH",
        description="Where Bake writes the .pc2 file (empty: next to the .blend)",
        default="",
    )
    settings_revision: IntProperty(default=0, options={"HIDDEN"})  # type: ignore[valid-type]
    last_warning: StringProperty(default="", options={"HIDDEN"})  # type: ignore[valid-type]
    # the most points the user agreed to build a cloth of (xof.sim_build): bigger ones wait
    confirmed_points: IntProperty(default=0, min=0, options={"HIDDEN"})  # type: ignore[valid-type]


def register() -> None:
    bpy.utils.register_class(XOF_PG_physics)
    bpy.types.Object.xof_physics = PointerProperty(  # type: ignore[attr-defined,func-returns-value]
        type=XOF_PG_physics
    )
    bpy.types.Scene.xof_cloth_helpers = BoolProperty(  # type: ignore[attr-defined,func-returns-value]
        name="Helper Processes",
        description=(
            "Step many cloth objects partly in background Python processes on the other "
            "CPU cores (the same results; off: everything in Blender's own process)"
        ),
        default=True,
    )


def unregister() -> None:
    del bpy.types.Scene.xof_cloth_helpers  # type: ignore[attr-defined]
    del bpy.types.Object.xof_physics  # type: ignore[attr-defined]
    bpy.utils.unregister_class(XOF_PG_physics)
