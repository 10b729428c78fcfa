"""The frame handler behaves like a point cache: scrub, reset, outdated, reload, render."""

from __future__ import annotations

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene.cloth import runtime as cloth_runtime  # noqa: E402
from xof.addon.scene.cloth import together  # noqa: E402

from ..cloth_fixtures import (  # noqa: E402
    GRID,
    grid_arrays,
    grid_object,
    on_screen,
    pinned_cloth,
    positions,
)
from ..cloth_fixtures import play as play_frames  # noqa: E402
from ..skin_fixtures import evaluated_world_positions  # noqa: E402

pytestmark = pytest.mark.blender
N = GRID  # pinned at vertices 0 and N - 1


@pytest.fixture
def cloth(physics):
    """The shared cloth (conftest.py), simulated over frames 1-40."""
    return pinned_cloth(bpy, N, frame_end=40)


def play(scene, frames) -> dict[int, np.ndarray]:
    obj = bpy.data.objects["Cloth"]
    out = {}
    for f in frames:
        scene.frame_set(f)
        out[f] = on_screen(obj).copy()
    return out


def test_playback_moves_the_cloth_and_pins_never_move(cloth) -> None:
    scene = bpy.context.scene
    rest, _ = grid_arrays(N, N)
    shown = play(scene, range(1, 21))
    np.testing.assert_array_equal(shown[1], rest.astype(np.float32))
    assert shown[20][:, 2].min() < -0.3  # it fell
    for frame in shown.values():
        np.testing.assert_array_equal(frame[[0, N - 1]], rest[[0, N - 1]].astype(np.float32))
    assert cloth.xof_physics.cache_state == "VALID"
    assert np.isfinite(np.stack(list(shown.values()))).all()


def test_scrubbing_back_shows_the_cached_frames(cloth) -> None:
    scene = bpy.context.scene
    shown = play(scene, range(1, 16))
    for f in (12, 5, 9, 15):
        scene.frame_set(f)
        np.testing.assert_array_equal(on_screen(cloth), shown[f])
    report = together.update_object(cloth, scene, None, 7)
    assert report.action == "cached"


def test_resuming_after_scrubbing_back_continues_from_the_cache(cloth) -> None:
    scene = bpy.context.scene
    straight = play(scene, range(1, 13))
    bpy.ops.xof.sim_reset()  # nothing cached; a fresh run to frame 8, back to 4, then on
    play(scene, range(1, 9))
    scene.frame_set(4)
    again = play(scene, range(5, 13))
    for f in range(5, 13):
        np.testing.assert_allclose(again[f], straight[f], atol=1e-5)


def test_the_start_frame_resets(cloth) -> None:
    scene = bpy.context.scene
    rest, _ = grid_arrays(N, N)
    play(scene, range(1, 11))
    scene.frame_set(1)
    np.testing.assert_array_equal(on_screen(cloth), rest.astype(np.float32))
    scene.frame_set(0)  # before the start: still the rest shape
    np.testing.assert_array_equal(on_screen(cloth), rest.astype(np.float32))
    report = together.update_object(cloth, scene, None, 1)
    assert report.action == "reset"


def test_a_setting_change_marks_the_cache_outdated(cloth) -> None:
    scene = bpy.context.scene
    first = play(scene, range(1, 11))
    scene.frame_set(5)
    cloth.xof_physics.gravity = (0.0, 0.0, -2.0)
    assert cloth.xof_physics.cache_state == "OUTDATED"
    rt = cloth_runtime.peek_runtime(cloth)
    assert rt is not None and max(rt.cache.frames) == 5  # later frames no longer follow
    later = play(scene, range(6, 11))
    assert not np.allclose(later[10], first[10])  # re-simulated with the weaker gravity
    scene.frame_set(1)  # back to the start: a fresh, valid cache
    assert cloth.xof_physics.cache_state == "VALID"
    assert sorted(cloth_runtime.peek_runtime(cloth).cache.frames) == [1]


