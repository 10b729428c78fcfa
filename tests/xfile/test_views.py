"""Typed views: materials, normals, colours, declarations, skin, cloth, animation, morphs."""

from __future__ import annotations

import struct

import numpy as np

from addon.xfile import read, scene_of

HEAD = b"xof 0303txt 0032\n"
TRI2 = b"4; 0;0;0;, 1;0;0;, 1;1;0;, 0;1;0;; 2; 3;0,1,2;, 3;0,2,3;;"
MAT = b"1;1;1;1;; 0; 0;0;0;; 0;0;0;;"


def f32_bits(*values: float) -> list[int]:
    return list(struct.unpack(f"<{len(values)}I", struct.pack(f"<{len(values)}f", *values)))


def scene_from(body: bytes):
    return scene_of(read(HEAD + body))


def test_material_list_single_index_expands_to_all_faces() -> None:
    s = scene_from(b"Mesh {" + TRI2 + b"MeshMaterialList { 2; 1; 1;; Material A {" + MAT
                 + b"} Material B {" + MAT + b"} } }")  # fmt: skip
    mesh = s.meshes[0]
    assert mesh.material_indices is not None and mesh.material_indices.tolist() == [1, 1]
    assert [m.name for m in mesh.materials] == ["A", "B"] and mesh.warnings == []


def test_material_index_out_of_range_is_a_warning() -> None:
    s = scene_from(
        b"Mesh {" + TRI2 + b"MeshMaterialList { 1; 2; 0, 5;; Material {" + MAT + b"} } }"
    )
    mesh = s.meshes[0]
    assert mesh.material_indices is not None and mesh.material_indices.tolist() == [0, 0]
    assert any("out of range" in w for w in mesh.warnings)


def test_face_index_beyond_vertices_drops_the_face_with_its_per_face_data() -> None:
    s = scene_from(
        b"Mesh { 3; 0;0;0;, 1;0;0;, 1;1;0;; 2; 3;0,1,2;, 3;0,2,7;;"
        b" MeshNormals { 1; 0;0;1;; 2; 3;0,0,0;, 3;0,0,0;; }"
        b" MeshMaterialList { 2; 2; 1, 0;; Material {" + MAT + b"} Material {" + MAT + b"} } }"
    )
    mesh = s.meshes[0]
    assert mesh.face_sizes.tolist() == [3] and mesh.corners.tolist() == [0, 1, 2]
    assert mesh.material_indices is not None and mesh.material_indices.tolist() == [1]
    assert mesh.normal_corners is not None and mesh.normal_corners.tolist() == [0, 0, 0]
    assert any("vertex index >= 3" in w for w in mesh.warnings)


def test_per_corner_normals_and_vertex_colors() -> None:
    s = scene_from(
        b"Mesh {" + TRI2 + b" MeshNormals { 2; 0;0;1;, 0;0;-1;; 2; 3;0,1,0;, 3;1,1,1;; }"
        b" MeshVertexColors { 2; 0;1;0;0;1;;, 3;0;0;1;0.5;;; } }"
    )
    mesh = s.meshes[0]
    assert mesh.normals is not None and mesh.normals[1].tolist() == [0, 0, -1]
    assert mesh.normal_corners is not None and mesh.normal_corners.tolist() == [0, 1, 0, 1, 1, 1]
    assert mesh.colors is not None
    assert mesh.colors.tolist() == [[1, 0, 0, 1], [1, 1, 1, 1], [1, 1, 1, 1], [0, 0, 1, 0.5]]


def test_two_uv_sets() -> None:
    s = scene_from(b"Mesh {" + TRI2 + b" MeshTextureCoords { 4; 0;0;, 1;0;, 1;1;, 0;1;; }"
                 b" MeshTextureCoords { 4; 0;0;, 0.5;0;, 0.5;0.5;, 0;0.5;; } }")  # fmt: skip
    mesh = s.meshes[0]
    assert len(mesh.uv_sets) == 2 and mesh.uv_sets[1][2].tolist() == [0.5, 0.5]


