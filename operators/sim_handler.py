"""The persistent handlers that run xof simulations with the timeline.

``frame_change_post`` steps every enabled object: it runs after the frame's animation is
evaluated, so pinned points can follow the evaluated (skinned, animated) mesh, and Blender
re-evaluates the written mesh before drawing or rendering (a render calls the handler again
with its own depsgraph and gets the cached frame: renders show what playback shows).
``save_pre`` stores each cache in an ID property; ``load_post`` drops derived state, which is
rebuilt from the file on the next frame.
"""

from __future__ import annotations

import traceback
from typing import Any

import bpy
from bpy.app.handlers import persistent

from ..addon.scene.cloth import runtime as cloth_runtime


def simulated_objects(scene: Any) -> list[Any]:
    return [obj for obj in scene.objects if cloth_runtime.is_simulated(obj)]


@persistent
def on_frame_change(scene: Any, depsgraph: Any = None) -> None:
    for obj in simulated_objects(scene):
        try:
            cloth_runtime.update_object(obj, scene, depsgraph)
        except Exception as exc:  # a broken object must not stop playback of the others
            obj.xof_physics.last_warning = f"{type(exc).__name__}: {exc}"
            print(f"xof: simulation of {obj.name} failed:")
            traceback.print_exc()


@persistent
def on_save_pre(*_args: Any) -> None:
    for obj in bpy.data.objects:
        if cloth_runtime.is_simulated(obj):
            cloth_runtime.persist(obj)


@persistent
def on_load_post(*_args: Any) -> None:
    cloth_runtime.forget_all()


_HANDLERS = (
    (bpy.app.handlers.frame_change_post, on_frame_change),
    (bpy.app.handlers.save_pre, on_save_pre),
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
