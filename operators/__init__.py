"""What Blender calls: operators, panels, properties and handlers, registered in one place."""

from __future__ import annotations

_MODULES: list = []  # each module with register()/unregister(), in registration order


def register() -> None:
    for module in _MODULES:
        module.register()


def unregister() -> None:
    for module in reversed(_MODULES):
        module.unregister()
