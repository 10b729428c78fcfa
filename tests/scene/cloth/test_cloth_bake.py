"""Bake to shape keys or a .pc2 + Mesh Cache modifier: every frame shows the simulation."""

from __future__ import annotations

import struct

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene.cloth import bake as cloth_bake  # noqa: E402
from xof.addon.scene.cloth import runtime as cloth_runtime  # noqa: E402

from ..cloth_fixtures import (  # noqa: E402
    evaluated_positions,
    pinned_cloth,
    positions,
)

pytestmark = pytest.mark.blender
N = 6


@pytest.fixture
def cloth(physics):
    """A 6 x 6 pinned cloth simulated over frames 3-14."""
    return pinned_cloth(bpy, N, frame_end=14, frame_start=3)


def simulated(obj) -> dict[int, np.ndarray]:
    cache = cloth_runtime.peek_runtime(obj).cache
    return {f: cache.frames[f].positions.copy() for f in range(3, 15)}


def test_pc2_writer_header_by_hand(tmp_path) -> None:
    frames = np.arange(2 * 4 * 3, dtype=np.float32).reshape(2, 4, 3)
    path = tmp_path / "x.pc2"
    cloth_bake.write_pc2(path, frames, start=5.0)
    blob = path.read_bytes()
    assert blob[:12] == b"POINTCACHE2\0"
    assert struct.unpack("<iiffi", blob[12:32]) == (1, 4, 5.0, 1.0, 2)
    assert len(blob) == 32 + 2 * 4 * 12
    np.testing.assert_array_equal(np.frombuffer(blob[32:], "<f4").reshape(2, 4, 3), frames)
    start, rate, back = cloth_bake.read_pc2(path)
    assert (start, rate) == (5.0, 1.0)
    np.testing.assert_array_equal(back, frames)


