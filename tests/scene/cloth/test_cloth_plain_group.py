"""The plain override node group: a mesh nothing deforms stores no deformed shape; the
frame a deformer or a shape key appears is evaluated again with the full group, so its pins
follow at once; files with the older group are brought up to date."""

from __future__ import annotations

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene.cloth import override as cloth_override  # noqa: E402
from xof.addon.scene.cloth import runtime as cloth_runtime  # noqa: E402

from ..cloth_fixtures import (  # noqa: E402
    GRID,
    SHIFT,
    grid_arrays,
    hook_whole,
    on_screen,
    play,
    positions,
    shows_the_simulation,
)
from ..skin_fixtures import evaluated_world_positions  # noqa: E402

pytestmark = pytest.mark.blender
PINS = [0, GRID - 1]
REST = grid_arrays(GRID, GRID)[0]


def _ours(obj):
    (mod,) = [m for m in obj.modifiers if cloth_override.is_ours(m)]
    return mod


def _is_plain(obj) -> bool:
    return bool(_ours(obj).node_group.get(cloth_override.PLAIN_TAG))


def _stored(obj) -> set[str]:
    dg = bpy.context.evaluated_depsgraph_get()
    attrs = obj.evaluated_get(dg).data.attributes
    names = (cloth_override.DEFORMED_ATTRIBUTE, cloth_override.INDEX_ATTRIBUTE)
    return {n for n in names if attrs.get(n) is not None}


def _tagged_groups() -> list:
    return [g for g in bpy.data.node_groups if g.get(cloth_override.GROUP_TAG) is not None]


def test_a_mesh_nothing_deforms_gets_the_plain_group(cloth) -> None:
    for f in range(1, 6):
        bpy.context.scene.frame_set(f)
        assert _is_plain(cloth)
        assert _stored(cloth) == set()
        rt = cloth_runtime.peek_runtime(cloth)
        shown = on_screen(cloth)
        free = ~rt.pinned
        np.testing.assert_array_equal(shown[free], rt.cache.frames[f].positions[free])
        np.testing.assert_array_equal(shown[PINS], REST[PINS].astype(np.float32))
    assert len(_tagged_groups()) == 1  # the full group is not made for nothing
    np.testing.assert_array_equal(positions(cloth), REST.astype(np.float32))


def test_a_deformed_mesh_gets_the_full_group(hooked) -> None:
    play(bpy, (1, 2, 3))
    assert not _is_plain(hooked)
    assert _stored(hooked) == {
        cloth_override.DEFORMED_ATTRIBUTE,
        cloth_override.INDEX_ATTRIBUTE,
    }


@pytest.mark.parametrize("subdivided", [False, True])
def test_a_hook_added_while_playing_moves_the_pins_on_that_frame(cloth, subdivided) -> None:
    if subdivided:  # behind it the pins are found only through the stored index
        cloth.modifiers.new("Subdivision", "SUBSURF").levels = 1
    play(bpy, range(1, 6))
    assert _is_plain(cloth)
    hook_whole(bpy, cloth, SHIFT)  # the empty is at SHIFT / 2 at frame 6
    mods = cloth.modifiers
    mods.move(len(mods) - 1, 0)  # the hook first: it deforms what follows
    bpy.context.scene.frame_set(6)
    rt = cloth_runtime.peek_runtime(cloth)
    assert rt.deformed and not _is_plain(cloth)
    state, _ = rt.simulator.state()
    np.testing.assert_allclose(state[PINS], REST[PINS] + SHIFT / 2.0, atol=1e-5)
    expected = ["Hook", cloth_override.MODIFIER_NAME] + (["Subdivision"] if subdivided else [])
    assert [m.name for m in mods] == expected
    if not subdivided:
        shown = evaluated_world_positions(cloth)
        np.testing.assert_allclose(shown[PINS], REST[PINS] + SHIFT / 2.0, atol=1e-5)
        np.testing.assert_allclose(shown[~rt.pinned], state[~rt.pinned], atol=1e-5)


def test_a_shape_key_added_while_playing_lifts_the_pins_on_that_frame(cloth) -> None:
    play(bpy, range(1, 5))
    assert _is_plain(cloth)
    cloth.shape_key_add(name="Basis", from_mix=False)
    lift = cloth.shape_key_add(name="Lift", from_mix=False)
    lifted = REST.copy()
    lifted[:, 2] += 0.25
    lift.data.foreach_set("co", lifted.astype(np.float32).ravel())
    lift.value = 1.0
    bpy.context.scene.frame_set(5)
    rt = cloth_runtime.peek_runtime(cloth)
    assert rt.deformed and not _is_plain(cloth)
    state, _ = rt.simulator.state()
    np.testing.assert_allclose(state[PINS], REST[PINS] + [0.0, 0.0, 0.25], atol=1e-5)


def test_the_reset_of_a_soft_body_starts_from_a_new_deformer(cloth) -> None:
    cloth.xof_physics.sim_type = "SOFT"
    play(bpy, range(1, 8))
    assert _is_plain(cloth)
    hook_whole(bpy, cloth, SHIFT)
    cloth.modifiers.move(len(cloth.modifiers) - 1, 0)  # the hook first: it deforms ours
    cloth.xof_physics.frame_start = 11  # the empty is at SHIFT there
    bpy.context.scene.frame_set(11)
    rt = cloth_runtime.peek_runtime(cloth)
    state, vel = rt.simulator.state()
    np.testing.assert_allclose(state, REST + SHIFT, atol=1e-5)  # every point, not just pins
    np.testing.assert_array_equal(vel, 0.0)


