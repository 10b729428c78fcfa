"""Review of cloth on deformed meshes (``cloth_override``): what users do to a modifier stack.

The bugs it found are fixed and guarded here: generating modifiers (Solidify, Subdivision)
overwritten by an override placed last, a start frame read from the last shown frame when the
override turned on after playing, a renamed override taken for a user's modifier, and a mesh
whose vertices were all deleted failing every frame.
"""

from __future__ import annotations

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene.cloth import override as cloth_override  # noqa: E402
from xof.addon.scene.cloth import runtime as cloth_runtime  # noqa: E402

from .cloth_fixtures import (  # noqa: E402
    grid_arrays,
    grid_object,
    on_screen,
    pin_top_corners,
    positions,
    register_physics,
    unregister_physics,
)
from .skin_fixtures import evaluated_world_positions  # noqa: E402

pytestmark = pytest.mark.blender
N = 8
PINS = [0, N - 1]
FREE = np.setdiff1d(np.arange(N * N), PINS)
SHIFT = (0.6, -0.2, 0.4)  # where the hook's empty goes by frame 11


@pytest.fixture
def cloth():
    """An 8 x 8 cloth pinned at its top corners, no modifiers."""
    bpy.ops.wm.read_homefile(use_empty=True)
    register_physics()
    obj = grid_object(bpy, "Cloth", N, N)
    pin_top_corners(bpy, obj, N)
    bpy.context.view_layer.objects.active = obj
    obj.xof_physics.enabled = True
    obj.xof_physics.frame_end = 30
    yield obj
    unregister_physics()


def _hook(obj, moving: bool = True):
    """Hook every point of ``obj`` to a new empty (moved by SHIFT over frames 1-11)."""
    handle = bpy.data.objects.new("Handle", None)
    bpy.context.scene.collection.objects.link(handle)
    hook = obj.modifiers.new("Hook", "HOOK")
    hook.object = handle
    hook.vertex_indices_set(list(range(N * N)))
    if moving:
        handle.location = (0.0, 0.0, 0.0)
        handle.keyframe_insert("location", frame=1)
        handle.location = SHIFT
        handle.keyframe_insert("location", frame=11)
    return hook


@pytest.fixture
def hooked(cloth):
    _hook(cloth)
    return cloth


def _play(frames) -> None:
    for f in frames:
        bpy.context.scene.frame_set(f)


def _ours(obj) -> list[str]:
    """Names of the modifiers that run our node group, whatever they are called."""
    return [
        m.name
        for m in obj.modifiers
        if m.type == "NODES"
        and m.node_group is not None
        and m.node_group.get(cloth_override.GROUP_TAG) is not None
    ]


def _shows_the_simulation(obj) -> None:
    """The evaluated mesh is the current frame's cached state (the cloth is at the origin)."""
    rt = cloth_runtime.peek_runtime(obj)
    entry = rt.cache.frames[bpy.context.scene.frame_current]
    np.testing.assert_array_equal(entry.matrix, np.eye(4))
    shown = evaluated_world_positions(obj)
    np.testing.assert_allclose(shown, entry.positions, atol=1e-5)


def _reference(modifier: str, settings: dict, local: np.ndarray) -> np.ndarray:
    """``modifier`` evaluated on a plain copy of the grid holding ``local``."""
    ref = grid_object(bpy, "Reference", N, N)
    mod = ref.modifiers.new("M", modifier)
    for name, value in settings.items():
        setattr(mod, name, value)
    ref.data.attributes["position"].data.foreach_set("vector", local.astype(np.float32).ravel())
    ref.data.update()
    return evaluated_world_positions(ref)


# -- bugs ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("modifier", "settings"),
    [("SOLIDIFY", {"thickness": 0.2}), ("SUBSURF", {"levels": 1})],
)
def test_a_generating_modifier_still_acts_on_the_simulated_cloth(
    cloth, modifier: str, settings: dict
) -> None:
    mod = cloth.modifiers.new("M", modifier)
    for name, value in settings.items():
        setattr(mod, name, value)
    _play(range(1, 9))
    rt = cloth_runtime.peek_runtime(cloth)
    state, _ = rt.simulator.state()
    assert np.abs(state[FREE] - grid_arrays(N, N)[0][FREE]).max() > 0.1  # it fell
    shown = evaluated_world_positions(cloth)
    expected = _reference(modifier, settings, state)  # the modifier on the simulated shape
    assert shown.shape == expected.shape
    np.testing.assert_allclose(shown, expected, atol=1e-4)


