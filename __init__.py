"""xof: DirectX .X import and export for Blender, with skinning, morphs, cloth and soft bodies.

The extension's root. Blender imports it as ``bl_ext.<repo>.xof``; everything below is
imported relatively so the package works under any name.
"""

from __future__ import annotations


def register() -> None:
    from . import operators

    operators.register()


def unregister() -> None:
    from . import operators

    operators.unregister()
