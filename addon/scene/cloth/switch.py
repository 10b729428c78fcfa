"""What turning xof simulation on or off and changing a setting do to an object's runtime.

``operators/physics_props.py`` calls these from its property update callbacks; the import's
cloth step calls :func:`enable` directly (it writes the properties without their callbacks).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import runtime
from .object_solver import physics

if TYPE_CHECKING:
    import bpy


def settings_changed(obj: bpy.types.Object, frame: int) -> None:
    """A simulation setting changed: the solver is rebuilt, frames after ``frame`` outdated."""
    props = physics(obj)
    props.settings_revision += 1
    if props.cache_state != "BAKED":
        runtime.mark_outdated(obj, frame)


def enabled_changed(obj: bpy.types.Object) -> None:
    """Off: drop the runtime and show the rest shape. On: lock the interface while rendering
    (the frame handler writes the mesh during a render too; Blender's advice for handlers that
    change data, or an F12 render may read it mid-change)."""
    if not physics(obj).enabled:
        runtime.forget(obj)
        runtime.restore_rest(obj)
    else:
        for scene in obj.users_scene:
            scene.render.use_lock_interface = True


def enable(obj: bpy.types.Object, scene: bpy.types.Scene | None) -> None:
    """Turn simulation on over ``scene``'s frame range (the import's cloth step)."""
    props = physics(obj)
    if scene is not None:
        props["frame_start"] = int(scene.frame_start)
        props["frame_end"] = int(scene.frame_end)
    props["enabled"] = True
    enabled_changed(obj)
    settings_changed(obj, int(scene.frame_current) if scene is not None else props.frame_start)