def test_a_deforming_modifier_added_after_playing_keeps_the_start_frame(cloth) -> None:
    _play(range(1, 11))
    rest, _ = grid_arrays(N, N)
    assert np.abs(on_screen(cloth) - rest).max() > 0.1  # frame 10 is shown
    np.testing.assert_array_equal(positions(cloth), rest.astype(np.float32))  # not written
    _hook(cloth, moving=False)  # the empty stays at the origin: the hook changes nothing
    bpy.context.scene.frame_set(1)
    rt = cloth_runtime.peek_runtime(cloth)
    assert rt.deformed
    state, vel = rt.simulator.state()
    np.testing.assert_allclose(state, rest, atol=1e-5)
    np.testing.assert_array_equal(vel, 0.0)
    np.testing.assert_allclose(rt.cache.frames[1].positions, rest, atol=1e-5)
    np.testing.assert_allclose(evaluated_world_positions(cloth), rest, atol=1e-5)


def test_a_renamed_override_modifier_is_still_ours(hooked) -> None:
    _play((1, 2, 3))
    hooked.modifiers[cloth_override.MODIFIER_NAME].name = "Cloth on top"
    _play((4,))
    assert len(_ours(hooked)) == 1
    _shows_the_simulation(hooked)
    hooked.modifiers.remove(hooked.modifiers["Hook"])
    _play((5,))
    assert not cloth_runtime.peek_runtime(hooked).deformed
    hooked.xof_physics.enabled = False
    assert _ours(hooked) == []


def test_a_mesh_whose_vertices_were_all_deleted_plays_without_errors(cloth) -> None:
    import bmesh

    _play((1, 2))
    bm = bmesh.new()
    bm.from_mesh(cloth.data)
    bmesh.ops.delete(bm, geom=list(bm.verts), context="VERTS")
    bm.to_mesh(cloth.data)
    bm.free()
    cloth.xof_physics.last_warning = ""
    _play((1, 2, 3))  # no traceback, no solver: one line in the panel
    assert cloth.xof_physics.last_warning == "Cloth has no vertices: nothing to simulate"


# -- behaviour worth keeping --------------------------------------------------------------


def test_a_modifier_added_after_ours_moves_ours_last(hooked) -> None:
    _play((1, 2, 3))
    hooked.modifiers.new("Smooth", "SMOOTH")
    _play((4,))  # this frame's pins still come from the stack as it was (ours before Smooth)
    assert hooked.modifiers[-1].name == cloth_override.MODIFIER_NAME
    _play((5,))
    _shows_the_simulation(hooked)


def test_a_deleted_node_group_is_made_again(hooked) -> None:
    _play((1, 2, 3))
    group = hooked.modifiers[cloth_override.MODIFIER_NAME].node_group
    bpy.data.node_groups.remove(group)
    _play((4,))
    assert hooked.modifiers[cloth_override.MODIFIER_NAME].node_group is not None
    _shows_the_simulation(hooked)
    assert len([g for g in bpy.data.node_groups if g.get(cloth_override.GROUP_TAG)]) == 1


def test_a_topology_change_rebuilds_the_runtime(hooked) -> None:
    import bmesh

    _play((1, 2, 3))
    bm = bmesh.new()
    bm.from_mesh(hooked.data)
    bm.verts.ensure_lookup_table()
    bm.verts.remove(bm.verts[30])
    bm.to_mesh(hooked.data)
    bm.free()
    _play((4, 5, 1, 2))
    rt = cloth_runtime.peek_runtime(hooked)
    assert rt.vertex_count == len(hooked.data.vertices) == N * N - 1
    assert hooked.xof_physics.last_warning == ""
    state, _ = rt.simulator.state()
    shown = evaluated_world_positions(hooked)
    free = ~rt.pinned
    np.testing.assert_allclose(shown[free], state[free], atol=1e-5)


