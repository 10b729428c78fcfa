"""Built-in, custom, overriding, unknown and multi-dimensional templates."""

from __future__ import annotations

import uuid

import numpy as np
import pytest

from addon.xfile import Ragged, XFileError, read, scene_of
from addon.xfile.standard_templates import standard_templates

from .xenc import Bin

HEAD = b"xof 0303txt 0032\n"


def test_builtin_set_has_documented_guids() -> None:
    t = standard_templates()
    assert t["Mesh"].guid == uuid.UUID("3D82AB44-62DA-11CF-AB39-0020AF71E433")
    assert t["SkinWeights"].guid == uuid.UUID("6F0D123B-BAD2-4167-A0D0-80224F25FABB")
    assert t["EffectParamDWord"].guid == uuid.UUID("E13963BC-AE51-4C5D-B00F-CFA3A9D97CE5")
    assert t["ClothMasses"].guid == uuid.UUID("F5AD0F93-9BF2-4BCF-B7CF-D68CD6B54156")
    assert [m.name for m in t["MorphAnimationSet"].members] == ["NumKeys", "Keys"]
    assert t["Frame"].restriction == "open"
    assert t["MeshMaterialList"].restriction == "restricted"
    assert t["MeshMaterialList"].allowed[0][0] == "Material"
    for name in ("Header", "Boolean2d", "MaterialWrap", "MeshFaceWraps", "InlineData", "Url",
                 "ProgressiveMesh", "Guid", "StringProperty", "PropertyBag", "ExternalVisual",
                 "RightHanded", "FVFData", "EffectInstance", "EffectParamFloats",
                 "EffectParamString", "PatchMesh", "Patch", "CompressedAnimationSet"):  # fmt: skip
        assert name in t


def test_custom_cloth_and_morph_templates_builtin() -> None:
    doc = read(
        HEAD
        + b"""Mesh Sheet { 3; 0;0;0;, 1;0;0;, 0;1;0;; 1; 3;0,1,2;; }
        ClothMasses { 3; 1.0, 0.0, 1.0; }
        ClothSprings { 3; 6; 0,1, 1,2, 2,0; }
        MorphAnimationSet Dance { 3; 0; "Figure1";, 500; "Figure2";, 1000; "Figure1";; }"""
    )
    scene = scene_of(doc)
    cloth = scene.meshes[0].cloth
    assert cloth is not None and cloth.masses is not None and cloth.springs is not None
    assert cloth.masses.tolist() == [1.0, 0.0, 1.0]
    assert cloth.springs.tolist() == [[0, 1], [1, 2], [2, 0]]
    (morph,) = scene.morph_sets
    assert morph.name == "Dance" and morph.loop is False  # only Loop=1 cycles (issue 5)
    assert [(k.time_ms, k.mesh_name) for k in morph.keys] == [
        (0.0, "Figure1"), (500.0, "Figure2"), (1000.0, "Figure1")
    ]  # fmt: skip


def test_morph_set_variant_with_loop_declared_in_the_file() -> None:
    doc = read(
        HEAD
        + b"""template MorphAnimationKey { <2746B58A-B375-4cc3-8D23-7D094D3C7C67>
          DWORD Time; STRING MeshName; }
        template MorphAnimationSet { <0892DE81-915A-4f34-B503-F7C397CB9E06>
          DWORD Loop; DWORD NumKeys; array MorphAnimationKey Keys[NumKeys]; }
        MorphAnimationSet Once { 0; 2; 0; "A";, 250; "B";; }"""
    )
    (morph,) = scene_of(doc).morph_sets
    assert morph.loop is False
    assert [(k.time_ms, k.mesh_name) for k in morph.keys] == [(0.0, "A"), (250.0, "B")]
    assert doc.declared == ["MorphAnimationKey", "MorphAnimationSet"]


