"""The cloth tests' shared scene: an empty file with xof's physics registered, and the 8 x 8
pinned cloth (plain and hooked to a moving empty) most of them play."""

from __future__ import annotations

import pytest

from ..cloth_fixtures import (
    GRID,
    SHIFT,
    hook_whole,
    pinned_cloth,
    register_physics,
    unregister_physics,
)


@pytest.fixture
def physics():
    """An empty file with xof's physics properties, operators and frame handler registered."""
    bpy = pytest.importorskip("bpy")
    bpy.ops.wm.read_homefile(use_empty=True)
    register_physics()
    yield bpy
    unregister_physics()


@pytest.fixture
def cloth(physics):
    """The GRID x GRID cloth, simulated over frames 1-30, no modifiers."""
    return pinned_cloth(physics, GRID, frame_end=30)


@pytest.fixture
def hooked(cloth, physics):
    """The cloth hooked whole to an empty that moves linearly by SHIFT over frames 1-11."""
    hook_whole(physics, cloth, SHIFT)
    return cloth
