"""The sloppy spellings real exporters write (see the format notes): all must parse."""

from __future__ import annotations

import math

import pytest

from addon.xfile import read, scene_of

HEAD = b"xof 0303txt 0032\n"


def mesh_of(body: bytes):
    doc = read(HEAD + body)
    return next(doc.walk())


@pytest.mark.parametrize(
    "body",
    [
        # nominal
        b"Mesh { 3; 0.0;0.0;0.0;, 1.0;0.0;0.0;, 0.0;1.0;0.0;; 1; 3;0,1,2;; }",
        # extra ';' after lists, ',;' mixes
        b"Mesh { 3;; 0.0;0.0;0.0;,; 1.0;0.0;0.0;,; 0.0;1.0;0.0;;; 1;; 3;0,1,2;;; }",
        # missing commas between elements
        b"Mesh { 3; 0.0;0.0;0.0; 1.0;0.0;0.0; 0.0;1.0;0.0; 1; 3;0,1,2; }",
        # all commas
        b"Mesh { 3, 0.0,0.0,0.0, 1.0,0.0,0.0, 0.0,1.0,0.0, 1, 3,0,1,2 }",
        # only white space
        b"Mesh {\n3\n0 0 0\n1 0 0\n0 1 0\n1\n3 0 1 2\n}",
        # comments inside numeric runs, CRLF
        b"Mesh {\r\n 3; // count\r\n 0.0;0.0;0.0;, # first\r\n 1.0;0.0;0.0;,\r\n"
        b" 0.0;1.0;0.0;;\r\n 1;\r\n 3;0,1,2;;\r\n}\r\n",
        # CR-only line ends
        b"Mesh {\r 3;\r 0.0;0.0;0.0;,\r 1.0;0.0;0.0;,\r 0.0;1.0;0.0;;\r 1;\r 3;0,1,2;;\r}\r",
        # exponent notation and explicit signs
        b"Mesh { 3; 0e0;+0.0;-0.0;, 1E0;0.;0;, 0.0;1.0e+0;0.0;; 1; 3;0,1,2;; }",
    ],
)
def test_separator_variants(body: bytes) -> None:
    mesh = mesh_of(body)
    assert mesh["vertices"].tolist() == [[0, 0, 0], [1, 0, 0], [0, 1, 0]]
    assert mesh["faces"].flat.tolist() == [3, 0, 1, 2]


def test_empty_arrays_as_a_bare_semicolon() -> None:
    body = b"""Mesh M { 1; 0;0;0;; 0; ;
      SkinWeights { "Bone"; 0; ; ; 1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1;; }
    }"""
    mesh = mesh_of(body)
    sw = next(mesh.objects("SkinWeights"))
    assert sw["nWeights"] == 0 and sw["vertexIndices"].size == 0 and sw["weights"].size == 0
    assert sw["matrixOffset"]["matrix"].tolist()[0] == 1.0
    assert mesh["faces"].flat.size == 0


def test_single_semicolon_after_a_matrix() -> None:
    doc = read(HEAD + b"Frame F { FrameTransformMatrix { 1,0,0,0,0,1,0,0,0,0,1,0,4,5,6,1; } }")
    (frame,) = scene_of(doc).frames
    assert frame.matrix[3].tolist() == [4.0, 5.0, 6.0, 1.0]
    assert doc.warnings == []


def test_msvc_non_finite_floats() -> None:
    mesh = mesh_of(b"Mesh { 2; -1.#IND00;1.#QNAN0;1.#INF00;, -1.#INF00;0;0;; 0;; }")
    v = mesh["vertices"]
    assert math.isnan(v[0, 0]) and math.isnan(v[0, 1])
    assert v[0, 2] == math.inf and v[1, 0] == -math.inf


def test_keywords_in_any_case_and_names_with_dashes_and_dots() -> None:
    doc = read(
        HEAD
        + b"""TEMPLATE Pair { <11111111-2222-3333-4444-555555555555>
             dword n; ARRAY Float v[n]; string s; }
           Pair my-pair.001 { 2; 0.5, 1.5; "x"; }"""
    )
    obj = next(doc.top())
    assert obj.name == "my-pair.001"
    assert obj["v"].tolist() == [0.5, 1.5] and obj["s"] == "x"


def test_names_starting_with_a_digit() -> None:
    doc = read(HEAD + b"Frame 1Body { Frame 2Arm {} } AnimationSet { Animation { {1Body} } }")
    assert next(doc.top("Frame")).name == "1Body"
    assert doc.unresolved == []
    assert scene_of(doc).animation_sets[0].animations[0].frame_name == "1Body"


def test_texture_file_name_spelling() -> None:
    doc = read(HEAD + b'Material M { 1;1;1;1;; 0; 0;0;0;; 0;0;0;; TextureFileName { "a.bmp"; } }')
    assert scene_of(doc).extras[0].template == "Material"
    mesh_doc = read(
        HEAD
        + b"""Mesh { 1; 0;0;0;; 1; 1;0;; MeshMaterialList { 1; 1; 0;;
             Material { 1;1;1;1;; 0; 0;0;0;; 0;0;0;; TextureFileName { "a.bmp"; } } } }"""
    )
    assert scene_of(mesh_doc).meshes[0].materials[0].texture == "a.bmp"


def test_comment_glued_to_values_and_trailing_nul() -> None:
    mesh = mesh_of(b"Mesh { 1;//c\n 1;2;3;;#c\n 0;; }\x00\x1a")
    assert mesh["vertices"].tolist() == [[1, 2, 3]]


def test_strings_keep_spaces_and_windows_paths() -> None:
    doc = read(HEAD + b'TextureFilename { "C:\\\\tex\\\\my file.dds"; }')
    assert next(doc.top())["filename"] == "C:\\\\tex\\\\my file.dds"


def test_non_utf8_names_fall_back_to_cp1252() -> None:
    doc = read(HEAD + b"Frame Gr\xfcn {}")
    assert next(doc.top()).name == "Gr\u00fcn"