def test_file_template_overrides_builtin_dword_header_and_cstring() -> None:
    doc = read(
        HEAD
        + b"""template XSkinMeshHeader { <3CF169CE-FF7C-44ab-93C0-F78F62D172E2>
          DWORD nMaxSkinWeightsPerVertex; DWORD nMaxSkinWeightsPerFace; DWORD nBones; }
        template SkinWeights { <6F0D123B-BAD2-4167-A0D0-80224F25FABB>
          CSTRING transformNodeName; DWORD nWeights; array DWORD vertexIndices[nWeights];
          array FLOAT weights[nWeights]; Matrix4x4 matrixOffset; }
        Mesh { 2; 0;0;0;, 1;0;0;; 0;;
          XSkinMeshHeader { 2; 3; 1; }
          SkinWeights { "Bone"; 2; 0, 1; 0.25, 0.75; 1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1;; } }"""
    )
    assert doc.templates["SkinWeights"].members[0].type == "CSTRING"
    skin = scene_of(doc).meshes[0].skin
    assert skin is not None
    assert (skin.max_weights_per_vertex, skin.max_weights_per_face, skin.bone_count) == (2, 3, 1)
    assert skin.weights[0].weights.tolist() == [0.25, 0.75]


def test_override_changes_the_member_order_followed() -> None:
    doc = read(
        HEAD
        + b"""template Vector { <3D82AB5E-62DA-11CF-AB39-0020AF71E433> FLOAT z; FLOAT y; FLOAT x; }
        Vector { 1; 2; 3; }"""
    )
    assert next(doc.top()).members == {"z": 1.0, "y": 2.0, "x": 3.0}


def test_declared_unknown_template_parsed_by_its_declaration() -> None:
    doc = read(
        HEAD
        + b"""template KeyValuePair { <26e6b1c3-3d4d-4a1d-a437-b33668ffa1c2>
          STRING key; STRING value; }
        KeyValuePair { "Date"; "2024"; }"""
    )
    assert next(doc.top()).members == {"key": "Date", "value": "2024"}
    assert doc.warnings == []


def test_undeclared_unknown_template_is_kept_generically_with_a_warning() -> None:
    doc = read(
        HEAD
        + b"""Frame F { Mystery thing { 1; 2.5; "s"; Frame Inner {} {F} } }
        Mystery { 7; }"""
    )
    frame = next(doc.top("Frame"))
    mystery = next(frame.objects("Mystery"))
    values = mystery["_values"]
    assert values[0].tolist() == [1.0, 2.5] and values[1] == "s"
    assert [c.template for c in mystery.objects()] == ["Frame", "Frame"]
    assert len(doc.warnings) == 1 and "Mystery" in doc.warnings[0]
    assert doc.warnings[0].startswith("2:11:")
    assert doc.count_by_template()["Mystery"] == 2


def test_multi_dimensional_arrays() -> None:
    doc = read(
        HEAD
        + b"""template Grid { <AAAAAAAA-0000-0000-0000-000000000001>
          DWORD rows; DWORD cols; array FLOAT cell[rows][cols]; array Vector pts[2][rows];
          array STRING tags[cols]; }
        Grid { 2; 3; 1,2,3, 4,5,6; 1,1,1, 2,2,2, 3,3,3, 4,4,4; "a"; "b"; "c"; }"""
    )
    g = next(doc.top())
    assert g["cell"].shape == (2, 3) and g["cell"][1].tolist() == [4, 5, 6]
    assert g["pts"].shape == (2, 2, 3) and g["pts"][1, 1].tolist() == [4, 4, 4]
    assert g["tags"] == ["a", "b", "c"]


def test_keys_of_one_size_become_one_table_of_rows() -> None:
    """TimedFloatKeys (time; FloatKeys {nValues; values[nValues]}) of equal nValues: one 2-D
    array, a row per key with the leaves in declaration order, not a dict per key."""
    doc = read(HEAD + b"AnimationKey { 2; 2; 0; 3; 1,2,3;;, 10; 3; 4,5,6;;; }")
    keys = next(doc.top())["keys"]
    assert isinstance(keys, np.ndarray) and keys.dtype == np.float64
    assert keys.tolist() == [[0, 3, 1, 2, 3], [10, 3, 4, 5, 6]]


def test_keys_of_different_sizes_become_ragged_records() -> None:
    doc = read(HEAD + b"AnimationKey { 0; 2; 0; 4; 1,0,0,0;;, 10; 2; 5,6;;; }")
    keys = next(doc.top())["keys"]
    assert isinstance(keys, Ragged)
    assert keys.starts.tolist() == [0, 6]
    assert keys.flat.tolist() == [0, 4, 1, 0, 0, 0, 10, 2, 5, 6]


