"""Meshes built from hand-made SceneData: topology, normals, UVs, colours, materials."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene.importer import ImportOptions, build_scene  # noqa: E402
from xof.addon.xfile.views.model import (  # noqa: E402
    FrameData,
    MaterialData,
    MeshData,
    SceneData,
)

from ..scene_fixtures import CUBE_FACES, CUBE_OUTWARD, CUBE_VERTS, P3, polygons  # noqa: E402

pytestmark = [pytest.mark.blender, pytest.mark.usefixtures("empty_scene")]


def cube_data(**kw) -> MeshData:
    sizes = np.array([len(f) for f in CUBE_FACES])
    return MeshData("Cube", CUBE_VERTS.copy(), sizes, np.concatenate(CUBE_FACES), **kw)


def corner_normals(mesh) -> np.ndarray:
    out = np.empty(len(mesh.loops) * 3, dtype=np.float32)
    mesh.corner_normals.foreach_get("vector", out)
    return out.reshape(-1, 3)


def test_vertices_are_the_files_in_order_and_faces_reversed():
    ctx = build_scene(SceneData(meshes=[cube_data()]))
    mesh = ctx.result.meshes[0]
    co = np.array([v.co for v in mesh.vertices])
    np.testing.assert_allclose(co, CUBE_VERTS @ P3.T)
    expected = [[f[0], *reversed(f[1:])] for f in CUBE_FACES]
    assert polygons(mesh) == expected


def test_closed_cube_has_outward_normals():
    ctx = build_scene(SceneData(meshes=[cube_data()]))
    mesh = ctx.result.meshes[0]
    normals = np.array([p.normal for p in mesh.polygons])
    np.testing.assert_allclose(normals, CUBE_OUTWARD @ P3.T, atol=1e-6)


def test_custom_normals_follow_corners_through_the_reversal():
    # one normal per face corner, each distinct, so a mix-up of corners shows
    corner_count = 4 * len(CUBE_FACES)
    rng = np.random.default_rng(3)
    normals = rng.normal(size=(corner_count, 3))
    normals /= np.linalg.norm(normals, axis=1)[:, None]
    data = cube_data(normals=normals, normal_corners=np.arange(corner_count))
    ctx = build_scene(SceneData(meshes=[data]))
    got = corner_normals(ctx.result.meshes[0])
    # Blender loop j of face i is file corner (0, 3, 2, 1)[j] of face i
    file_corner = np.array([4 * i + k for i in range(6) for k in (0, 3, 2, 1)])
    np.testing.assert_allclose(got, normals[file_corner] @ P3.T, atol=2e-3)


def test_ngons_stay_ngons_and_bad_faces_are_dropped_with_warnings():
    verts = np.array([[np.cos(a), np.sin(a), 0.0] for a in np.linspace(0, 2 * np.pi, 7)[:-1]])
    faces = [[0, 1, 2, 3, 4, 5], [0, 1], [0, 1, 9], [0, 1, 1], [0, 1, 0, 2], [0, 1, 2, 3, 1, 4]]
    sizes = np.array([len(f) for f in faces])
    mats = [MaterialData(n, np.ones(4), 0, np.zeros(3), np.zeros(3), None) for n in "AB"]
    data = MeshData("N", verts, sizes, np.concatenate(faces), material_indices=np.arange(6) % 2,
                    materials=mats)  # fmt: skip
    ctx = build_scene(SceneData(meshes=[data]))
    mesh = ctx.result.meshes[0]
    assert len(mesh.vertices) == 6
    assert polygons(mesh) == [[0, 5, 4, 3, 2, 1]]
    assert [p.material_index for p in mesh.polygons] == [0]
    text = " | ".join(ctx.result.warnings)
    assert "fewer than 3 corners" in text
    assert "out of range" in text
    assert "using a vertex twice" in text
    assert "3 face(s) using a vertex twice" in text


def test_uvs_colours_and_material_indices():
    rng = np.random.default_rng(1)
    uv0 = rng.random((8, 2))
    uv1 = rng.random((8, 2))
    colors = rng.random((8, 4))
    red = MaterialData("Red", np.array([1, 0, 0, 1.0]), 0, np.zeros(3), np.zeros(3), None)
    blue = MaterialData("Blue", np.array([0, 0, 1, 1.0]), 0, np.zeros(3), np.zeros(3), None)
    data = cube_data(uv_sets=[uv0, uv1], colors=colors, materials=[red, blue],
                     material_indices=np.array([0, 1, 1, 0, 1, 7]))  # fmt: skip
    ctx = build_scene(SceneData(meshes=[data]))
    mesh = ctx.result.meshes[0]
    loop_verts = np.array([lp.vertex_index for lp in mesh.loops])
    for layer, uv in zip(mesh.uv_layers, (uv0, uv1), strict=True):
        got = np.array([d.vector for d in layer.uv])
        np.testing.assert_allclose(got[:, 0], uv[loop_verts, 0], atol=1e-6)
        np.testing.assert_allclose(got[:, 1], 1.0 - uv[loop_verts, 1], atol=1e-6)
    col = mesh.color_attributes["Color"]
    assert col.domain == "POINT"
    got = np.array([d.color_srgb for d in col.data])
    np.testing.assert_allclose(got, colors, atol=1 / 255 + 1e-6)
    assert [m.name for m in mesh.materials] == ["Red", "Blue"]
    assert [p.material_index for p in mesh.polygons] == [0, 1, 1, 0, 1, 0]
    assert any("material indices out of range" in w for w in ctx.result.warnings)


def test_options_switch_parts_off_and_flat_shading():
    rng = np.random.default_rng(2)
    red = MaterialData("Red", np.array([1, 0, 0, 1.0]), 0, np.zeros(3), np.zeros(3), None)
    data = cube_data(uv_sets=[rng.random((8, 2))], colors=rng.random((8, 4)), materials=[red],
                     material_indices=np.zeros(6, np.int64), normals=np.array([[0, 1.0, 0]]),
                     normal_corners=np.zeros(24, np.int64))  # fmt: skip
    opts = ImportOptions(use_uvs=False, use_colors=False, use_materials=False,
                         use_custom_normals=False, shading="FLAT")  # fmt: skip
    ctx = build_scene(SceneData(meshes=[data]), opts)
    mesh = ctx.result.meshes[0]
    assert len(mesh.uv_layers) == 0 and len(mesh.color_attributes) == 0
    assert len(mesh.materials) == 0 and len(bpy.data.materials) == 0
    assert "custom_normal" not in mesh.attributes
    assert all(not p.use_smooth for p in mesh.polygons)


def test_shared_material_is_built_once():
    shared = MaterialData(
        "Shared", np.array([0.2, 0.4, 0.6, 1.0]), 5, np.zeros(3), np.zeros(3), None
    )
    a = cube_data(materials=[shared], material_indices=np.zeros(6, np.int64))
    b = cube_data(materials=[shared], material_indices=np.zeros(6, np.int64))
    ctx = build_scene(SceneData(frames=[FrameData("F", np.eye(4), meshes=[a, b])]))
    assert len(bpy.data.materials) == 1
    assert [m.materials[0].name for m in ctx.result.meshes] == ["Shared", "Shared"]


def test_per_vertex_normals_indexed_like_the_faces():
    """MeshNormals with one normal per vertex and the faces' own indices (the common case)."""
    rng = np.random.default_rng(4)
    normals = rng.normal(size=(8, 3))
    normals /= np.linalg.norm(normals, axis=1)[:, None]
    data = cube_data(normals=normals, normal_corners=np.concatenate(CUBE_FACES))
    ctx = build_scene(SceneData(meshes=[data]))
    mesh = ctx.result.meshes[0]
    loop_verts = np.array([lp.vertex_index for lp in mesh.loops])
    np.testing.assert_allclose(corner_normals(mesh), normals[loop_verts] @ P3.T, atol=2e-3)