def test_save_and_reload_keep_settings_and_cache(cloth, tmp_path) -> None:
    scene = bpy.context.scene
    cloth.xof_physics.drag = 0.75
    cloth.xof_physics.use_bend = False
    shown = play(scene, range(1, 13))
    path = str(tmp_path / "sim.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    bpy.ops.wm.open_mainfile(filepath=path)
    obj = bpy.data.objects["Cloth"]
    scene = bpy.context.scene
    props = obj.xof_physics
    assert props.enabled and props.drag == pytest.approx(0.75) and not props.use_bend
    assert props.cache_state == "VALID"
    assert cloth_runtime.peek_runtime(obj) is None  # derived state was dropped on load
    for f in (6, 12, 3):
        report = together.update_object(obj, scene, None, f)
        assert report.action == "cached"
        np.testing.assert_array_equal(on_screen(obj), shown[f])
    scene.frame_set(12)
    scene.frame_set(13)  # resumes from the reloaded frame 12
    assert cloth_runtime.peek_runtime(obj).cache.get(13) is not None
    rest, _ = grid_arrays(N, N)
    np.testing.assert_array_equal(positions(obj), rest.astype(np.float32))  # the mesh: rest


def test_pinned_points_follow_an_animated_object(cloth) -> None:
    scene = bpy.context.scene
    cloth.location = (0.0, 0.0, 0.0)
    cloth.keyframe_insert("location", frame=1)
    cloth.location = (1.0, 0.0, 0.5)
    cloth.keyframe_insert("location", frame=11)
    bpy.ops.xof.sim_reset()
    rest, _ = grid_arrays(N, N)
    rt = None
    for f in range(1, 12):
        scene.frame_set(f)
        rt = cloth_runtime.peek_runtime(cloth)
        state_pos, _ = rt.simulator.state()
        world = np.array(cloth.matrix_world)
        expected = rest[[0, N - 1]] + world[:3, 3]
        np.testing.assert_allclose(state_pos[[0, N - 1]], expected, atol=1e-5)
        np.testing.assert_array_equal(on_screen(cloth)[[0, N - 1]], rest[[0, N - 1]])


def test_a_render_shows_exactly_what_playback_shows(cloth, tmp_path) -> None:
    scene = bpy.context.scene
    cam = bpy.data.objects.new("Cam", bpy.data.cameras.new("Cam"))
    scene.collection.objects.link(cam)
    cam.location = (0.0, -4.0, -0.5)
    cam.rotation_euler = (np.pi / 2, 0.0, 0.0)
    scene.camera = cam
    scene.render.engine = "BLENDER_WORKBENCH"
    scene.render.resolution_x = scene.render.resolution_y = 48
    shown = play(scene, range(1, 7))

    def render(name: str) -> np.ndarray:
        scene.render.filepath = str(tmp_path / name)
        bpy.ops.render.render(write_still=True)
        img = bpy.data.images.load(scene.render.filepath)
        px = np.array(img.pixels[:])
        bpy.data.images.remove(img)
        return px

    during = render("cached.png")  # frame 6, cached by playback
    scene.frame_current = 7  # no handler call: the render itself simulates frame 7
    fresh = render("fresh.png")
    frame7 = cloth_runtime.peek_runtime(cloth).cache.get(7)
    assert frame7 is not None
    cloth.xof_physics.enabled = False  # handler off, mesh back to rest; now write by hand
    mesh = cloth.data
    for positions_, image in ((shown[6], during), (frame7.positions, fresh)):
        mesh.attributes["position"].data.foreach_set("vector", positions_.ravel())
        mesh.update()
        np.testing.assert_array_equal(render("by_hand.png"), image)
    rest, _ = grid_arrays(N, N)
    mesh.attributes["position"].data.foreach_set("vector", rest.astype(np.float32).ravel())
    mesh.update()
    assert not np.array_equal(render("rest.png"), during)  # the comparison can tell


def test_an_unstable_setting_never_writes_nan_and_warns(cloth) -> None:
    scene = bpy.context.scene
    props = cloth.xof_physics
    props.solver = "CLASSIC"
    props.substeps = 1
    props.stiffness = 1.0e9  # far beyond the explicit solver's stability limit
    shown = play(scene, range(1, 11))
    assert all(np.isfinite(p).all() for p in shown.values())
    assert "softened" in props.last_warning  # limited to what max_substeps keeps stable
    assert np.abs(shown[10]).max() < 10.0


def test_enabling_locks_the_interface_for_renders(physics) -> None:
    scene = bpy.context.scene
    scene.render.use_lock_interface = False
    obj = grid_object(bpy, "Other", 3, 3)
    assert not scene.render.use_lock_interface
    obj.xof_physics.enabled = True
    assert scene.render.use_lock_interface


def test_a_mesh_whose_vertices_were_all_deleted_plays_without_errors(cloth) -> None:
    import bmesh

    play_frames(bpy, (1, 2))
    bm = bmesh.new()
    bm.from_mesh(cloth.data)
    bmesh.ops.delete(bm, geom=list(bm.verts), context="VERTS")
    bm.to_mesh(cloth.data)
    bm.free()
    cloth.xof_physics.last_warning = ""
    play_frames(bpy, (1, 2, 3))  # no traceback, no solver: one line in the panel
    assert cloth.xof_physics.last_warning == "Cloth has no vertices: nothing to simulate"


def test_a_topology_change_rebuilds_the_runtime(hooked) -> None:
    import bmesh

    play_frames(bpy, (1, 2, 3))
    bm = bmesh.new()
    bm.from_mesh(hooked.data)
    bm.verts.ensure_lookup_table()
    bm.verts.remove(bm.verts[30])
    bm.to_mesh(hooked.data)
    bm.free()
    play_frames(bpy, (4, 5, 1, 2))
    rt = cloth_runtime.peek_runtime(hooked)
    assert rt.vertex_count == len(hooked.data.vertices) == GRID * GRID - 1
    assert hooked.xof_physics.last_warning == ""
    state, _ = rt.simulator.state()
    shown = evaluated_world_positions(hooked)
    free = ~rt.pinned
    np.testing.assert_allclose(shown[free], state[free], atol=1e-5)


def test_a_deleted_cloth_object_leaves_no_state_behind(cloth) -> None:
    # found by tests/bench/soak.py: each import -> play -> delete cycle kept the deleted
    # object's solver and cached frames for the rest of the session
    scene = bpy.context.scene
    play(scene, range(1, 6))
    assert cloth_runtime.tracked() == 1
    mesh = cloth.data
    bpy.data.objects.remove(cloth)
    bpy.data.meshes.remove(mesh)
    other = pinned_cloth(bpy, N, frame_end=40)
    play(scene, range(1, 4))
    assert cloth_runtime.tracked() == 1
    assert cloth_runtime.peek_playback(other) is not None
