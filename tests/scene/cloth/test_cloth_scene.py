"""Colliders from Blender objects, soft bodies and the import step, through the handler."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene.cloth.colliders import collider_for  # noqa: E402
from xof.addon.scene.cloth.data import MASS_GROUP, group_weights  # noqa: E402
from xof.addon.sim.collide.colliders import Plane, Sphere  # noqa: E402

from ..cloth_fixtures import (  # noqa: E402
    grid_arrays,
    grid_object,
    on_screen,
    pin_top_corners,
    positions,
)

pytestmark = pytest.mark.blender
FLAG = Path(__file__).resolve().parents[3] / "examples" / "flag.x"


def test_colliders_from_object_sizes_and_transforms(physics) -> None:
    bpy.ops.mesh.primitive_uv_sphere_add(radius=0.5, location=(1.0, 2.0, 3.0))
    ball = bpy.context.object
    ball.scale = (2.0, 2.0, 2.0)
    bpy.ops.mesh.primitive_plane_add(size=4.0, location=(0.0, 0.0, -1.0))
    floor = bpy.context.object
    floor.rotation_euler = (np.pi / 2, 0.0, 0.0)  # its normal turns from +Z to -Y
    ball.xof_physics.collider_shape = "SPHERE"  # meshes are surfaces unless told otherwise
    floor.xof_physics.collider_shape = "PLANE"
    bpy.context.view_layer.update()
    sphere = collider_for(ball)
    assert isinstance(sphere, Sphere)
    np.testing.assert_allclose(sphere.center, [1.0, 2.0, 3.0], atol=1e-6)
    assert sphere.radius == pytest.approx(1.0, abs=1e-5)  # 0.5 * scale 2
    plane = collider_for(floor)
    assert isinstance(plane, Plane)
    np.testing.assert_allclose(plane.point, [0.0, 0.0, -1.0], atol=1e-6)
    np.testing.assert_allclose(plane.normal, [0.0, -1.0, 0.0], atol=1e-6)


def test_cloth_stays_outside_a_ball_and_above_a_floor(physics) -> None:
    n = 12
    cloth = grid_object(bpy, "Cloth", n, n)  # z = 0, falls onto the ball and the floor
    bpy.ops.mesh.primitive_uv_sphere_add(radius=0.4, location=(0.0, 0.0, -0.5))
    ball = bpy.context.object
    bpy.ops.mesh.primitive_plane_add(size=6.0, location=(0.0, 0.0, -1.0))
    floor = bpy.context.object
    colliders = bpy.data.collections.new("Colliders")
    bpy.context.scene.collection.children.link(colliders)
    for obj in (ball, floor):
        colliders.objects.link(obj)
    props = cloth.xof_physics
    props.enabled = True
    props.collider_collection = colliders
    props.collision_margin = 0.01
    scene = bpy.context.scene
    lowest, nearest = [], []
    for f in range(1, 41):
        scene.frame_set(f)
        pos = on_screen(cloth)
        lowest.append(pos[:, 2].min())
        nearest.append(np.linalg.norm(pos - np.array([0.0, 0.0, -0.5]), axis=1).min())
    assert min(lowest) >= -1.0 - 1e-4  # never below the floor
    assert min(nearest) >= 0.4 - 1e-4  # never inside the ball
    assert lowest[-1] < -0.9  # and it did fall past the ball onto the floor


def test_a_soft_body_keeps_its_shape_while_its_object_moves(physics) -> None:
    n = 6
    body = grid_object(bpy, "Soft", n, n, size=1.0)
    props = body.xof_physics
    props.enabled = True
    props.sim_type = "SOFT"
    props.gravity = (0.0, 0.0, 0.0)
    assert props.substeps == 3  # the soft-body default
    body.location = (0.0, 0.0, 0.0)
    body.keyframe_insert("location", frame=1)
    body.location = (2.0, 0.0, 0.0)
    body.keyframe_insert("location", frame=6)
    scene = bpy.context.scene
    rest, _ = grid_arrays(n, n, size=1.0)
    lag = []
    for f in range(1, 56):
        scene.frame_set(f)
        lag.append(np.abs(on_screen(body) - rest).max())
    assert max(lag[1:6]) > 0.1  # it lags behind while the object moves
    settling = np.array(lag[12:])
    assert (np.diff(settling) < 0).all()  # then settles steadily (it overshoots first)
    assert lag[-1] < 5e-3  # back in shape within 5 mm, 49 frames after the object stopped


@pytest.mark.skipif(not FLAG.is_file(), reason="examples/flag.x is absent")
def test_importing_the_flag_stores_its_masses_and_enables_cloth(physics) -> None:
    from xof.addon.scene.importer import import_files

    result = import_files([FLAG])
    flag = next(o for o in result.objects if o.type == "MESH")
    masses = group_weights(flag, MASS_GROUP, -1.0)
    assert masses.shape == (100,)
    assert np.flatnonzero(masses == 0.0).tolist() == [0, 9]  # the two top corners
    np.testing.assert_array_equal(np.delete(masses, [0, 9]), np.ones(98))
    assert flag.xof_physics.enabled
    top = positions(flag)[[0, 9]].copy()
    for f in range(1, 11):
        bpy.context.scene.frame_set(f)
    np.testing.assert_array_equal(positions(flag)[[0, 9]], top)
    assert not np.allclose(positions(flag), positions(flag)[0])  # sanity: a real mesh


def test_pins_from_the_fixture_are_the_top_corners(physics) -> None:
    cloth = grid_object(bpy, "Cloth", 4, 4)
    masses = pin_top_corners(bpy, cloth, 4)
    np.testing.assert_array_equal(group_weights(cloth, MASS_GROUP, -1.0), masses)
