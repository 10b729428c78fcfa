"""A mesh collider's surface pose against numbers computed here with plain numpy."""

from __future__ import annotations

import numpy as np

from addon.sim.collide.surface_pose import SurfacePose, poses_ahead

from .meshes import icosphere


def test_a_pose_packs_each_triangles_corners_plane_centroid_and_radius() -> None:
    verts, faces = icosphere(2, 0.4, (0.1, -0.2, 0.3))
    verts = verts * np.array([1.0, 0.7, 1.3])  # an ellipsoid: triangles of many shapes
    pose = SurfacePose(0.25, verts, faces)
    a, b, c = (verts[faces[:, k]] for k in range(3))
    normal = np.cross(b - a, c - a)
    normal /= np.linalg.norm(normal, axis=1, keepdims=True)
    centre = (a + b + c) / 3.0
    radius = np.max([np.linalg.norm(x - centre, axis=1) for x in (a, b, c)], axis=0)
    assert pose.t == 0.25
    assert pose.planes.shape == (len(faces), 8) and pose.corners.shape == (len(faces), 12)
    assert np.allclose(pose.planes[:, 0:3], normal, atol=1e-5)
    assert np.allclose(pose.planes[:, 3], np.einsum("ij,ij->i", normal, a), atol=1e-5)
    assert np.allclose(pose.planes[:, 4:7], centre, atol=1e-6)
    assert np.allclose(pose.planes[:, 7], radius, atol=1e-6)
    for k, x in enumerate((a, b, c)):
        assert np.allclose(pose.corners[:, 4 * k : 4 * k + 3], x, atol=1e-6)
        assert not pose.corners[:, 4 * k + 3].any()
    # the rows a pair gathers, as columns
    tri = np.array([5, 0, 5, 77])
    ca, cb, cc = pose.corner_columns(tri)
    for got, want in ((ca, a), (cb, b), (cc, c)):
        assert np.allclose(got, want[tri].T, atol=1e-6)
    assert np.allclose(pose.plane_columns(tri)[0:3], normal[tri].T, atol=1e-5)


def test_a_lazy_pose_has_the_bits_of_the_whole_pose_for_the_triangles_asked_for() -> None:
    # a moving surface's pose computes the rows of the triangles its pairs name (a few dozen
    # of a body's thousands): the same bits as the whole pose at the interpolated vertices,
    # the others' when asked for
    verts, faces = icosphere(2, 0.4, (0.1, -0.2, 0.3))
    motion = np.random.default_rng(4).normal(size=verts.shape) * 0.05
    t = 0.3125
    whole = SurfacePose(t, verts + motion * t, faces)
    lazy = SurfacePose(t, verts, faces, motion=motion, lazy=True)
    tri = np.array([7, 3, 7, 150])
    for got, want in zip(lazy.corner_columns(tri), whole.corner_columns(tri), strict=True):
        assert np.array_equal(got, want)
    assert np.array_equal(lazy.plane_columns(tri), whole.plane_columns(tri))
    assert np.array_equal(lazy.prepared(), [3, 7, 150])
    assert np.array_equal(lazy.edge_planes, whole.edge_planes)  # every row, on demand
    assert np.array_equal(lazy.planes, whole.planes) and np.array_equal(lazy.corners, whole.corners)


def test_poses_ahead_have_the_bits_of_each_substeps_lazy_pose() -> None:
    # a mesh collider computes its named triangles' rows for the frame's substeps to come
    # in one pass: each time's rows are those of a lazy pose at that time, bit for bit, and
    # a pose filled with them is that pose
    verts, faces = icosphere(2, 0.4, (0.1, -0.2, 0.3))
    motion = np.random.default_rng(4).normal(size=verts.shape) * 0.05
    tri = np.array([3, 7, 40, 150])
    times = np.array([k / 16 for k in range(3, 17)])
    corners, planes = poses_ahead(verts, motion, faces[tri], times)
    assert corners.shape == (times.size, tri.size, 12) and planes.shape == (times.size, tri.size, 8)
    for s, t in enumerate(times):
        lazy = SurfacePose(float(t), verts, faces, motion=motion, lazy=True)
        assert np.array_equal(corners[s], lazy.corner_rows(tri))
        assert np.array_equal(planes[s], lazy.plane_columns(tri).T)
        filled = SurfacePose(float(t), verts, faces, motion=motion, lazy=True)
        filled.fill(tri, corners[s], planes[s])
        assert np.array_equal(filled.prepared(), tri)
        assert np.array_equal(filled.plane_columns(tri), lazy.plane_columns(tri))
        # independent numbers: the plane of triangle 40 at t
        a, b, c = (verts[faces[40, k]] + motion[faces[40, k]] * t for k in range(3))
        normal = np.cross(b - a, c - a)
        normal /= np.linalg.norm(normal)
        assert np.allclose(planes[s, 2, 0:3], normal, atol=1e-5)
        assert np.allclose(planes[s, 2, 3], normal @ a, atol=1e-5)
