"""The springs' and rest lengths' shortcuts against the routes they skip (the old code
kept here as reference, or plain loops): the same arrays, bit for bit, on the reference
meshes of ``test_build_reference.py`` and on cases made to reach each fallback."""

from __future__ import annotations

import numpy as np
import pytest

from addon.sim.mesh import springs as springs_module
from addon.sim.mesh.neighbours import sort_keys, unique_keys
from addon.sim.mesh.springs import (
    _without,
    bend_springs,
    face_edges,
    merge_with_kinds,
    shear_springs,
)
from addon.sim.model import LENGTH_CHUNK, ClothModel, SpringKind, _lengths
from addon.sim.xpbd.build import _not_bend

from .grids import quad_grid
from .test_build_reference import MESHES, Mesh, _capped_cylinder, _jittered


def _mesh_springs(mesh: Mesh) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    positions, sizes, corners = mesh
    n = positions.shape[0]
    edges = face_edges(sizes, corners, n)
    return edges, shear_springs(sizes, corners, n, edges=edges), positions


def _wide_corner_meshes() -> dict[str, Mesh]:
    """Faces with corners wider than 135 degrees: a kinked strip where the widest partner
    of a point is its face turn (masking it matters), and the reference meshes."""
    x = np.array([0.0, 1.0, 2.0, 3.0, 0.0, 1.0, 2.0, 3.0])
    y = np.array([0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0])
    positions = np.stack([x, y, np.zeros(8)], axis=1)
    positions[1, 1] = -0.05
    # one hexagon-ish face over the bottom row: corners 0,1,2 nearly straight at 1
    sizes = np.array([6, 4])
    corners = np.array([0, 1, 2, 6, 5, 4, 2, 3, 7, 6])
    return {"kinked": (positions, sizes, corners), "cap": _capped_cylinder(12, 4)}


def _all_meshes() -> dict[str, Mesh]:
    return {**MESHES, **_wide_corner_meshes(), "jitter2": _jittered(12, 9, 0.03, 7)}


