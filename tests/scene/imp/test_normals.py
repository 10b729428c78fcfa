"""The import's custom normals (``normals.set_custom_normals``) against Blender's own call.

Each case builds one mesh twice: once through ``Mesh.normals_split_custom_set`` /
``normals_split_custom_set_from_vertices`` (the reference, computed here), once through
``set_custom_normals``. The corner normals Blender evaluates must agree within 1e-4 at rest,
on a shape key and under an Armature modifier that bends the mesh; each case also names the
route it must take (zero offsets for Blender's own smooth or flat normals, the per-vertex call
for one normal per vertex, the Geometry Nodes evaluation otherwise), so every route is
exercised.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene.imp import normals as nm  # noqa: E402

pytestmark = pytest.mark.blender

TOL = 1e-4
SEGMENTS, RINGS = 24, 9  # around, along (z from 0 to 4)


def tube(caps: bool = False) -> tuple[np.ndarray, list[list[int]]]:
    """Positions and outward quads (triangle fans for the caps) of a tube along +z."""
    a = 2 * np.pi * np.arange(SEGMENTS) / SEGMENTS
    z = np.linspace(0.0, 4.0, RINGS)
    pos = np.array([[math.cos(t), math.sin(t), h] for h in z for t in a])
    faces = []
    for r in range(RINGS - 1):
        for s in range(SEGMENTS):
            i, j = r * SEGMENTS + s, r * SEGMENTS + (s + 1) % SEGMENTS
            faces.append([i, j, j + SEGMENTS, i + SEGMENTS])
    if caps:
        bottom, top = len(pos), len(pos) + 1
        pos = np.vstack([pos, [[0, 0, 0], [0, 0, 4]]])
        last = (RINGS - 1) * SEGMENTS
        for s in range(SEGMENTS):
            faces.append([bottom, (s + 1) % SEGMENTS, s])
            faces.append([top, last + s, last + (s + 1) % SEGMENTS])
    return pos, faces


def folded_sheet() -> tuple[np.ndarray, list[list[int]]]:
    """A 6 x 4 quad sheet folded along x = 0 (two planes of coplanar faces), z up to 4."""
    xs, zs = np.linspace(-1.5, 1.5, 7), np.linspace(0.0, 4.0, 5)
    pos = np.array([[x, 0.6 * abs(x), z] for z in zs for x in xs])
    faces = []
    for r in range(len(zs) - 1):
        for c in range(len(xs) - 1):
            i = r * len(xs) + c
            faces.append([i, i + 1, i + 1 + len(xs), i + len(xs)])
    return pos, faces


def new_mesh(pos: np.ndarray, faces: list[list[int]]) -> bpy.types.Mesh:
    mesh = bpy.data.meshes.new("case")
    mesh.from_pydata(pos.tolist(), [], faces)
    mesh.update()
    return mesh


def radial(pos: np.ndarray) -> np.ndarray:
    n = pos * [1.0, 1.0, 0.0]
    return n / np.linalg.norm(n, axis=1, keepdims=True)


def tilted(pos: np.ndarray) -> np.ndarray:
    """Radial normals leaning along the tube, more towards its top: not Blender's."""
    n = radial(pos) + np.outer(0.1 + 0.1 * pos[:, 2], [0.0, 0.0, 1.0])
    return n / np.linalg.norm(n, axis=1, keepdims=True)


def corner_verts(mesh) -> np.ndarray:
    out = np.empty(len(mesh.loops), dtype=np.int32)
    mesh.loops.foreach_get("vertex_index", out)
    return out


def face_corner_normals(mesh) -> np.ndarray:
    per_face = np.empty(len(mesh.polygons) * 3, dtype=np.float32)
    mesh.polygons.foreach_get("normal", per_face)
    sizes = np.empty(len(mesh.polygons), dtype=np.int32)
    mesh.polygons.foreach_get("loop_total", sizes)
    return np.repeat(per_face.reshape(-1, 3), sizes, axis=0)


def smooth_vertex_normals(mesh) -> np.ndarray:
    out = np.empty(len(mesh.vertices) * 3, dtype=np.float32)
    mesh.vertex_normals.foreach_get("vector", out)
    return out.reshape(-1, 3)


def capped_normals(mesh, pos: np.ndarray) -> np.ndarray:
    """Per corner: radial on the sides, straight down / up on the caps."""
    cv = corner_verts(mesh)
    per_corner = radial(np.where(np.abs(pos[:, :2]).sum(1, keepdims=True) > 0, pos, 1.0))[cv]
    face_z = face_corner_normals(mesh)[:, 2]
    cap = np.abs(face_z) > 0.5
    per_corner[cap] = np.stack([0 * face_z, 0 * face_z, np.sign(face_z)], axis=1)[cap]
    return per_corner


