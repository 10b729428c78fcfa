"""The mesh is the rest shape: playback never writes it (issue: an Edit Mode change or Apply
Scale was undone at the next frame; a file saved mid-animation, or opened without xof, kept a
simulated frame in the mesh). Also: a setting changed right after reopening outdates the saved
frames, files of older versions get their rest shape back, and bad pins are reported."""

from __future__ import annotations

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene.cloth import override as cloth_override  # noqa: E402
from xof.addon.scene.cloth import runtime as cloth_runtime  # noqa: E402
from xof.addon.scene.cloth import saved_cache, together  # noqa: E402
from xof.addon.scene.cloth.data import MASS_GROUP, REST_ATTRIBUTE, set_group_weights  # noqa: E402

from ..cloth_fixtures import (  # noqa: E402
    grid_arrays,
    grid_object,
    on_screen,
    pin_top_corners,
    positions,
    register_physics,
    unregister_physics,
)

pytestmark = pytest.mark.blender
N = 8
REST = grid_arrays(N, N)[0].astype(np.float32)


@pytest.fixture
def cloth():
    bpy.ops.wm.read_homefile(use_empty=True)
    register_physics()
    obj = grid_object(bpy, "Cloth", N, N)
    pin_top_corners(bpy, obj, N)
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    obj.xof_physics.enabled = True
    obj.xof_physics.frame_end = 40
    yield obj
    unregister_physics()


def play(frames) -> dict[int, np.ndarray]:
    obj = bpy.data.objects["Cloth"]
    out = {}
    for f in frames:
        bpy.context.scene.frame_set(f)
        out[f] = on_screen(obj).copy()
    return out


def test_playback_shows_the_simulation_and_leaves_the_mesh_alone(cloth) -> None:
    shown = play(range(1, 16))
    assert shown[15][:, 2].min() < -0.3  # the viewport shows the cloth falling
    np.testing.assert_array_equal(positions(cloth), REST)  # the mesh is the rest shape
    assert [m.name for m in cloth.modifiers] == [cloth_override.MODIFIER_NAME]


def test_an_edit_mode_change_stays_and_outdates_the_cache(cloth) -> None:
    import bmesh

    before = play(range(1, 11))
    bpy.ops.object.mode_set(mode="EDIT")
    bm = bmesh.from_edit_mesh(cloth.data)
    bm.verts.ensure_lookup_table()
    bm.verts[20].co.z += 0.5
    bmesh.update_edit_mesh(cloth.data)
    bpy.ops.object.mode_set(mode="OBJECT")
    edited = REST.copy()
    edited[20, 2] += 0.5
    np.testing.assert_array_equal(positions(cloth), edited)
    bpy.context.view_layer.update()  # the viewport's redraw: the edit shows at once
    np.testing.assert_array_equal(on_screen(cloth), edited)
    assert cloth.xof_physics.cache_state == "OUTDATED"
    play(range(11, 14))
    np.testing.assert_array_equal(positions(cloth), edited)  # not undone by playback
    assert cloth.xof_physics.cache_state == "OUTDATED"
    again = play(range(1, 11))  # from the start: simulated from the edited shape
    np.testing.assert_array_equal(again[1], edited)
    assert cloth.xof_physics.cache_state == "VALID"
    assert not np.allclose(again[10], before[10])
    np.testing.assert_array_equal(positions(cloth), edited)


def test_apply_scale_stays(cloth) -> None:
    cloth.scale = (2.0, 2.0, 2.0)
    play(range(1, 11))
    bpy.ops.object.transform_apply(location=False, rotation=False, scale=True)
    np.testing.assert_allclose(positions(cloth), 2.0 * REST, atol=1e-6)
    bpy.context.view_layer.update()
    np.testing.assert_allclose(on_screen(cloth), 2.0 * REST, atol=1e-6)  # shown at once
    play(range(11, 14))
    np.testing.assert_allclose(positions(cloth), 2.0 * REST, atol=1e-6)
    shown = play(range(1, 3))
    np.testing.assert_allclose(shown[1], 2.0 * REST, atol=1e-6)  # the new rest shape
    width = shown[2][:, 0].max() - shown[2][:, 0].min()
    assert width == pytest.approx(4.0, abs=0.05)  # a 4 m cloth now, not a 2 m one