def test_decl_data_float_bit_patterns() -> None:
    normals = f32_bits(0, 0, 1, 0, 1, 0, 1, 0, 0, 0, 0, -1)
    uv = f32_bits(0.25, 0.75, 1, 0, 0, 1, 0.5, 0.5)
    data = []
    for v in range(4):
        data += normals[3 * v : 3 * v + 3] + uv[2 * v : 2 * v + 2]
    body = (
        b"Mesh {"
        + TRI2
        + b" DeclData { 2; 2;0;3;0;, 1;0;5;1;; 20; "
        + ",".join(map(str, data)).encode()
        + b";; } }"
    )
    mesh = scene_from(body).meshes[0]
    assert mesh.decl["normal"][3].tolist() == [0.0, 0.0, -1.0]
    assert mesh.decl["texcoord1"][0].tolist() == [0.25, 0.75]


def test_fvf_data_normal_and_two_texcoord_sets() -> None:
    fvf = 0x10 | (2 << 8) | (1 << 18)  # NORMAL, 2 texcoord sets, the second with 3 floats
    per_vertex = [f32_bits(0, 1, 0, 0.5, 0.25, 1, 2, 3) for _ in range(4)]
    data = [w for v in per_vertex for w in v]
    body = (b"Mesh {" + TRI2 + b" FVFData { " + str(fvf).encode() + b"; 32; "
            + ",".join(map(str, data)).encode() + b";; } }")  # fmt: skip
    mesh = scene_from(body).meshes[0]
    assert mesh.decl["normal"][0].tolist() == [0, 1, 0]
    assert mesh.decl["texcoord0"][1].tolist() == [0.5, 0.25]
    assert mesh.decl["texcoord1"][2].tolist() == [1, 2, 3]


def test_skin_header_and_weights() -> None:
    s = scene_from(
        b"Frame Root { Mesh {" + TRI2 + b" XSkinMeshHeader { 2; 4; 1; }"
        b' SkinWeights { "Bone"; 3; 0, 1, 9; 0.5, 1.0, 1.0;'
        b" 1,0,0,0, 0,1,0,0, 0,0,1,0, 3,4,5,1;; } } }"
    )
    skin = s.frames[0].meshes[0].skin
    assert skin is not None and (skin.max_weights_per_vertex, skin.bone_count) == (2, 1)
    (w,) = skin.weights
    assert w.frame_name == "Bone" and w.indices.tolist() == [0, 1]
    assert w.weights.tolist() == [0.5, 1.0] and w.offset[3].tolist() == [3, 4, 5, 1]
    assert any("out of range" in x for x in s.frames[0].meshes[0].warnings)


def test_top_level_cloth_goes_to_the_preceding_mesh_with_that_many_vertices() -> None:
    s = scene_from(
        b"Mesh A {" + TRI2 + b"}\n"
        b"Frame F { Mesh B {" + TRI2 + b"} }\n"
        b"Mesh C { 3; 0;0;0;, 1;0;0;, 0;1;0;; 1; 3;0,1,2;; }\n"
        b"ClothMasses { 4; 0, 1, 1, 0; }\n"
        b"ClothSprings { 2; 4; 0,1, 1,2; }\n"
        b"Mesh D { 4; 0;0;0;, 1;0;0;, 1;1;0;, 0;1;0;; 1; 4;0,1,2,3;; "
        b"ClothMasses { 4; 1, 1, 1, 1; } }"
    )
    a, c, d = s.meshes
    b = s.frames[0].meshes[0]
    assert a.cloth is None
    assert b.cloth is not None and b.cloth.masses is not None
    assert b.cloth.masses.tolist() == [0, 1, 1, 0]
    assert c.cloth is not None and c.cloth.springs is not None  # nearest before that fits
    assert c.cloth.springs.tolist() == [[0, 1], [1, 2]] and c.cloth.masses is None
    assert d.cloth is not None and d.cloth.masses is not None and d.cloth.springs is None