def test_more_uv_sets_than_blender_holds_are_skipped_with_a_warning():
    # found by the import fuzz: the ninth uv_layers.new() returns None
    rng = np.random.default_rng(2)
    sets = [rng.random((8, 2)) for _ in range(10)]
    ctx = build_scene(SceneData(meshes=[cube_data(uv_sets=sets)]))
    mesh = ctx.result.meshes[0]
    assert len(mesh.uv_layers) == 8
    loop_verts = np.array([lp.vertex_index for lp in mesh.loops])
    got = np.array([d.vector for d in mesh.uv_layers[7].uv])
    np.testing.assert_allclose(got[:, 0], sets[7][loop_verts, 0], atol=1e-6)
    assert any("past Blender's 8" in w for w in ctx.result.warnings)


def test_a_repeated_face_leaves_a_mesh_validate_does_not_change():
    """tiny.x repeats 3 faces: its mesh had 6841 faces and ``Mesh.validate()`` took it to
    6838 (the glTF exporter warned on it). Now the import drops the repeats and says so."""
    faces = [*CUBE_FACES, CUBE_FACES[0][::-1], CUBE_FACES[2]]
    sizes = np.array([len(f) for f in faces])
    data = MeshData("Cube", CUBE_VERTS.copy(), sizes, np.concatenate(faces))
    ctx = build_scene(SceneData(meshes=[data]))
    (mesh,) = ctx.result.meshes
    assert len(mesh.vertices) == len(CUBE_VERTS)  # the file's vertices, all kept
    assert len(mesh.polygons) == len(CUBE_FACES)
    assert mesh.validate() is False  # nothing left for Blender to fix
    assert any("2 face(s) repeating" in w for w in ctx.result.warnings)


def test_uvs_not_finite_are_zero_with_a_warning_and_no_numpy_warning():
    # found by the import fuzz: a UV of 1e39 (past float32) overflowed in ``1 - v`` with a
    # RuntimeWarning on the console, and infinite / NaN UVs went into the mesh
    uv = np.tile([0.25, 0.5], (8, 1))
    uv[2] = [np.nan, 0.5]
    uv[5] = [0.25, 1e39]
    uv[6] = [-np.inf, 0.75]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a numpy RuntimeWarning fails the test
        ctx = build_scene(SceneData(meshes=[cube_data(uv_sets=[uv])]))
    mesh = ctx.result.meshes[0]
    got = np.array([d.vector for d in mesh.uv_layers[0].uv])
    loop_verts = np.array([lp.vertex_index for lp in mesh.loops])
    bad = np.isin(loop_verts, [2, 5, 6])
    assert np.isfinite(got).all()
    np.testing.assert_array_equal(got[bad], 0.0)
    np.testing.assert_allclose(got[~bad], np.tile([0.25, 0.5], ((~bad).sum(), 1)), atol=1e-7)
    said = [w for w in ctx.result.warnings if "UV" in w and "not finite" in w]
    assert said == [
        "mesh 'Cube': UV set 0: 3 UV(s) not finite (NaN, infinite or too large): set to (0, 0) "
        "(vertex 2, 5, 6)"
    ], ctx.result.warnings
