"""The persistent handlers that run xof simulations with the timeline.

``frame_change_post`` steps every enabled object: it runs after the frame's animation is
evaluated, so pinned points can follow the evaluated (skinned, animated) mesh, and Blender
re-evaluates the written mesh before drawing or rendering (a render calls the handler again
with its own depsgraph and gets the cached frame: renders show what playback shows).
``depsgraph_update_post`` outdates the cache of a mesh that was edited; ``save_pre`` stores
each cache in an ID property and takes the shown frame off the mesh (a file
opened without xof shows the mesh as the user made it; ``save_post`` shows it again);
``load_post`` drops derived state, which is rebuilt from the file on the next frame.
"""

from __future__ import annotations

from typing import Any

import bpy
from bpy.app.handlers import persistent

from ..addon.scene.cloth import override as cloth_override
from ..addon.scene.cloth import runtime as cloth_runtime
from ..addon.scene.cloth import together


def simulated_objects(scene: Any) -> list[Any]:
    return [obj for obj in scene.objects if cloth_runtime.is_simulated(obj)]


@persistent
def on_frame_change(scene: Any, depsgraph: Any = None) -> None:
    """Every simulated object to the frame; those playing forward share one solver pass."""
    objects = simulated_objects(scene)
    if cloth_runtime.tracked() > len(objects):  # some were deleted, or are in other scenes
        cloth_runtime.prune({int(obj.session_uid) for obj in bpy.data.objects})
    together.update_objects(objects, scene, depsgraph, on_error=together.print_failure)


@persistent
def on_depsgraph_update(scene: Any, depsgraph: Any) -> None:
    """An edit of a simulated mesh (leaving Edit Mode, Apply Scale) outdates its cache now,
    not at the next frame change: the viewport shows the edited mesh at once."""
    changed: set[Any] = set()
    for update in depsgraph.updates:
        if update.is_updated_geometry:
            changed.add(getattr(update.id, "original", update.id))
    if not changed:
        return
    for obj in simulated_objects(scene):
        if obj in changed or obj.data in changed:
            cloth_runtime.check_rest(obj)


@persistent
def on_save_pre(*_args: Any) -> None:
    for obj in bpy.data.objects:
        if cloth_runtime.is_simulated(obj):
            cloth_runtime.persist(obj)
            cloth_override.clear_shown(obj.data)


@persistent
def on_save_post(*_args: Any) -> None:
    for scene in bpy.data.scenes:
        for obj in simulated_objects(scene):
            cloth_runtime.show_current(obj, scene)


@persistent
def on_load_post(*_args: Any) -> None:
    cloth_runtime.forget_all()
    together.forget(stop_helpers=True)


_HANDLERS = (
    (bpy.app.handlers.frame_change_post, on_frame_change),
    (bpy.app.handlers.depsgraph_update_post, on_depsgraph_update),
    (bpy.app.handlers.save_pre, on_save_pre),
    (bpy.app.handlers.save_post, on_save_post),
    (bpy.app.handlers.load_post, on_load_post),
)


def _remove(handlers: list[Any], func: Any) -> None:
    for h in [
        h
        for h in handlers
        if getattr(h, "__name__", None) == func.__name__
        and getattr(h, "__module__", None) == func.__module__
    ]:
        handlers.remove(h)


def register() -> None:
    for handlers, func in _HANDLERS:
        _remove(handlers, func)  # a reload must not leave a second copy running
        handlers.append(func)


def unregister() -> None:
    for handlers, func in _HANDLERS:
        _remove(handlers, func)
    cloth_runtime.forget_all()
    together.forget(stop_helpers=True)  # no helper process outlives the extension
    # without xof nothing would update the shown frame: show the meshes as they are
    objects = getattr(bpy.data, "objects", None)  # restricted while Blender starts or quits
    for obj in objects if objects is not None else ():
        if obj.type == "MESH" and any(cloth_override.is_ours(m) for m in obj.modifiers):
            cloth_override.remove(obj)
