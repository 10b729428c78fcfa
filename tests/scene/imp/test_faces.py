"""Face plans (numpy only): dropped faces and the reversed corner order, both code paths."""

from __future__ import annotations

import numpy as np
from xof.addon.scene.imp.faces import plan_faces


def reference_loops(faces: list[list[int]], n_verts: int) -> tuple[list[int], list[list[int]]]:
    """Kept faces and their reversed corners, by a plain Python loop: a face repeating an
    earlier kept face's vertex set, in any order, is dropped as Blender's validate drops it."""
    kept, loops, seen = [], [], set()
    for i, f in enumerate(faces):
        if len(f) < 3 or min(f) < 0 or max(f) >= n_verts or len(set(f)) != len(f):
            continue
        if frozenset(f) in seen:
            continue
        seen.add(frozenset(f))
        kept.append(i)
        loops.append([f[0], *reversed(f[1:])])
    return kept, loops


def check(faces: list[list[int]], n_verts: int) -> None:
    sizes = np.array([len(f) for f in faces])
    corners = np.array([i for f in faces for i in f], dtype=np.int64)
    plan = plan_faces(sizes, corners, n_verts)
    kept, loops = reference_loops(faces, n_verts)
    assert np.flatnonzero(plan.kept).tolist() == kept
    assert plan.sizes.tolist() == [len(f) for f in loops]
    flat = [i for f in loops for i in f]
    assert plan.per_loop(corners).tolist() == flat
    assert corners[plan.loop_to_corner].tolist() == flat
    starts = np.cumsum([0] + [len(f) for f in loops[:-1]]).tolist() if loops else []
    assert plan.loop_starts().tolist() == starts
    per_corner_2d = np.c_[corners, -corners]  # trailing dimensions follow
    assert plan.per_loop(per_corner_2d)[:, 0].tolist() == flat


def test_uniform_quads_with_bad_faces():
    check([[0, 1, 2, 3], [0, 1, 1, 2], [0, 1, 0, 2], [4, 5, 6, 9], [3, 2, 1, 0]], 8)


def test_uniform_triangles_all_good():
    check([[0, 1, 2], [2, 1, 3], [3, 1, 0]], 4)


def test_uniform_pentagons_with_a_non_consecutive_repeat():
    check([[0, 1, 2, 3, 4], [0, 1, 0, 3, 4], [4, 3, 2, 1, 0]], 5)


def test_mixed_sizes():
    check([[0, 1, 2, 3, 4, 5], [0, 1], [0, 1, 9], [0, 1, 1], [0, 2, 4, 1, 3, 2], [5, 4, 3]], 6)
    check([[0, 1, 2], [0, 1, 2, 3]], 4)


def test_random_meshes_match_the_reference():
    rng = np.random.default_rng(11)
    for _ in range(50):
        n = int(rng.integers(3, 9))
        faces = [
            rng.integers(-1, n + 1, size=int(rng.integers(1, 7))).tolist()
            for _ in range(int(rng.integers(1, 12)))
        ]
        check(faces, n)


def test_random_uniform_meshes_match_the_reference():
    rng = np.random.default_rng(12)
    for k in (3, 4, 5, 6):
        for _ in range(20):
            n = int(rng.integers(k, k + 4))
            faces = [
                rng.integers(-1, n + 1, size=k).tolist() for _ in range(int(rng.integers(1, 9)))
            ]
            check(faces, n)


def test_a_repeated_face_is_dropped_in_any_corner_order_with_a_note():
    """tiny.x and SSR06_model.x repeat faces: Blender's ``Mesh.validate()`` then removed them
    (6841 -> 6838 faces) and the glTF exporter warned. The first of each vertex set stays."""
    faces = [[0, 1, 2], [3, 4, 5], [2, 0, 1], [1, 2, 3], [5, 4, 3], [0, 1, 2]]
    check(faces, 6)
    sizes = np.array([len(f) for f in faces])
    plan = plan_faces(sizes, np.array([i for f in faces for i in f]), 6)
    assert plan.kept.tolist() == [True, True, False, True, False, False]
    assert plan.notes == [
        "3 face(s) repeating an earlier face's vertices dropped "
        "(Blender holds one face a vertex set; the vertices are kept)"
    ]


def test_many_random_faces_with_copies_match_the_reference():
    rng = np.random.default_rng(13)
    for k in (3, 4):
        for _ in range(20):
            n = k + 3
            faces = [rng.permutation(n)[:k].tolist() for _ in range(int(rng.integers(1, 30)))]
            check(faces, n)
    mixed = [rng.permutation(7)[: int(rng.integers(3, 6))].tolist() for _ in range(60)]
    check(mixed, 7)