def reference(mesh, normals: np.ndarray, domain: str) -> bpy.types.Mesh:
    """Blender's own call on a copy: what the import stored before."""
    ref = mesh.copy()
    ref.shade_smooth()
    values = np.ascontiguousarray(normals, dtype=np.float32)
    if domain == "POINT":
        ref.normals_split_custom_set_from_vertices(values)
    else:
        ref.normals_split_custom_set(values)
    return ref


def fast(mesh, normals: np.ndarray, domain: str) -> tuple[bpy.types.Mesh, str]:
    out = mesh.copy()
    route = nm.set_custom_normals(out, np.array(normals, dtype=np.float32), None, domain)
    return out, route


def rest_normals(mesh) -> np.ndarray:
    out = np.empty(len(mesh.loops) * 3, dtype=np.float32)
    mesh.corner_normals.foreach_get("vector", out)
    return out.reshape(-1, 3)


def bend(pos: np.ndarray, degrees: float) -> np.ndarray:
    """Bend about the x axis, progressively along z (a shape key's target)."""
    t = np.radians(degrees) * pos[:, 2] / 4.0
    y = pos[:, 1] * np.cos(t) - pos[:, 2] * np.sin(t)
    z = pos[:, 1] * np.sin(t) + pos[:, 2] * np.cos(t)
    return np.stack([pos[:, 0] + 0.2 * np.sin(3 * t), y, z], axis=1)


def deformed_normals(mesh, how: str) -> np.ndarray:
    """Corner normals of the evaluated mesh on a shape key or under an Armature modifier."""
    obj = bpy.data.objects.new("case", mesh)
    bpy.context.scene.collection.objects.link(obj)
    pos = np.array([v.co[:] for v in mesh.vertices])
    if how == "shape_key":
        obj.shape_key_add(name="Basis")
        key = obj.shape_key_add(name="Bent")
        key.data.foreach_set("co", bend(pos, 70.0).astype(np.float32).ravel())
        key.value = 1.0
    else:
        arm = bpy.data.armatures.new("rig")
        rig = bpy.data.objects.new("rig", arm)
        bpy.context.scene.collection.objects.link(rig)
        bpy.context.view_layer.objects.active = rig
        bpy.ops.object.mode_set(mode="EDIT")
        lower = arm.edit_bones.new("Lower")
        lower.head, lower.tail = (0, 0, 0), (0, 0, 2)
        upper = arm.edit_bones.new("Upper")
        upper.head, upper.tail, upper.parent = (0, 0, 2), (0, 0, 4), lower
        bpy.ops.object.mode_set(mode="OBJECT")
        w = np.clip((pos[:, 2] - 1.0) / 2.0, 0.0, 1.0)  # blend between z = 1 and z = 3
        for name, weights in (("Lower", 1 - w), ("Upper", w)):
            group = obj.vertex_groups.new(name=name)
            for i, value in enumerate(weights):
                if value > 0:
                    group.add([i], float(value), "REPLACE")
        obj.modifiers.new("Armature", "ARMATURE").object = rig
        rig.pose.bones["Upper"].rotation_mode = "XYZ"
        rig.pose.bones["Upper"].rotation_euler = (math.radians(75), 0.0, math.radians(20))
        rig.pose.bones["Lower"].rotation_mode = "XYZ"
        rig.pose.bones["Lower"].rotation_euler = (0.0, math.radians(-30), 0.0)
    graph = bpy.context.evaluated_depsgraph_get()
    evaluated = obj.evaluated_get(graph)
    deformed = evaluated.to_mesh()
    out = rest_normals(deformed)
    moved = np.array([v.co[:] for v in deformed.vertices])
    evaluated.to_mesh_clear()
    assert np.abs(moved - pos).max() > 0.5  # the mesh really moved
    return out


@pytest.fixture(autouse=True)
def nodes_for_small_meshes(empty_scene, monkeypatch):
    monkeypatch.setattr(nm, "NODES_MIN_CORNERS", 0)  # the test meshes are small