def test_the_plain_group_comes_back_when_the_deformer_goes(hooked) -> None:
    play(bpy, (1, 2, 3))
    assert not _is_plain(hooked)
    hooked.modifiers.remove(hooked.modifiers["Hook"])
    play(bpy, (4,))
    assert _is_plain(hooked) and _stored(hooked) == set()
    assert not cloth_runtime.peek_runtime(hooked).deformed
    shows_the_simulation(bpy, hooked)
    play(bpy, (5,))
    shows_the_simulation(bpy, hooked)


def test_a_deformer_shown_only_in_renders_moves_the_pins_of_a_rendered_frame(
    hooked, tmp_path
) -> None:
    scene = bpy.context.scene
    hooked.modifiers["Hook"].show_viewport = False
    cam = bpy.data.objects.new("Cam", bpy.data.cameras.new("Cam"))
    scene.collection.objects.link(cam)
    scene.camera = cam
    scene.render.engine = "BLENDER_WORKBENCH"
    scene.render.resolution_x = scene.render.resolution_y = 16
    play(bpy, range(1, 7))
    assert _is_plain(hooked)
    rt = cloth_runtime.peek_runtime(hooked)
    np.testing.assert_allclose(rt.cache.frames[6].positions[PINS], REST[PINS], atol=1e-6)
    scene.frame_current = 7  # no viewport frame: the render steps frame 7 itself
    scene.render.filepath = str(tmp_path / "frame.png")
    bpy.ops.render.render(write_still=True)
    assert hooked.xof_physics.last_warning == ""
    pins = cloth_runtime.peek_runtime(hooked).cache.frames[7].positions[PINS]
    np.testing.assert_allclose(pins, REST[PINS] + SHIFT * 0.6, atol=1e-5)  # hooked in renders


@pytest.mark.parametrize("deform", [False, True])
def test_a_file_saved_with_the_old_group_is_brought_up_to_date(cloth, tmp_path, deform) -> None:
    if deform:
        hook_whole(bpy, cloth, SHIFT)
    play(bpy, (1, 2, 3))
    old = cloth_override.node_group(True)  # version 3 was the full group
    old.name = "xof Cloth Override v3"
    old[cloth_override.GROUP_TAG] = 3
    _ours(cloth).node_group = old
    path = str(tmp_path / "old.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    bpy.ops.wm.open_mainfile(filepath=path)
    obj = bpy.data.objects["Cloth"]
    assert _ours(obj).node_group.get(cloth_override.GROUP_TAG) == 3
    play(bpy, (4,))
    group = _ours(obj).node_group
    assert group.get(cloth_override.GROUP_TAG) == cloth_override.GROUP_VERSION
    assert bool(group.get(cloth_override.PLAIN_TAG)) != deform
    rt = cloth_runtime.peek_runtime(obj)
    state, _ = rt.simulator.state()
    offset = SHIFT * 0.3 if deform else 0.0
    np.testing.assert_allclose(state[PINS], REST[PINS] + offset, atol=1e-5)
    shown = evaluated_world_positions(obj)
    np.testing.assert_allclose(shown, state, atol=1e-5)


def _fast_path(obj, deformed: bool) -> bool:
    """What ``ensure_modifier`` keeps as it is: our modifier alone, current (its old test)."""
    mods = obj.modifiers
    if len(mods) != 1 or mods[0].type != "NODES":
        return False
    group = mods[0].node_group
    return bool(
        group is not None
        and group.get(cloth_override.GROUP_TAG) == cloth_override.GROUP_VERSION
        and bool(group.get(cloth_override.PLAIN_TAG)) != deformed
    )


@pytest.mark.parametrize(
    "stack",
    ["none", "plain", "full", "old", "plain+keys", "full+keys", "hook", "subsurf", "no group"],
)
def test_one_look_at_the_stack_is_needs_override_and_the_kept_modifier(cloth, stack) -> None:
    play(bpy, (1, 2))
    mod = _ours(cloth)
    if stack == "none":
        cloth.modifiers.remove(mod)
    elif stack in ("full", "full+keys"):
        mod.node_group = cloth_override.node_group(True)
    elif stack == "old":
        old = cloth_override.node_group(True).copy()
        old[cloth_override.GROUP_TAG] = 3
        mod.node_group = old
    elif stack == "hook":
        hook_whole(bpy, cloth)
    elif stack == "subsurf":
        cloth.modifiers.new("Subdivision", "SUBSURF")
    elif stack == "no group":
        mod.node_group = None
    if stack.endswith("+keys"):
        cloth.shape_key_add(name="Basis", from_mix=False)
    for render in (False, True):
        deformed, ready = cloth_override.stack_state(cloth, render)
        assert deformed == cloth_override.needs_override(cloth, render)
        assert ready == _fast_path(cloth, deformed)
    expected_ready = {"plain": True, "full+keys": True}
    assert cloth_override.stack_state(cloth)[1] == expected_ready.get(stack, False)