@pytest.mark.parametrize("name", sorted(_all_meshes()))
def test_bend_springs_without_the_turn_lookup_match_it(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    mesh = _all_meshes()[name]
    positions, sizes, corners = mesh
    edges, shear, _ = _mesh_springs(mesh)
    got = bend_springs(sizes, corners, positions, edges=edges, shear=shear)
    monkeypatch.setattr(springs_module, "_turns_bent", lambda *a: False)
    want = bend_springs(sizes, corners, positions, edges=edges, shear=shear)
    assert np.array_equal(got, want)


def test_the_turn_lookup_is_skipped_only_without_wide_corners() -> None:
    bent = springs_module._turns_bent
    for name in ("grid", "triangles", "fan"):
        _, sizes, corners = MESHES[name]
        assert bent(np.asarray(sizes), np.asarray(corners), MESHES[name][0])
    for name, (positions, sizes, corners) in _wide_corner_meshes().items():
        assert not bent(np.asarray(sizes), np.asarray(corners), positions), name
    positions, sizes, corners = quad_grid(4, 4)
    positions = positions.copy()
    positions[5] = np.nan  # an unknown angle is measured, and fails
    assert not bent(sizes, corners, positions)


# the independent reference: a set of excluded keys, for springs._without's sorted search
def _plain_without(pairs: np.ndarray, excluded: list[np.ndarray], n: int) -> np.ndarray:
    keys = {min(a, b) * n + max(a, b) for e in excluded for a, b in e.reshape(-1, 2).tolist()}
    rows = [k for k, (a, b) in enumerate(pairs.tolist()) if a * n + b not in keys]
    return pairs[np.array(rows, dtype=np.int64)]


def test_excluded_pairs_are_dropped_as_by_plain_lookup() -> None:
    rng = np.random.default_rng(3)
    n = 60
    lo = rng.integers(0, n - 1, 400)
    hi = np.minimum(lo + rng.integers(1, 6, 400), n - 1)
    keep = lo < hi
    pairs = np.unique(np.stack([lo[keep], hi[keep]], axis=1), axis=0)
    cases = [
        [pairs[::3]],  # strides shared
        [pairs[::3][:, ::-1], pairs[1::7]],  # reversed pairs
        [np.array([[0, 50], [3, 59]])],  # strides no pair has
        [pairs[pairs[:, 1] - pairs[:, 0] == 2][::2]],  # one stride of several
        [np.empty((0, 2), dtype=np.int64)],
        [np.array([[-1, n + 2], [5, 5]]), pairs[:4]],  # out of range: the plain route
    ]
    for excluded in cases:
        got = _without(pairs, excluded, n)
        want = pairs[_kept_old(pairs, excluded, n)]
        assert np.array_equal(got, want)
        if all(e.min(initial=0) >= 0 and e.max(initial=0) < n for e in excluded):
            assert np.array_equal(got, _plain_without(pairs, excluded, n))


# the independent reference: springs._without before its shortcut (np.isin on keys), kept
def _kept_old(pairs: np.ndarray, excluded: list[np.ndarray], n: int) -> np.ndarray:
    def encode(p: np.ndarray) -> np.ndarray:
        p = np.asarray(p, dtype=np.int64).reshape(-1, 2)
        return np.minimum(p[:, 0], p[:, 1]) * n + np.maximum(p[:, 0], p[:, 1])

    ex = np.sort(np.concatenate([encode(e) for e in excluded]), kind="stable")
    if not ex.size:
        return np.ones(pairs.shape[0], dtype=bool)
    keys = encode(pairs)
    found = np.searchsorted(ex, keys).clip(max=ex.size - 1)
    return ex[found] != keys


# the independent reference: a plain loop keeping first occurrences, for merge_with_kinds
def _plain_merge(*arrays: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    seen: set[tuple[int, int]] = set()
    pairs, kinds = [], []
    for kind, array in enumerate(arrays):
        for a, b in np.asarray(array).reshape(-1, 2).tolist():
            key = (min(a, b), max(a, b))
            if a != b and key not in seen:
                seen.add(key)
                pairs.append(key)
                kinds.append(kind)
    return np.array(pairs, dtype=np.int64).reshape(-1, 2), np.array(kinds, dtype=np.uint8)


@pytest.mark.parametrize("name", sorted(MESHES))
def test_merged_springs_match_the_plain_merge(name: str) -> None:
    edges, shear, positions = _mesh_springs(MESHES[name])
    _, sizes, corners = MESHES[name]
    bend = bend_springs(sizes, corners, positions, edges=edges, shear=shear)
    cases = [
        (edges, shear, bend),
        (edges, shear, bend, edges[::2]),  # repeats
        (edges[:, ::-1], shear, bend),  # not canonical
        (np.vstack([edges, [[3, 3]]]), bend[::-1]),  # a self pair, a descending part
    ]
    for arrays in cases:
        got_pairs, got_kinds = merge_with_kinds(*arrays)
        want_pairs, want_kinds = _plain_merge(*arrays)
        assert np.array_equal(got_pairs, want_pairs)
        assert np.array_equal(got_kinds, want_kinds)
        assert got_pairs.flags.c_contiguous and got_pairs.dtype == np.int64


def test_the_non_bend_springs_are_a_view_only_when_bend_springs_come_last() -> None:
    positions, sizes, corners = quad_grid(6, 5)
    edges = face_edges(sizes, corners)
    shear = shear_springs(sizes, corners)
    bend = bend_springs(sizes, corners, positions)
    masses = np.full(30, 0.3)
    for arrays, kinds in (
        ((edges, shear, bend), (0, 1, 2)),
        ((edges, bend, shear), (0, 2, 1)),
        ((bend, edges), (2, 0)),
    ):
        springs = np.vstack(arrays)
        kind = np.concatenate([np.full(len(a), k) for a, k in zip(arrays, kinds, strict=True)])
        model = ClothModel(positions, masses, springs, kind.astype(np.uint8))
        got = _not_bend(model)
        assert np.array_equal(got, model.springs[model.kinds != SpringKind.BEND])
        assert np.shares_memory(got, model.springs) == (kinds[-1] == 2)


@pytest.mark.parametrize("count", [0, 300, 2 * LENGTH_CHUNK + 77])
def test_rest_lengths_match_the_plain_formula(count: int) -> None:
    rng = np.random.default_rng(4)
    points = rng.normal(size=(50, 3))
    points[7, 1] = np.nan
    points[9] = np.inf
    pairs = rng.integers(0, 50, (count, 2))
    want = np.zeros(count)
    with np.errstate(invalid="ignore"):  # inf - inf
        for axis in range(3):
            d = points[pairs[:, 1], axis] - points[pairs[:, 0], axis]
            want += d * d
        got = _lengths(points, pairs)
        backward = _lengths(points, pairs[:, ::-1])
    assert got.tobytes() == np.sqrt(want).tobytes()
    assert np.array_equal(backward, got, equal_nan=True)


def test_unique_keys_and_sort_keys_match_numpy() -> None:
    # timsort for the keys' runs: the same values as np.unique / np.sort, whatever the order
    rng = np.random.default_rng(11)
    ordered = np.arange(0, 30_000, 3, dtype=np.int64)
    cases = [
        np.empty(0, dtype=np.int64),
        np.array([5], dtype=np.int64),
        ordered,
        ordered[::-1].copy(),
        np.concatenate([ordered, ordered[::2] + 1]),  # two runs, interleaved values
        rng.integers(-50, 50, 2_000),  # repeats and negatives
        rng.permutation(40_000).astype(np.int64) * 7,
        rng.integers(0, 1 << 40, 5_000),
        rng.integers(0, 300, 1_000).astype(np.int32),
    ]
    for keys in cases:
        expected = np.unique(keys)
        got = unique_keys(keys.copy())
        assert got.dtype == expected.dtype
        assert np.array_equal(got, expected)
        distinct = np.unique(keys)[rng.permutation(expected.size)]
        sort_keys(distinct)
        assert np.array_equal(distinct, expected)