def cases():
    """(id, mesh builder, normals builder, domain, expected route)"""
    return [
        (
            "tube_radial_points",
            lambda: new_mesh(*tube()),
            lambda m, p: radial(p),
            "POINT",
            "smooth",
        ),
        (
            "tube_tilted_points",
            lambda: new_mesh(*tube()),
            lambda m, p: tilted(p),
            "POINT",
            "vertices",
        ),
        (
            "tube_tilted_corners",
            lambda: new_mesh(*tube()),
            lambda m, p: tilted(p)[corner_verts(m)],
            "CORNER",
            "vertices",
        ),
        (
            "tube_blender_points",
            lambda: new_mesh(*tube()),
            lambda m, p: smooth_vertex_normals(m),
            "POINT",
            "smooth",
        ),
        (
            "tube_blender_corners",
            lambda: new_mesh(*tube()),
            lambda m, p: smooth_vertex_normals(m)[corner_verts(m)],
            "CORNER",
            "smooth",
        ),
        (
            "capped_tube_hard_edges",
            lambda: new_mesh(*tube(caps=True)),
            capped_normals,
            "CORNER",
            "nodes",
        ),
        (
            "capped_tube_flat",
            lambda: new_mesh(*tube(caps=True)),
            lambda m, p: face_corner_normals(m),
            "CORNER",
            "flat",
        ),
        (
            "folded_sheet_flat",
            lambda: new_mesh(*folded_sheet()),
            lambda m, p: face_corner_normals(m),
            "CORNER",
            "flat",
        ),
        (
            "folded_sheet_blender_smooth",
            lambda: new_mesh(*folded_sheet()),
            lambda m, p: smooth_vertex_normals(m)[corner_verts(m)],
            "CORNER",
            "smooth",
        ),
        (
            "tube_noisy_corners",
            lambda: new_mesh(*tube()),
            lambda m, p: noisy(tilted(p)[corner_verts(m)]),
            "CORNER",
            "nodes",
        ),
    ]


def noisy(normals: np.ndarray) -> np.ndarray:
    rng = np.random.default_rng(7)
    out = normals + rng.normal(0.0, 0.1, normals.shape)
    return out / np.linalg.norm(out, axis=1, keepdims=True)


CASES = cases()


def build(case):
    _, make_mesh, make_normals, domain, route = case
    mesh = make_mesh()
    pos = np.array([v.co[:] for v in mesh.vertices])
    normals = make_normals(mesh, pos)
    return mesh, normals, domain, route


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_rest_normals_match_blenders_call(case):
    mesh, normals, domain, route = build(case)
    ref = reference(mesh, normals, domain)
    out, taken = fast(mesh, normals, domain)
    assert taken == route
    np.testing.assert_allclose(rest_normals(out), rest_normals(ref), atol=TOL, rtol=0)
    # and both are the file's normals, to Blender's 16-bit encoding (and, for the noisy ones,
    # its averaging of the normals less than 0.8 degrees apart around a vertex)
    per_corner = normals[corner_verts(mesh)] if domain == "POINT" else normals
    np.testing.assert_allclose(rest_normals(out), per_corner, atol=1e-2, rtol=0)


@pytest.mark.parametrize("how", ["shape_key", "armature"])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_deformed_normals_match_blenders_call(case, how):
    mesh, normals, domain, _ = build(case)
    ref = deformed_normals(reference(mesh, normals, domain), how)
    out = deformed_normals(fast(mesh, normals, domain)[0], how)
    np.testing.assert_allclose(out, ref, atol=TOL, rtol=0)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_every_route_stores_the_calls_data(case):
    """The offsets and sharp edges are the call's, bit for bit (the encoding's last unit may
    differ where a float sum rounds the other way: none do on these meshes)."""
    mesh, normals, domain, _ = build(case)
    ref = reference(mesh, normals, domain)
    out, _ = fast(mesh, normals, domain)
    for name, n, dtype in (
        ("custom_normal", 2 * len(mesh.loops), np.int16),
        ("sharp_edge", len(mesh.edges), bool),
        ("sharp_face", len(mesh.polygons), bool),
    ):
        want, got = np.zeros(n, dtype), np.zeros(n, dtype)
        if name in ref.attributes:
            ref.attributes[name].data.foreach_get("value", want)
        if name in out.attributes:
            out.attributes[name].data.foreach_get("value", got)
        np.testing.assert_array_equal(got, want, err_msg=name)
    assert out.attributes["custom_normal"].data_type == "INT16_2D"
    assert nm._INPUT not in out.attributes  # the scratch input is gone, and so is the rest
    assert not [s for s in bpy.data.scenes if s.name.startswith("xof")]
    assert not [t for t in bpy.data.node_groups if t.name.startswith("xof")]
    assert not [o for o in bpy.data.objects if o.name.startswith("xof")]


