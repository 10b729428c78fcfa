"""Playback steps all of a scene's cloths in one solver pass, with the same result as
stepping each alone; colliders of one collection are read once a frame for all of them,
and a moving surface moves for each cloth as it does for the cloth alone."""

from __future__ import annotations

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene.cloth import colliders as cloth_colliders  # noqa: E402
from xof.addon.scene.cloth import together  # noqa: E402

from ..cloth_fixtures import evaluated_positions, grid_object, pin_top_corners  # noqa: E402

pytestmark = pytest.mark.blender


def _scene(bpy_module, rising: bool = False) -> list:
    """Three cloths side by side (different stiffness and gravity) over a floor plane
    (``rising``: the floor rises through where the cloths hang over frames 1-12)."""
    floor_mesh = bpy_module.data.meshes.new("Floor")
    floor_mesh.from_pydata([(-5, -5, 0), (5, -5, 0), (5, 5, 0), (-5, 5, 0)], [], [(0, 1, 2, 3)])
    floor = bpy_module.data.objects.new("Floor", floor_mesh)
    colliders = bpy_module.data.collections.new("Colliders")
    bpy_module.context.scene.collection.children.link(colliders)
    colliders.objects.link(floor)
    if rising:
        floor.location = (0.0, 0.0, -0.2)
        floor.keyframe_insert("location", index=2, frame=1)
        floor.location = (0.0, 0.0, 0.9)
        floor.keyframe_insert("location", index=2, frame=12)
    cloths = []
    for i, (stiffness, gravity) in enumerate(((1e6, -9.81), (2e4, -5.0), (1e5, -9.81))):
        obj = grid_object(bpy_module, f"Cloth{i}", 8, 8, size=1.0)
        obj.location = (1.5 * i, 0.0, 1.0)
        pin_top_corners(bpy_module, obj, 8)
        props = obj.xof_physics
        props.enabled = True
        props.frame_start, props.frame_end = 1, 30
        props.stiffness = stiffness
        props.gravity = (0.0, 0.0, gravity)
        props.collider_collection = colliders
        cloths.append(obj)
    return cloths


def _play(frames: int, after_reset=None) -> list[list[np.ndarray]]:
    scene = bpy.context.scene
    out = []
    for f in range(1, frames + 1):
        scene.frame_set(f)
        if f == 1 and after_reset is not None:
            after_reset()
        out.append(
            [evaluated_positions(bpy, bpy.data.objects[f"Cloth{i}"]).copy() for i in range(3)]
        )
    return out


def _one_by_one(monkeypatch) -> None:
    """Step every cloth by itself, each with its own surfaces (the per-object path)."""

    def one_by_one(todos, depsgraph, surfaces, on_error, helpers=True):
        for todo in todos:
            together._alone(todo, depsgraph)

    monkeypatch.setattr(together, "_step_together", one_by_one)


@pytest.mark.parametrize("rising", [False, True])
def test_playing_together_equals_playing_each_alone(physics, monkeypatch, rising) -> None:
    _scene(bpy, rising)
    reads: list[int] = []
    real = cloth_colliders.SurfaceColliders.colliders

    def counted(self, *args, **kwargs):
        reads.append(1)
        return real(self, *args, **kwargs)

    shared = _play(
        12, lambda: monkeypatch.setattr(cloth_colliders.SurfaceColliders, "colliders", counted)
    )
    assert len(reads) == 11  # one read a stepped frame (2-12) for all three cloths
    assert together._WORLD.world is not None
    monkeypatch.undo()

    bpy.ops.wm.read_homefile(use_empty=True)
    _scene(bpy, rising)
    together.forget()
    _one_by_one(monkeypatch)
    alone = _play(12)
    for a, b in zip(shared, alone, strict=True):
        for x, y in zip(a, b, strict=True):
            assert np.array_equal(x, y)
    lowest = [1.0 + float(x[:, 2].min()) for x in shared[-1]]  # world z (cloths at z = 1)
    if not rising:
        assert np.abs(shared[-1][1] - shared[0][1]).max() > 0.1  # they did move
        assert min(lowest) < 0.1
    else:  # the risen floor (z = 0.9) carries them, kept its reach (0.01 + 0.005) away
        assert np.allclose(lowest, 0.915, atol=1e-3)


def test_cloths_split_with_a_helper_process_play_as_alone_and_it_stops(
    physics, monkeypatch
) -> None:
    from xof.addon.sim.many import parallel

    monkeypatch.setattr(parallel, "MIN_POINTS", 1)  # three 8 x 8 cloths: worth a helper now
    monkeypatch.setattr(parallel, "PART_POINTS", 1)
    parallel.configure(1)
    try:
        _scene(bpy, rising=True)
        shared = _play(12)
        world = together._WORLD.world
        assert world is not None and parallel.running() == 1
        assert [b.remote is not None for b in world._batches] == [False, True]
        bpy.ops.wm.read_homefile(use_empty=True)  # a file load stops it
        assert parallel.running() == 0 and together._WORLD.world is None
        _scene(bpy, rising=True)
        _one_by_one(monkeypatch)
        alone = _play(12)
        for a, b in zip(shared, alone, strict=True):
            for x, y in zip(a, b, strict=True):
                assert np.array_equal(x, y)
        monkeypatch.undo()
        monkeypatch.setattr(parallel, "MIN_POINTS", 1)
        monkeypatch.setattr(parallel, "PART_POINTS", 1)
        bpy.ops.wm.read_homefile(use_empty=True)
        _scene(bpy)
        _play(3)
        assert parallel.running() == 1
    finally:
        parallel.configure(None)
    from ..cloth_fixtures import unregister_physics

    unregister_physics()  # the extension's end stops it
    assert parallel.running() == 0
    from ..cloth_fixtures import register_physics

    register_physics()  # for the fixture's teardown


def test_the_scene_setting_turns_the_helper_processes_off_and_on(physics, monkeypatch) -> None:
    from xof.addon.sim.many import parallel

    monkeypatch.setattr(parallel, "MIN_POINTS", 1)
    monkeypatch.setattr(parallel, "PART_POINTS", 1)
    parallel.configure(1)
    try:
        _scene(bpy, rising=True)
        scene = bpy.context.scene
        assert scene.xof_cloth_helpers  # on by default
        scene.xof_cloth_helpers = False
        off = _play(12)
        assert parallel.running() == 0
        bpy.ops.wm.read_homefile(use_empty=True)
        _scene(bpy, rising=True)
        scene = bpy.context.scene
        out = _play(6)
        assert parallel.running() == 1
        scene.xof_cloth_helpers = False  # off while playing: the helpers stop
        for f in range(7, 13):
            scene.frame_set(f)
            out.append(
                [evaluated_positions(bpy, bpy.data.objects[f"Cloth{i}"]).copy() for i in range(3)]
            )
            if f == 7:
                assert parallel.running() == 0
        for a, b in zip(off, out, strict=True):
            for x, y in zip(a, b, strict=True):
                assert np.array_equal(x, y)
    finally:
        parallel.configure(None)
        parallel.shutdown()