def test_binary_keys_split_over_lists_become_one_table() -> None:
    b = Bin().name("AnimationKey").p("{").ints([2, 2])
    b.ints([0, 3]).floats([1, 2, 3]).ints([10, 3]).floats([4, 5, 6]).p("}")
    keys = next(read(b.file()).top())["keys"]
    assert keys.tolist() == [[0, 3, 1, 2, 3], [10, 3, 4, 5, 6]]


def test_key_time_must_be_an_integer() -> None:
    with pytest.raises(XFileError, match=r"expected an integer, found 0\.5"):
        read(HEAD + b"AnimationKey { 2; 2; 0; 3; 1,2,3;;, 0.5; 3; 4,5,6;;; }")


def test_nested_variable_template_arrays_with_strings_stay_lists_of_dicts() -> None:
    doc = read(HEAD + b'MorphAnimationSet S { 2; 0; "A";, 500; "B";; }')
    keys = next(doc.top())["Keys"]
    assert keys == [{"Time": 0, "MeshName": "A"}, {"Time": 500, "MeshName": "B"}]


def test_binary_template_declaration_and_guid() -> None:
    b = Bin()
    b.template_kw().name("Pair").p("{").guid("11111111-2222-3333-4444-555555555555")
    b.type("DWORD").name("n").p(";")
    b.type("array").type("FLOAT").name("v").p("[").name("n").p("]").p(";")
    b.type("array").type("WORD").name("w").p("[").integer(2).p("]").p(";")
    b.type("STRING").name("s").p(";")
    b.p("[").p("...").p("]").p("}")
    b.name("Pair").name("P").p("{").guid("99999999-2222-3333-4444-555555555555")
    b.ints([2]).floats([0.5, 1.5]).ints([7, 8]).string("hi").p("}")
    doc = read(b.file())
    assert doc.declared == ["Pair"] and doc.templates["Pair"].restriction == "open"
    obj = next(doc.top())
    assert obj.guid == uuid.UUID("99999999-2222-3333-4444-555555555555")
    assert obj["v"].tolist() == [0.5, 1.5] and obj["w"].tolist() == [7, 8] and obj["s"] == "hi"
    assert obj["w"].dtype == np.int64


def test_binary_lists_span_members_and_objects_parts() -> None:
    """One INTEGER_LIST feeding nMaterials, nFaceIndexes and the indexes; a list split midway."""
    b = Bin()
    b.name("Mesh").p("{").ints([3]).floats([0, 0, 0, 1, 0]).floats([0, 0, 1, 0]).ints([1, 3])
    b.ints([0, 1]).integer(2)
    b.name("MeshMaterialList").p("{").ints([2, 1, 1])
    for i in range(2):
        b.name("Material").name(f"M{i}").p("{").floats([1, 1, 1, 1, 5, 0, 0, 0, 0, 0, 0])
        b.name("TextureFilename").p("{").string(f"t{i}.png", ",").p("}").p("}")
    b.p("}").p("}")
    scene = scene_of(read(b.file()))
    (mesh,) = scene.meshes
    assert mesh.positions.tolist() == [[0, 0, 0], [1, 0, 0], [0, 1, 0]]
    assert mesh.corners.tolist() == [0, 1, 2]
    assert mesh.material_indices is not None and mesh.material_indices.tolist() == [1]
    assert [m.texture for m in mesh.materials] == ["t0.png", "t1.png"]


def test_case_folded_lookup_finds_the_latest_declaration() -> None:
    """The case-folded index is built on first need: same answer as one kept up to date."""
    doc = read(
        HEAD
        + b"""template Foo { <11111111-0000-0000-0000-000000000001> DWORD a; }
        template FOO { <11111111-0000-0000-0000-000000000002> DWORD a; DWORD b; }
        template Foo { <11111111-0000-0000-0000-000000000003> DWORD a; DWORD b; DWORD c; }
        fOO { 1; 2; 3; }
        """
    )
    obj = next(doc.walk())
    assert obj.members == {"a": 1, "b": 2, "c": 3}
    assert doc.declared == ["Foo", "FOO", "Foo"]
    assert doc.templates["Foo"].where == "4:9"
    assert doc.templates["Foo"].allowed == ()