def test_near_miss_is_not_skipped():
    """Normals 3e-4 off Blender's smooth ones are the file's: stored, not dropped."""
    mesh = new_mesh(*tube())
    normals = smooth_vertex_normals(mesh)
    normals[5] = normals[5] + [3e-4, 0.0, 0.0]
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    out, taken = fast(mesh, normals, "POINT")
    assert taken == "vertices"
    np.testing.assert_allclose(
        rest_normals(out), rest_normals(reference(mesh, normals, "POINT")), atol=TOL, rtol=0
    )


def test_flat_with_a_borderline_fold_falls_back_to_nodes():
    """A fold of 0.5 degrees is between Blender's split bounds: not reproduced by sharp edges."""
    pos, faces = folded_sheet()
    pos[:, 1] = np.tan(np.radians(0.25)) * np.abs(pos[:, 0])
    mesh = new_mesh(pos, faces)
    normals = face_corner_normals(mesh)
    out, taken = fast(mesh, normals, "CORNER")
    assert taken == "nodes"
    np.testing.assert_allclose(
        rest_normals(out), rest_normals(reference(mesh, normals, "CORNER")), atol=TOL, rtol=0
    )


def test_call_is_the_fallback_when_nodes_cannot_run(monkeypatch):
    mesh, normals, domain, _ = build(CASES[-1])  # noisy per-corner normals: the nodes route

    def broken() -> None:
        raise RuntimeError("no Geometry Nodes here")

    monkeypatch.setattr(nm, "_normals_tree", broken)
    out, taken = fast(mesh, normals, domain)
    assert taken == "call"
    assert nm._INPUT not in out.attributes
    np.testing.assert_allclose(
        rest_normals(out), rest_normals(reference(mesh, normals, domain)), atol=TOL, rtol=0
    )


def test_small_meshes_take_the_call(monkeypatch):
    monkeypatch.setattr(nm, "NODES_MIN_CORNERS", 4096)
    mesh, normals, domain, _ = build(CASES[-1])
    assert len(mesh.loops) < 4096
    assert fast(mesh, normals, domain)[1] == "call"


def test_import_of_per_corner_normals_matches_the_call(monkeypatch, tmp_path):
    """Through the importer: a file whose MeshNormals index each corner (noisy, so no two
    corners of a vertex agree) imports the same via Geometry Nodes as via the call."""
    from xof.addon.scene import importer

    pos, faces = tube()
    rng = np.random.default_rng(3)
    nor = rng.normal(0.0, 0.2, (4 * len(faces), 3)) + np.repeat(
        np.array([pos[f].mean(axis=0) * [1, 1, 0] for f in faces]), 4, axis=0
    )
    nor /= np.linalg.norm(nor, axis=1, keepdims=True)
    verts = ",\n".join(f"{x:.6f};{y:.6f};{z:.6f};" for x, y, z in pos)
    polys = ",\n".join(f"4;{','.join(map(str, f))};" for f in faces)
    ntext = ",\n".join(f"{x:.6f};{y:.6f};{z:.6f};" for x, y, z in nor)
    nidx = ",\n".join(f"4;{4 * i},{4 * i + 1},{4 * i + 2},{4 * i + 3};" for i in range(len(faces)))
    text = (
        f"xof 0303txt 0032\nMesh Tube {{\n{len(pos)};\n{verts};\n{len(faces)};\n{polys};\n"
        f"MeshNormals {{\n{len(nor)};\n{ntext};\n{len(faces)};\n{nidx};\n}}\n}}\n"
    )
    path = tmp_path / "corners.x"
    path.write_text(text, encoding="ascii")
    routes = []
    real = nm.set_custom_normals

    def spy(*args):
        routes.append(real(*args))
        return routes[-1]

    from xof.addon.scene.imp import meshes

    monkeypatch.setattr(meshes, "set_custom_normals", spy)
    results = []
    for disable in (False, True):
        if disable:
            monkeypatch.setattr(nm, "_set_by_nodes", lambda mesh, values: False)
        bpy.ops.wm.read_homefile(use_empty=True)
        importer.import_files([path], importer.ImportOptions())
        mesh = next(o for o in bpy.data.objects if o.type == "MESH").data
        results.append(rest_normals(mesh))
    assert routes == ["nodes", "call"]
    np.testing.assert_allclose(results[0], results[1], atol=TOL, rtol=0)