def test_bake_to_shape_keys_shows_every_frame_and_survives_reload(cloth, tmp_path) -> None:
    scene = bpy.context.scene
    assert bpy.ops.xof.sim_bake() == {"FINISHED"}
    frames = simulated(cloth)
    assert cloth.xof_physics.cache_state == "BAKED"
    assert len(cloth.data.shape_keys.key_blocks) == 1 + 12
    for f in (3, 4, 9, 14):
        scene.frame_set(f)
        np.testing.assert_allclose(evaluated_positions(bpy, cloth), frames[f], atol=1e-6)
    path = str(tmp_path / "baked.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    bpy.ops.wm.open_mainfile(filepath=path)
    obj = bpy.data.objects["Cloth"]
    assert obj.xof_physics.cache_state == "BAKED"
    bpy.context.scene.frame_set(11)
    np.testing.assert_allclose(evaluated_positions(bpy, obj), frames[11], atol=1e-6)
    bpy.context.view_layer.objects.active = obj
    assert bpy.ops.xof.sim_free_bake() == {"FINISHED"}
    assert obj.data.shape_keys is None
    assert obj.xof_physics.cache_state == "VALID"  # the cache saved with the file is back


def test_bake_to_pc2_plays_through_a_mesh_cache_modifier(cloth, tmp_path) -> None:
    scene = bpy.context.scene
    props = cloth.xof_physics
    props.bake_target = "PC2"
    props.bake_path = str(tmp_path / "cloth.pc2")
    assert bpy.ops.xof.sim_bake() == {"FINISHED"}
    frames = simulated(cloth)
    start, rate, data = cloth_bake.read_pc2(props.bake_path)
    assert (start, rate, data.shape) == (3.0, 1.0, (12, N * N, 3))
    mod = cloth.modifiers[cloth_bake.MODIFIER_NAME]
    assert mod.frame_start == 3.0
    for f in (3, 5, 10, 14):
        scene.frame_set(f)
        np.testing.assert_allclose(evaluated_positions(bpy, cloth), frames[f], atol=1e-6)
    assert bpy.ops.xof.sim_free_bake() == {"FINISHED"}
    assert cloth_bake.MODIFIER_NAME not in cloth.modifiers
    scene.frame_set(9)
    np.testing.assert_array_equal(evaluated_positions(bpy, cloth), frames[9])


def test_a_pc2_bake_is_kept_relative_to_the_blend_and_free_bake_can_delete_it(
    cloth, tmp_path
) -> None:
    import shutil

    project = tmp_path / "project"
    project.mkdir()
    bpy.ops.wm.save_as_mainfile(filepath=str(project / "scene.blend"))
    cloth.xof_physics.bake_target = "PC2"  # no path: next to the .blend
    assert bpy.ops.xof.sim_bake() == {"FINISHED"}
    frames = simulated(cloth)
    mod = cloth.modifiers[cloth_bake.MODIFIER_NAME]
    assert mod.filepath == "//scene_Cloth.pc2"  # as Blender's own caches keep their paths
    bpy.ops.wm.save_mainfile()
    moved = tmp_path / "moved"
    shutil.copytree(project, moved)
    shutil.rmtree(project)  # the project folder moved (or was zipped and unpacked)
    bpy.ops.wm.open_mainfile(filepath=str(moved / "scene.blend"))
    obj = bpy.data.objects["Cloth"]
    bpy.context.view_layer.objects.active = obj
    bpy.context.scene.frame_set(10)
    np.testing.assert_allclose(evaluated_positions(bpy, obj), frames[10], atol=1e-6)
    assert cloth_bake.baked_file(obj) == str(moved / "scene_Cloth.pc2")
    assert bpy.ops.xof.sim_free_bake(delete_file=True) == {"FINISHED"}
    assert not (moved / "scene_Cloth.pc2").exists()
    assert cloth_bake.MODIFIER_NAME not in obj.modifiers
    assert obj.xof_physics.cache_state == "VALID"  # the live cache plays again


def test_free_bake_keeps_the_file_unless_asked(cloth, tmp_path) -> None:
    props = cloth.xof_physics
    props.bake_target = "PC2"
    props.bake_path = str(tmp_path / "keep.pc2")
    assert bpy.ops.xof.sim_bake() == {"FINISHED"}
    assert bpy.ops.xof.sim_free_bake() == {"FINISHED"}
    assert (tmp_path / "keep.pc2").is_file()


def _saved_project(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    bpy.ops.wm.save_as_mainfile(filepath=str(project / "scene.blend"))
    return project


def test_free_bake_keeps_a_file_a_shift_d_copy_still_plays(cloth, tmp_path) -> None:
    """Issue 34, item 2: bake to .pc2, duplicate the object (Shift+D copies the Mesh Cache
    modifier), Free Bake the copy with "delete the file": the original then showed its rest
    shape (0.97 m off its frame 14 here) and stayed Baked. The file is kept, and said why."""
    from xof.operators import physics_ops

    project = _saved_project(tmp_path)
    cloth.xof_physics.bake_target = "PC2"
    assert bpy.ops.xof.sim_bake() == {"FINISHED"}
    frames = simulated(cloth)
    rest_gap = np.abs(frames[14] - positions(cloth)).max()  # what the bug showed instead
    for other in bpy.context.view_layer.objects:
        other.select_set(other == cloth)
    assert bpy.ops.object.duplicate() == {"FINISHED"}  # Shift+D
    copy = bpy.context.view_layer.objects.active
    assert copy != cloth and copy.modifiers[cloth_bake.MODIFIER_NAME].filepath == (
        "//scene_Cloth.pc2"
    )
    file = project / "scene_Cloth.pc2"
    assert physics_ops.dialog_lines(copy) == (
        str(file),
        'The file is kept: still played by "Cloth"',
    )
    assert bpy.ops.xof.sim_free_bake(delete_file=True) == {"FINISHED"}
    assert file.is_file()
    assert cloth_bake.MODIFIER_NAME not in copy.modifiers
    bpy.context.scene.frame_set(14)
    assert rest_gap > 0.9
    assert cloth.xof_physics.cache_state == "BAKED"
    np.testing.assert_allclose(evaluated_positions(bpy, cloth), frames[14], atol=1e-6)
    # the last object playing it may delete it
    bpy.context.view_layer.objects.active = cloth
    assert physics_ops.dialog_lines(cloth) == (str(file), None)
    assert bpy.ops.xof.sim_free_bake(delete_file=True) == {"FINISHED"}
    assert not file.exists()


def test_free_bake_and_bake_leave_a_file_that_is_not_this_meshs_point_cache(
    cloth, tmp_path
) -> None:
    """Issue 34, item 3: a crafted .blend whose cache modifier points at
    ``//../elsewhere/notes.txt``: Free Bake (box ticked) deleted it, Bake overwrote it with a
    point cache without asking. Only point caches (PC2 header) of this mesh's vertex count are
    deleted or overwritten; the dialog shows the full path."""
    from xof.operators import physics_ops

    project = _saved_project(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    notes = elsewhere / "notes.txt"
    notes.write_text("my notes\n")
    props = cloth.xof_physics
    props.bake_target = "PC2"
    assert bpy.ops.xof.sim_bake() == {"FINISHED"}
    cloth.modifiers[cloth_bake.MODIFIER_NAME].filepath = "//../elsewhere/notes.txt"
    props.bake_path = "//../elsewhere/notes.txt"
    bpy.ops.wm.save_mainfile()
    bpy.ops.wm.open_mainfile(filepath=str(project / "scene.blend"))
    obj = bpy.data.objects["Cloth"]
    bpy.context.view_layer.objects.active = obj
    assert physics_ops.dialog_lines(obj) == (
        str(notes),
        "The file is kept: not a PC2 point cache",
    )
    assert bpy.ops.xof.sim_free_bake(delete_file=True) == {"FINISHED"}
    assert notes.read_text() == "my notes\n"
    with pytest.raises(RuntimeError, match="is not a PC2 point cache: not overwritten"):
        bpy.ops.xof.sim_bake()
    assert notes.read_text() == "my notes\n"
    assert obj.xof_physics.cache_state != "BAKED"

    # a point cache of another mesh (5 points, this one has 36) is neither replaced nor deleted
    other = elsewhere / "other.pc2"
    cloth_bake.write_pc2(other, np.zeros((2, 5, 3), np.float32), start=1.0)
    before = other.read_bytes()
    obj.xof_physics.bake_path = str(other)
    with pytest.raises(RuntimeError, match="a point cache of 5 points, this mesh has 36"):
        bpy.ops.xof.sim_bake()
    obj.xof_physics.bake_path = ""
    assert bpy.ops.xof.sim_bake() == {"FINISHED"}
    obj.modifiers[cloth_bake.MODIFIER_NAME].filepath = str(other)
    assert physics_ops.dialog_lines(obj) == (
        str(other),
        "The file is kept: a point cache of 5 points, this mesh has 36",
    )
    assert bpy.ops.xof.sim_free_bake(delete_file=True) == {"FINISHED"}
    assert other.read_bytes() == before


@pytest.mark.parametrize(("first", "second"), [("Flag.001", "Flag_001"), ("Cape 1", "Cape_1")])
def test_two_objects_whose_names_clean_alike_bake_to_two_files(
    physics, tmp_path, first, second
) -> None:
    """Issue 34, item 4: "Flag.001" and "Flag_001" (or "Cape 1" / "Cape_1") both baked to
    ``//scene_Flag_001.pc2``; the second replaced the first's cache. The second gets a number."""
    _saved_project(tmp_path)
    clean = first.replace(".", "_").replace(" ", "_")
    baked = {}
    for name in (first, second):
        obj = pinned_cloth(bpy, N, frame_end=8)
        obj.name = name
        obj.data.name = name
        obj.xof_physics.bake_target = "PC2"
        if name == second:
            obj.xof_physics.gravity = (0.0, 0.0, -3.0)  # another simulation
        bpy.context.view_layer.objects.active = obj
        assert bpy.ops.xof.sim_bake() == {"FINISHED"}
        baked[name] = cloth_runtime.peek_runtime(obj).cache.frames[8].positions.copy()
    a, b = bpy.data.objects[first], bpy.data.objects[second]
    assert a.modifiers[cloth_bake.MODIFIER_NAME].filepath == f"//scene_{clean}.pc2"
    assert b.modifiers[cloth_bake.MODIFIER_NAME].filepath == f"//scene_{clean}_2.pc2"
    assert np.abs(baked[first] - baked[second]).max() > 0.05
    bpy.context.scene.frame_set(8)
    np.testing.assert_allclose(evaluated_positions(bpy, a), baked[first], atol=1e-6)
    np.testing.assert_allclose(evaluated_positions(bpy, b), baked[second], atol=1e-6)