def test_save_and_reopen_with_the_override(hooked, tmp_path) -> None:
    scene = bpy.context.scene
    _play(range(1, 8))
    scene.frame_set(5)
    before = evaluated_world_positions(hooked)
    path = str(tmp_path / "override.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    bpy.ops.wm.open_mainfile(filepath=path)
    obj = bpy.data.objects["Cloth"]
    scene = bpy.context.scene
    assert _ours(obj) == [cloth_override.MODIFIER_NAME]
    scene.frame_set(5)  # the saved cache
    np.testing.assert_array_equal(evaluated_world_positions(obj), before)
    scene.frame_set(8)  # resumed from the saved frame 7
    assert cloth_runtime.peek_runtime(obj).cache.get(8) is not None
    _shows_the_simulation(obj)
    rest, _ = grid_arrays(N, N)
    np.testing.assert_array_equal(positions(obj), rest.astype(np.float32))


def test_undo_and_redo_of_enabling_physics(cloth) -> None:
    cloth.xof_physics.enabled = False
    _hook(cloth)
    bpy.ops.ed.undo_push(message="before")
    cloth.xof_physics.enabled = True
    bpy.ops.ed.undo_push(message="enabled")
    _play(range(1, 6))
    bpy.ops.ed.undo_push(message="played")
    bpy.ops.ed.undo()
    bpy.ops.ed.undo()
    obj = bpy.data.objects["Cloth"]
    assert not obj.xof_physics.enabled
    assert [m.name for m in obj.modifiers] == ["Hook"]
    assert not [a.name for a in obj.data.attributes if a.name.startswith("xof_cloth")]
    rest, _ = grid_arrays(N, N)
    np.testing.assert_allclose(positions(obj), rest, atol=1e-6)
    bpy.ops.ed.redo()
    obj = bpy.data.objects["Cloth"]
    assert obj.xof_physics.enabled
    _play((7, 3))
    _play((4,))
    assert _ours(obj) == [cloth_override.MODIFIER_NAME]
    _shows_the_simulation(obj)


def test_a_render_with_the_override_shows_what_playback_shows(hooked, tmp_path) -> None:
    scene = bpy.context.scene
    cam = bpy.data.objects.new("Cam", bpy.data.cameras.new("Cam"))
    scene.collection.objects.link(cam)
    cam.location = (0.3, -4.0, -0.3)
    cam.rotation_euler = (np.pi / 2, 0.0, 0.0)
    scene.camera = cam
    scene.render.engine = "BLENDER_WORKBENCH"
    scene.render.resolution_x = scene.render.resolution_y = 16
    scene.render.resolution_percentage = 100

    def render(name: str) -> np.ndarray:
        scene.render.filepath = str(tmp_path / name)
        bpy.ops.render.render(write_still=True)
        img = bpy.data.images.load(scene.render.filepath)
        px = np.array(img.pixels[:])
        bpy.data.images.remove(img)
        return px

    _play(range(1, 7))
    shown = evaluated_world_positions(hooked)
    during = render("cached.png")
    assert hooked.xof_physics.last_warning == ""
    assert cloth_runtime.peek_runtime(hooked).deformed
    np.testing.assert_array_equal(evaluated_world_positions(hooked), shown)  # left as it was
    hooked.xof_physics.enabled = False  # no handler, no override: the same points by hand
    hooked.modifiers.remove(hooked.modifiers["Hook"])
    mesh = hooked.data
    mesh.attributes["position"].data.foreach_set("vector", shown.astype(np.float32).ravel())
    mesh.update()
    np.testing.assert_array_equal(render("by_hand.png"), during)
    rest, _ = grid_arrays(N, N)
    mesh.attributes["position"].data.foreach_set("vector", rest.astype(np.float32).ravel())
    mesh.update()
    assert not np.array_equal(render("rest.png"), during)  # the comparison can tell


def test_a_moved_rotated_scaled_cloth_shows_the_solver_state_in_world_space(hooked) -> None:
    hooked.location = (1.0, -2.0, 0.5)
    hooked.rotation_euler = (0.3, -0.2, 0.9)
    hooked.scale = (1.5, 0.7, 1.2)
    bpy.ops.xof.sim_reset()
    for f in range(1, 8):
        bpy.context.scene.frame_set(f)
        rt = cloth_runtime.peek_runtime(hooked)
        assert rt.deformed
        state, _ = rt.simulator.state()
        np.testing.assert_allclose(evaluated_world_positions(hooked), state, atol=2e-5)
