"""What Blender calls: operators, panels, properties and handlers, registered in one place."""

from __future__ import annotations

from types import ModuleType

from . import (
    export_x,
    file_handler,
    import_x,
    import_x_animation,
    menus,
    morph_keys,
    physics_ops,
    physics_panel,
    physics_props,
    sim_handler,
)

#: each module has register()/unregister(); registered in this order, unregistered in reverse
_MODULES: list[ModuleType] = [
    import_x,
    import_x_animation,
    export_x,
    menus,
    file_handler,
    morph_keys,
    physics_props,
    physics_ops,
    physics_panel,
    sim_handler,
]


def register() -> None:
    for module in _MODULES:
        module.register()


def unregister() -> None:
    for module in reversed(_MODULES):
        module.unregister()
