"""What Blender calls: operators, panels, properties and handlers, registered in one place."""

from __future__ import annotations

from types import ModuleType

from . import file_handler, import_x, menus, morph_keys

#: each module has register()/unregister(); registered in this order, unregistered in reverse
_MODULES: list[ModuleType] = [import_x, menus, file_handler, morph_keys]


def register() -> None:
    for module in _MODULES:
        module.register()


def unregister() -> None:
    for module in reversed(_MODULES):
        module.unregister()
