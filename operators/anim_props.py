"""The animation-timing properties both import operators show (one definition for both)."""

from __future__ import annotations

from typing import Any

from bpy.props import EnumProperty, FloatProperty

from ..addon.scene.imp.options import DEFAULTS

TICK_CHOICES = [
    ("AUTO", "Auto", "The file's AnimTicksPerSecond; without one 4800 (D3DX's), unless that "
     "makes the longest set last under a second: then key times are frames at the scene rate"),
    ("FILE", "From File", "The file's AnimTicksPerSecond; without one 4800 (D3DX's)"),
    ("CUSTOM", "Custom", "The number given below"),
]  # fmt: skip
SET_CHOICES = [
    ("AUTO", "Together When Disjoint", "Sets that each key their own bones (torso, arms, legs) "
     "all play, on unmuted NLA tracks; other files as One Action Each"),
    ("SEPARATE", "One Action Each", "The first set plays; the others wait on muted NLA tracks"),
]  # fmt: skip


def ticks_per_second() -> Any:
    return EnumProperty(
        name="Ticks per Second",
        description="How many ticks a second the key times count",
        items=TICK_CHOICES,
        default=DEFAULTS.animation.ticks_per_second,
    )


def custom_ticks_per_second() -> Any:
    return FloatProperty(
        name="Ticks",
        description="Ticks per second of the key times (with Ticks per Second: Custom)",
        default=DEFAULTS.animation.custom_ticks_per_second,
        min=1e-3,
        soft_max=100000.0,
    )


def animation_sets() -> Any:
    return EnumProperty(
        name="Animation Sets",
        description="How the file's animation sets play",
        items=SET_CHOICES,
        default=DEFAULTS.animation.animation_sets,
    )
