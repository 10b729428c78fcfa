"""Spring builders against counts and pairs worked out by hand."""

from __future__ import annotations

import numpy as np

from addon.sim.mesh.springs import (
    bend_springs,
    face_edges,
    merge_springs,
    merge_with_kinds,
    shear_springs,
)

from .grids import quad_grid, triangle_fan

# 3 x 3 vertices, 2 x 2 quads, numbered row by row:
#   6 7 8
#   3 4 5
#   0 1 2


def _as_set(pairs: np.ndarray) -> set[tuple[int, int]]:
    return {(int(a), int(b)) for a, b in pairs}


def _check_canonical(pairs: np.ndarray) -> None:
    assert pairs.dtype == np.int64 and pairs.ndim == 2 and pairs.shape[1] == 2
    assert (pairs[:, 0] < pairs[:, 1]).all()
    assert len(_as_set(pairs)) == pairs.shape[0]


def test_grid_edges_by_hand() -> None:
    _, sizes, corners = quad_grid(3, 3)
    edges = face_edges(sizes, corners)
    _check_canonical(edges)
    # 2 rows x 3 horizontal + 3 columns x 2 vertical = 12, shared edges counted once
    assert _as_set(edges) == {
        (0, 1), (1, 2), (3, 4), (4, 5), (6, 7), (7, 8),
        (0, 3), (3, 6), (1, 4), (4, 7), (2, 5), (5, 8),
    }  # fmt: skip


def test_grid_shear_by_hand() -> None:
    _, sizes, corners = quad_grid(3, 3)
    shear = shear_springs(sizes, corners)
    _check_canonical(shear)
    assert _as_set(shear) == {(0, 4), (1, 3), (1, 5), (2, 4), (3, 7), (4, 6), (4, 8), (5, 7)}


def test_grid_bend_by_hand() -> None:
    positions, sizes, corners = quad_grid(3, 3)
    bend = bend_springs(sizes, corners, positions)
    _check_canonical(bend)
    # straight "skip one" pairs: three rows and three columns; none through the corners
    assert _as_set(bend) == {(0, 2), (3, 5), (6, 8), (0, 6), (1, 7), (2, 8)}


def test_bigger_grid_counts() -> None:
    positions, sizes, corners = quad_grid(5, 4)
    assert len(face_edges(sizes, corners)) == 4 * 4 + 5 * 3  # horizontal + vertical
    assert len(shear_springs(sizes, corners)) == 2 * 4 * 3  # two per quad
    assert len(bend_springs(sizes, corners, positions)) == 3 * 4 + 5 * 2


def test_triangle_fan_by_hand() -> None:
    positions, sizes, corners = triangle_fan(6)
    edges = face_edges(sizes, corners)
    assert len(edges) == 12  # 6 spokes + 6 rim edges, not 18 (= 3 per triangle)
    assert shear_springs(sizes, corners).shape == (0, 2)  # triangles have no diagonal
    # opposite spokes through the centre; the rim turns 60 degrees per vertex: no pairs there
    assert _as_set(bend_springs(sizes, corners, positions)) == {(1, 4), (2, 5), (3, 6)}


def test_pentagon_shear_is_its_five_diagonals() -> None:
    shear = shear_springs([5], [0, 1, 2, 3, 4])
    assert _as_set(shear) == {(0, 2), (0, 3), (1, 3), (1, 4), (2, 4)}


def test_no_kind_duplicates_another() -> None:
    positions, sizes, corners = quad_grid(6, 5)
    edges = _as_set(face_edges(sizes, corners))
    shear = _as_set(shear_springs(sizes, corners))
    bend = _as_set(bend_springs(sizes, corners, positions))
    assert not edges & shear and not edges & bend and not shear & bend


def test_bend_respects_exclude() -> None:
    positions, sizes, corners = quad_grid(3, 3)
    bend = bend_springs(sizes, corners, positions, exclude=np.array([[2, 0], [1, 7]]))
    assert _as_set(bend) == {(3, 5), (6, 8), (0, 6), (2, 8)}


def test_merge_dedupes_and_keeps_first_kind() -> None:
    merged, kinds = merge_with_kinds(
        np.array([[0, 1], [1, 2]]), np.array([[2, 1], [3, 3], [0, 2]]), np.array([[2, 0]])
    )
    assert merged.tolist() == [[0, 1], [1, 2], [0, 2]]
    assert kinds.tolist() == [0, 0, 1]
    assert merge_springs(np.array([[5, 4], [4, 5]])).tolist() == [[4, 5]]


def test_merge_against_a_plain_loop_with_and_without_shared_strides() -> None:
    # sorted parts of distinct strides (no sort needed), parts sharing a stride with and
    # without a repeat, and an unsorted part: the first occurrence kept, in input order
    rng = np.random.default_rng(8)
    cases = [
        [np.array([[0, 1], [1, 2], [5, 6]]), np.array([[0, 3], [2, 5]]), np.array([[1, 5]])],
        [np.array([[0, 1], [1, 2]]), np.array([[4, 5], [2, 3]])],
        [np.array([[0, 1], [1, 2]]), np.array([[2, 3], [1, 2]])],
        [np.array([[3, 4], [0, 1]]), np.array([[0, 4], [4, 3]])],
    ]
    cases += [[rng.integers(0, 12, (k, 2)) for k in (20, 15, 9)] for _ in range(20)]
    for parts in cases:
        seen: dict[tuple[int, int], int] = {}
        for kind, part in enumerate(parts):
            for a, b in part.tolist():
                if a != b:
                    seen.setdefault((min(a, b), max(a, b)), kind)
        merged, kinds = merge_with_kinds(*parts)
        assert [tuple(p) for p in merged.tolist()] == list(seen)
        assert kinds.tolist() == list(seen.values())


def test_degenerate_faces_give_no_self_springs() -> None:
    edges = face_edges([4], [0, 1, 1, 2])
    assert _as_set(edges) == {(0, 1), (1, 2), (0, 2)}
