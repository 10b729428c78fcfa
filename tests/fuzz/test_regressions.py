"""Each bug the fuzzer found, as a small hand-written case with the expected answer."""

from __future__ import annotations

import tracemalloc
import warnings

import numpy as np
import pytest

from addon.xfile import XFileError, read, scene_of

HEAD = b"xof 0303txt 0032\n"


def test_a_chain_of_1000_templates_is_refused_not_a_recursion_error() -> None:
    """RecursionError in the layout builder: each template held the next one."""
    decls = b"".join(b"template T%d { T%d m; }\n" % (k, k + 1) for k in range(1000))
    doc = read(HEAD + decls + b"template T1000 { DWORD m; }\nT0 { 1; }\n")
    obj = next(doc.top())
    assert obj.members["_values"][0].tolist() == [1.0]  # kept with its raw values
    assert any("nested deeper than 64 levels" in w for w in doc.warnings)


def test_a_chain_of_64_templates_still_reads() -> None:
    decls = b"".join(b"template T%d { T%d m; }\n" % (k, k + 1) for k in range(63))
    doc = read(HEAD + decls + b"template T63 { DWORD m; }\nT0 { 7; }\n")
    value = next(doc.top()).members["m"]
    for _ in range(62):
        value = value["m"]
    assert value == {"m": 7}


def test_a_frame_referencing_its_ancestor_builds_once() -> None:
    """RecursionError in the scene view: a reference cycle between frames."""
    doc = read(HEAD + b"Frame A { Frame B { { A } } }\n")
    scene = scene_of(doc)
    assert [f.name for f in scene.frames] == ["A"]
    assert [c.name for c in scene.frames[0].children] == ["B"]
    assert scene.frames[0].children[0].children == []
    assert any("Frame A referenced again" in w for w in scene.warnings)


def test_frames_referenced_many_times_are_built_once() -> None:
    """2**30 frame builds: each frame referencing the next one twice."""
    chain = b"".join(b"Frame F%d { { F%d } { F%d } }\n" % (k, k + 1, k + 1) for k in range(30))
    scene = scene_of(read(HEAD + chain + b"Frame F30 { }\n"))
    count, stack = 0, list(scene.frames)
    while stack:
        frame = stack.pop()
        count += 1
        stack += frame.children
    assert count == 31


def test_morph_set_with_keys_that_are_not_records_is_a_warning() -> None:
    """AttributeError ('numpy.ndarray' has no 'values') in the morph view."""
    text = HEAD + (
        b"template MorphAnimationSet { <0892DE81-915A-4f34-B503-F7C397CB9E06>\n"
        b" DWORD n; array STRING names[n]; }\n"
        b'MorphAnimationSet M { 2; "a", "b"; }\n'
    )
    scene = scene_of(read(text))
    assert scene.morph_sets == []
    assert any("MorphAnimationSet ignored" in w for w in scene.warnings)


def test_nan_vertex_colour_index_is_out_of_range_not_a_cast_warning() -> None:
    text = HEAD + (
        b"Mesh M { 3; 0;0;0;, 1;0;0;, 0;1;0;; 1; 3;0,1,2;;\n"
        b" MeshVertexColors { 2; -1.#IND00; 1;0;0;1;;, 1; 0;1;0;1;;; } }\n"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mesh = scene_of(read(text)).meshes[0]
    assert mesh.colors is not None
    np.testing.assert_array_equal(mesh.colors[1], [0, 1, 0, 1])
    np.testing.assert_array_equal(mesh.colors[0], [1, 1, 1, 1])
    assert any("1 index(es) out of range" in w for w in mesh.warnings)


def test_infinite_animation_option_is_a_warning_not_an_overflow() -> None:
    text = HEAD + (
        b"template AnimationOptions { <E2BF56C0-840F-11CF-8F52-0040333594A3>\n"
        b" FLOAT openclosed; FLOAT positionquality; }\n"
        b"AnimationSet S { Animation A { AnimationOptions { 1.#INF00; 0; } } }\n"
    )
    scene = scene_of(read(text))
    assert scene.animation_sets == []
    assert any("AnimationSet ignored" in w for w in scene.warnings)


def test_256_nested_frames_cost_memory_linear_in_the_file() -> None:
    """Each level kept its value stream (two deques, ~1.2 KB) alive through its children."""
    depth = 250
    text = HEAD + b"".join(b"Frame F%d {\n" % k for k in range(depth)) + b"}\n" * depth
    read(text)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        read(text)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert peak < 1000 * depth  # was ~2,100 bytes per level; ~850 now (the document ~450)


def test_keys_with_a_huge_float_count_fail_cleanly() -> None:
    with pytest.raises(XFileError, match="rest of the file"):
        read(HEAD + b"AnimationKey { 2; 2; 0; 1e300; 1,2,3;;, 10; 3; 4,5,6;;; }")


def test_a_70_kb_object_name_costs_memory_linear_in_its_size() -> None:
    """The loose-name regex repeated a group per byte: 8.4 MB (120x) for a 70 KB name."""
    name = b"x" * 70_000
    text = HEAD + b"Frame " + name + b" { }\n"
    assert next(read(text).top()).name == name.decode()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        read(text)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert peak < 10 * len(text)


def test_loose_names_stop_where_they_did() -> None:
    doc = read(HEAD + b"Frame a/b {} Frame /x {} Frame 1Body{} Frame q/ {} Frame c//d\n{}")
    assert [o.name for o in doc.walk()] == ["a/b", "/x", "1Body", "q/", "c"]
