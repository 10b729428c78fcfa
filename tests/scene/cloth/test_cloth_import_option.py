"""The Cloth option of File > Import > DirectX, through bpy.ops.import_scene.x."""

from __future__ import annotations

from pathlib import Path

import pytest

bpy = pytest.importorskip("bpy")

pytestmark = [pytest.mark.blender, pytest.mark.usefixtures("xof_enabled", "empty_scene")]

FLAG = Path(__file__).resolve().parents[3] / "examples" / "flag.x"


def imported_flag():
    return next(o for o in bpy.data.objects if o.type == "MESH")


def test_cloth_is_simulated_by_default():
    assert bpy.ops.import_scene.x(filepath=str(FLAG)) == {"FINISHED"}
    flag = imported_flag()
    assert flag.xof_physics.enabled
    # flag.x pins vertices 0 and 9 (mass 0) and gives every other vertex mass 1
    group = flag.vertex_groups["cloth_mass"]
    weights = [group.weight(i) for i in range(len(flag.data.vertices))]
    assert weights[0] == 0.0 and weights[9] == 0.0
    assert sum(weights) == pytest.approx(98.0)


def test_cloth_off_keeps_the_data_but_not_the_simulation():
    assert bpy.ops.import_scene.x(filepath=str(FLAG), cloth_enable=False) == {"FINISHED"}
    flag = imported_flag()
    assert not flag.xof_physics.enabled
    assert "cloth_mass" in flag.vertex_groups


def test_enabled_over_the_scene_range_with_the_interface_locked():
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 7, 31
    scene.render.use_lock_interface = False
    assert bpy.ops.import_scene.x(filepath=str(FLAG), animation_scene_timing=False) == {"FINISHED"}
    props = imported_flag().xof_physics
    assert (props.enabled, props.frame_start, props.frame_end) == (True, 7, 31)
    assert scene.render.use_lock_interface  # what turning simulation on does
    assert props.settings_revision > 0 and props.cache_state == "EMPTY"
