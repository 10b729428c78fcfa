"""References by name, by GUID, by both; forward ones; unresolved ones reported."""

from __future__ import annotations

import uuid

from addon.xfile import XReference, read, scene_of

from .xenc import Bin

HEAD = b"xof 0303txt 0032\n"
MAT = b"1;0;0;1;; 5; 0;0;0;; 0;0;0;;"


def test_forward_reference_by_name_and_shared_material() -> None:
    doc = read(
        HEAD
        + b"Mesh A { 1; 0;0;0;; 1; 1;0;; MeshMaterialList { 1; 1; 0;; {Red} } }\n"
        + b"Mesh B { 1; 0;0;0;; 1; 1;0;; MeshMaterialList { 1; 1; 0;; { Red } } }\n"
        + b"Material Red { "
        + MAT
        + b" }"
    )
    a, b = scene_of(doc).meshes
    assert a.materials[0] is b.materials[0]
    assert a.materials[0].name == "Red"
    assert doc.unresolved == []


def test_reference_by_guid_and_by_name_and_guid() -> None:
    g = "12345678-1234-1234-1234-123456789ABC"
    doc = read(
        HEAD
        + b"Frame Target { <"
        + g.encode()
        + b"> }\n"
        + b"AnimationSet { Animation { { <"
        + g.lower().encode()
        + b"> } }\n"
        + b"Animation { { WrongName <"
        + g.encode()
        + b"> } } }"
    )
    target = next(doc.top("Frame"))
    refs = [c for a in next(doc.top("AnimationSet")).objects() for c in a.children]
    assert all(isinstance(r, XReference) and r.target is target for r in refs)
    assert target.guid == uuid.UUID(g)


def test_unresolved_references_are_listed_not_fatal() -> None:
    doc = read(HEAD + b"Frame F { {Missing} }\n{AlsoMissing}")
    assert sorted(r.name or "" for r in doc.unresolved) == ["AlsoMissing", "Missing"]
    assert doc.unresolved[0].where.startswith("2:")


def test_same_name_prefers_the_template_the_context_expects() -> None:
    doc = read(
        HEAD
        + b"Frame Box01 { Mesh Box01 { 1; 0;0;0;; 1; 1;0;; MeshMaterialList { 1; 1; 0;; "
        + b"{Box01} } } }\nMaterial Box01 { "
        + MAT
        + b" }\n"
        + b"AnimationSet { Animation { {Box01} } }"
    )
    scene = scene_of(doc)
    assert scene.frames[0].meshes[0].materials[0].name == "Box01"
    anim = next(next(doc.top("AnimationSet")).objects("Animation"))
    ref = anim.children[0]
    assert isinstance(ref, XReference) and ref.target is not None
    assert ref.target.template == "Frame"


def test_binary_references() -> None:
    b = Bin()
    b.name("AnimationSet").p("{").name("Animation").p("{")
    b.p("{").name("Bone").p("}")
    b.p("{").guid("0000000A-0000-0000-0000-000000000000").p("}")
    b.p("}").p("}")
    b.name("Frame").name("Bone").p("{").guid("0000000A-0000-0000-0000-000000000000").p("}")
    doc = read(b.file())
    anim = next(next(doc.top("AnimationSet")).objects("Animation"))
    first, second = anim.children
    assert isinstance(first, XReference) and isinstance(second, XReference)
    assert first.target is second.target is next(doc.top("Frame"))


def test_walk_is_depth_first_in_file_order_without_following_references() -> None:
    doc = read(
        HEAD
        + b"""A a { B b { C c { } { a } } D d { } }
        E e { F f { } }
        { e }
        """
    )
    assert [o.name for o in doc.walk()] == ["a", "b", "c", "d", "e", "f"]
    first = next(doc.top())
    assert [o.name for o in first.walk()] == ["a", "b", "c", "d"]
    assert [o.name for o in next(first.objects()).walk()] == ["b", "c"]