def test_animation_tracks_and_options() -> None:
    s = scene_from(
        b"Frame Bone {}\nAnimTicksPerSecond { 30; }\n"
        b"AnimationSet Walk { Animation { {Bone}"
        b" AnimationKey { 0; 2; 0; 4; 1,0,0,0;;, 30; 4; 0.5,0.5,0.5,0.5;;; }"
        b" AnimationKey { 2; 2; 0; 3; 0,0,0;;, 30; 3; 1,2,3;;; }"
        b" AnimationKey { 4; 1; 0; 16; 1,0,0,0,0,1,0,0,0,0,1,0,7,8,9,1;;; }"
        b" AnimationOptions { 0; 0; } } }"
    )
    assert s.ticks_per_second == 30.0
    (anim,) = s.animation_sets[0].animations
    assert anim.frame_name == "Bone" and anim.open is False and anim.linear is False
    rot, pos, mat = anim.tracks
    assert rot.key_type == 0 and rot.times.tolist() == [0, 30]
    assert rot.values.tolist() == [[1, 0, 0, 0], [0.5, 0.5, 0.5, 0.5]]
    assert pos.values[1].tolist() == [1, 2, 3]
    assert mat.values.shape == (1, 16) and mat.values[0, 12:15].tolist() == [7, 8, 9]


def test_shared_mesh_reference_in_two_frames_is_one_mesh_data() -> None:
    s = scene_from(b"Mesh Shared {" + TRI2 + b"}\nFrame A { {Shared} }\nFrame B { {Shared} }")
    assert s.frames[0].meshes[0] is s.frames[1].meshes[0] is s.meshes[0]


def test_mixed_face_sizes_across_comment_split_chunks() -> None:
    body = (
        b"Mesh {\n 5;\n 0;0;0;, 1;0;0;, 1;1;0;, 0;1;0;, 2;2;0;;\n 3;\n"
        b" 4;0,1, // split inside a face\n 2,3;,\n 3;1,4,2;, // next\n 5;0,1,2,3,4;;\n}"
    )
    mesh = scene_from(body).meshes[0]
    assert mesh.face_sizes.tolist() == [4, 3, 5]
    assert mesh.corners.tolist() == [0, 1, 2, 3, 1, 4, 2, 0, 1, 2, 3, 4]


def test_many_mixed_faces_walk_matches_a_python_reference() -> None:
    rng = np.random.default_rng(5)
    sizes = rng.integers(3, 7, size=2000)
    faces = [list(rng.integers(0, 10, size=k)) for k in sizes]
    text = ",\n".join(f"{len(f)};" + ",".join(map(str, f)) + ";" for f in faces)
    verts = ",".join("0;0;0;" for _ in range(10))
    mesh = scene_from(f"Mesh {{ 10; {verts}; {len(faces)}; {text};; }}".encode()).meshes[0]
    assert mesh.face_sizes.tolist() == sizes.tolist()
    assert mesh.corners.tolist() == [i for f in faces for i in f]


def test_normals_indexed_like_the_vertices_share_the_faces_arrays() -> None:
    """The usual file's MeshNormals faces repeat the mesh's: they are taken as the same
    arrays (on the 1M-vertex grid, 40 MB not split and copied again); others are their own."""
    same = scene_from(
        b"Mesh { 3; 0;0;0;, 1;0;0;, 1;1;0;; 1; 3;0,1,2;;"
        b" MeshNormals { 3; 0;0;1;, 0;0;1;, 0;0;1;; 1; 3;0,1,2;; } }"
    ).meshes[0]
    assert same.normal_corners is same.corners and same.corners.tolist() == [0, 1, 2]
    other = scene_from(
        b"Mesh { 3; 0;0;0;, 1;0;0;, 1;1;0;; 1; 3;0,1,2;;"
        b" MeshNormals { 3; 0;0;1;, 0;0;1;, 0;0;1;; 1; 3;2,1,0;; } }"
    ).meshes[0]
    assert other.normal_corners is not None and other.normal_corners.tolist() == [2, 1, 0]
    assert other.corners.tolist() == [0, 1, 2]