def test_disabling_xof_and_reopening_without_it_show_the_rest_shape(cloth, tmp_path) -> None:
    play(range(1, 11))  # mid-animation
    path = str(tmp_path / "mid.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    assert np.abs(on_screen(cloth) - REST).max() > 0.3  # after the save: still shown
    unregister_physics()  # the add-on disabled
    try:
        obj = bpy.data.objects["Cloth"]
        np.testing.assert_array_equal(positions(obj), REST)
        np.testing.assert_array_equal(on_screen(obj), REST)
        bpy.ops.wm.open_mainfile(filepath=path)  # opened without xof
        obj = bpy.data.objects["Cloth"]
        np.testing.assert_array_equal(positions(obj), REST)
        np.testing.assert_array_equal(on_screen(obj), REST)
    finally:
        register_physics()
    bpy.ops.wm.open_mainfile(filepath=path)  # with xof: the saved frames play again
    obj = bpy.data.objects["Cloth"]
    bpy.context.scene.frame_set(10)
    assert together.update_object(obj, bpy.context.scene, None).action == "cached"
    assert np.abs(on_screen(obj) - REST).max() > 0.3


def test_a_setting_changed_right_after_reopening_outdates_the_saved_frames(cloth, tmp_path):
    scene = bpy.context.scene
    old = play(range(1, 13))
    scene.frame_set(5)
    path = str(tmp_path / "saved.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    bpy.ops.wm.open_mainfile(filepath=path)
    obj = bpy.data.objects["Cloth"]
    obj.xof_physics.gravity = (0.0, 0.0, -2.0)  # before any frame change
    assert obj.xof_physics.cache_state == "OUTDATED"
    assert sorted(cloth_runtime.peek_playback(obj).cache.frames) == [1, 2, 3, 4, 5]
    new = play(range(6, 13))
    assert np.abs(new[12] - old[12]).max() > 0.1  # weaker gravity, not the saved frames
    bpy.ops.wm.save_as_mainfile(filepath=path)
    bpy.ops.wm.open_mainfile(filepath=path)
    obj = bpy.data.objects["Cloth"]
    bpy.context.scene.frame_set(12)
    np.testing.assert_array_equal(on_screen(obj), new[12])


def test_a_file_of_an_older_version_gets_its_rest_shape_back(cloth) -> None:
    mesh = cloth.data  # as older versions left it: a frame in the mesh, the rest aside
    attr = mesh.attributes.new(REST_ATTRIBUTE, "FLOAT_VECTOR", "POINT")
    attr.data.foreach_set("vector", REST.ravel())
    sagged = REST - np.array([0.0, 0.0, 0.4], dtype=np.float32)
    mesh.attributes["position"].data.foreach_set("vector", sagged.ravel())
    bpy.context.scene.frame_set(1)
    np.testing.assert_array_equal(positions(cloth), REST)
    assert mesh.attributes.get(REST_ATTRIBUTE) is None


def test_mass_zero_everywhere_is_reported(cloth) -> None:
    set_group_weights(cloth, MASS_GROUP, np.zeros(N * N))
    cloth.xof_physics.substeps = 4  # a setting change: rebuilt with the new weights
    play(range(1, 4))
    assert "every point has mass 0" in cloth.xof_physics.last_warning


def test_negative_damping_is_refused_by_the_properties(cloth) -> None:
    props = cloth.xof_physics
    for name in ("damping", "spring_damping", "drag"):
        assert props.bl_rna.properties[name].hard_min == 0.0


def _bad_rest(obj, rows: dict[int, tuple[float, float, float]]) -> None:
    co = positions(obj).copy()
    for i, value in rows.items():
        co[i] = value
    obj.data.vertices.foreach_set("co", co.ravel())
    obj.data.update()


def test_a_nan_rest_point_does_not_rebuild_the_solver_every_frame(cloth) -> None:
    """Issue 34, item 16: a cloth with 2 NaN rest points said they were "set to 0 and pinned"
    yet nothing moved: its rest shape compared unequal to itself (NaN != NaN) every frame, so
    the solver was rebuilt from the rest shape on every frame change. The same bytes are the
    same rest shape: one solver, and the cloth falls."""
    _bad_rest(cloth, {20: (np.nan,) * 3, 43: (np.nan,) * 3})
    bpy.context.scene.frame_set(1)
    rt = cloth_runtime.peek_runtime(cloth)
    assert rt is not None
    shown = play(range(2, 16))
    assert cloth_runtime.peek_runtime(cloth) is rt  # built once, not on every frame
    assert cloth.xof_physics.cache_state == "VALID"
    free = np.setdiff1d(np.arange(N * N), [0, N - 1, 20, 43])
    assert np.isfinite(shown[15][free]).all()
    # the free points fall (they stood still at their rest when rebuilt each frame)
    assert shown[15][free, 2].min() < -0.3
    # the solver holds them at 0 (pinned: the viewport draws the mesh's own NaN there)
    np.testing.assert_array_equal(rt.cache.frames[15].positions[[20, 43]], np.zeros((2, 3)))
    assert positions(cloth)[[20, 43]].tobytes() == np.full((2, 3), np.nan, np.float32).tobytes()


@pytest.mark.filterwarnings("error::RuntimeWarning")  # numpy's, on the console
def test_an_inf_rest_point_is_reported_once_for_what_it_is(cloth) -> None:
    """Issue 34, item 19: a free point with an inf rest position was reported on every frame
    as "1 non-finite pinned targets ignored", although the user pinned nothing there. It is
    reported once, as a non-finite rest position held at the origin."""
    _bad_rest(cloth, {30: (np.inf, 0.0, 0.0)})
    shown = play(range(1, 12))
    rt = cloth_runtime.peek_runtime(cloth)
    assert rt is not None
    assert rt.warnings == [
        "1 point with a non-finite rest position (NaN or inf): held at the object's origin"
    ]
    assert "pinned targets" not in cloth.xof_physics.last_warning
    np.testing.assert_array_equal(rt.cache.frames[11].positions[30], (0.0, 0.0, 0.0))
    assert shown[11][np.arange(N * N) != 30, 2].min() < -0.3


def test_a_tampered_saved_cache_drops_its_nan_frames(cloth, tmp_path) -> None:
    """Issue 34, item 19: a saved cache whose frames held NaN (a tampered or damaged .blend)
    was shown as is: frame 4 drew NaN points. Frames with a NaN or inf are dropped when the
    cache is loaded, with a warning naming them, and playback simulates them again."""
    from xof.addon.scene.cloth.cache import FrameCache

    shown = play(range(1, 11))
    path = str(tmp_path / "tampered.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    unregister_physics()  # edit the saved cache as another tool would
    try:
        bpy.ops.wm.open_mainfile(filepath=path)
        obj = bpy.data.objects["Cloth"]
        saved = FrameCache.from_bytes(bytes(obj[saved_cache.CACHE_PROPERTY]))
        saved.frames[4].positions[3] = np.nan
        saved.frames[7].velocities[0, 1] = np.inf
        del obj[saved_cache.CACHE_PROPERTY]
        obj[saved_cache.CACHE_PROPERTY] = saved.to_bytes()
        bpy.ops.wm.save_mainfile()
    finally:
        register_physics()
    bpy.ops.wm.open_mainfile(filepath=path)
    obj = bpy.data.objects["Cloth"]
    pb = cloth_runtime.playback_for(obj)
    assert sorted(pb.cache.frames) == [1, 2, 3, 5, 6, 8, 9, 10]
    assert obj.xof_physics.last_warning == "saved cache frames 4, 7 held NaN or inf: dropped"
    again = play(range(4, 11))
    assert np.isfinite(again[4]).all()
    np.testing.assert_allclose(again[4], shown[4], atol=1e-3)  # simulated again from frame 3
    np.testing.assert_array_equal(again[5], shown[5])  # the saved frames that are fine
    np.testing.assert_allclose(again[7], shown[7], atol=1e-3)


@pytest.mark.filterwarnings("error::RuntimeWarning")  # numpy's, on the console
def test_a_soft_body_keeps_its_shape_pull_beside_an_inf_rest_point(cloth) -> None:
    """Issue 34, item 19, on a hooked soft body: the inf rest point's NaN goal voided the
    whole shape target on every frame ("non-finite shape targets ignored"); only the point
    itself is left out (held at the origin), reported once."""
    from ..cloth_fixtures import hook_whole

    cloth.xof_physics.sim_type = "SOFT"
    hook_whole(bpy, cloth, np.array([0.6, -0.2, 0.4]))
    _bad_rest(cloth, {30: (np.inf, 0.0, 0.0)})
    play(range(1, 12))
    rt = cloth_runtime.peek_runtime(cloth)
    assert rt is not None
    assert rt.warnings == [
        "1 point with a non-finite rest position (NaN or inf): held at the object's origin"
    ]
