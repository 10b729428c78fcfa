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
from xof.addon.scene.cloth import together  # noqa: E402
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
