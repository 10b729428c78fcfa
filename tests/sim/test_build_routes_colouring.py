"""The colouring's shortcuts against the routes they skip (the old code kept here as
reference, or plain loops): the same groups, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from addon.sim.mesh.springs import (
    bend_springs,
    face_edges,
)
from addon.sim.xpbd import coloring
from addon.sim.xpbd import tethers as tethers_module
from addon.sim.xpbd.coloring import colour_groups, reversed_bits, stride_colours

from .grids import quad_grid
from .test_build_reference import MESHES
from .test_build_routes_springs import _mesh_springs

_REVERSED_BYTES = np.array([int(f"{b:08b}"[::-1], 2) for b in range(256)], dtype=np.int64)


# the independent reference: reversed_bits as it was (bit by bit), kept for its shortcut
def _old_reversed_bits(count: int, dtype: type = np.int64) -> tuple[np.ndarray, int]:
    bits = max(int(count - 1).bit_length(), 1)
    ids = np.arange(count, dtype=dtype)
    out = np.zeros(count, dtype=dtype)
    table = _REVERSED_BYTES.astype(dtype)
    for low in range(0, bits, 8):
        width = min(8, bits - low)
        byte = (ids >> low) & ((1 << width) - 1)
        out |= np.take(table >> (8 - width), byte) << (bits - low - width)
    return out, 1 << bits


@pytest.mark.parametrize("count", [0, 1, 2, 3, 5, 255, 256, 257, 1000, 65537, 300_001])
def test_reversed_bits_match_the_byte_table(count: int) -> None:
    for dtype in (np.int64, np.intp):
        got, top = reversed_bits(count, dtype)
        want, want_top = _old_reversed_bits(count, dtype)
        assert top == want_top and got.dtype == want.dtype
        assert np.array_equal(got, want)


# the independent reference: stride_colours as it was, kept for its shortcut
def _old_stride_colours(pairs: np.ndarray, point_count: int) -> list[np.ndarray] | None:
    def one_per_point(low: np.ndarray, high: np.ndarray | None, colour: np.ndarray) -> bool:
        slot = low * 4 + colour
        if high is not None:
            slot = np.concatenate([slot, high * 4 + colour])
        return int(np.bincount(slot, minlength=4 * point_count).max()) <= 1

    if not pairs.shape[0]:
        return None
    low = np.minimum(pairs[:, 0], pairs[:, 1])
    stride = np.maximum(pairs[:, 0], pairs[:, 1]) - low
    small, large = int(stride.min()), int(stride.max())
    if small <= 0:
        return None
    wide = stride == large
    if small != large and not np.all(wide | (stride == small)):
        return None
    colour = None
    if small != large and large % small == 0:
        colour = low // small + ((1 - large // small) % 4) * (low // large) + 2 * wide
        colour &= 3
        if not one_per_point(low, low + stride, colour):
            colour = None
    if colour is None:
        colour = (low // stride) & 1
        colour += 2 * wide
        if not one_per_point(low, None, colour):
            return None
    groups = [np.flatnonzero(colour == c) for c in range(4)]
    return [g for g in groups if g.size]


def _stride_cases() -> list[tuple[np.ndarray, int]]:
    positions, sizes, corners = quad_grid(23, 17)
    edges = face_edges(sizes, corners)
    bend = bend_springs(sizes, corners, positions)
    n = 23 * 17
    rng = np.random.default_rng(2)
    ring = np.stack([np.arange(9), (np.arange(9) + 2) % 9], axis=1)
    return [
        (edges, n),
        (bend, n),
        (edges[rng.permutation(edges.shape[0])], n),  # not sorted
        (np.vstack([edges, edges[:1]]), n),  # a repeated pair
        (ring, 9),  # strides 2 and 7: no multiple, parity
        (np.array([[0, 1], [1, 3], [3, 6]]), 7),  # three strides
        (np.array([[0, 1], [2, 3], [1, 0]]), 4),
        (np.array([[0, 3], [3, 6], [1, 4]]), 7),  # one stride
        (np.array([[0, 40], [40, 80]]), 81),  # strides beyond the count
        (np.array([[0, 40], [40, 80], [1, 2]]), 81),
        (np.array([[5, 5], [1, 2]]), 6),  # a self pair
    ]


@pytest.mark.parametrize("chunk", [coloring.STRIDE_CHUNK, 5])
def test_stride_colours_match_the_old_route(chunk: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(coloring, "STRIDE_CHUNK", chunk)
    for pairs, n in _stride_cases():
        got = stride_colours(pairs, n)
        want = _old_stride_colours(pairs, n)
        if want is None:
            assert got is None
            continue
        assert got is not None and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            assert g.dtype == w.dtype and np.array_equal(g, w)


# the independent reference: colour_groups as it was, kept for its shortcut
def _old_colour_groups(pairs: np.ndarray, point_count: int) -> list[np.ndarray]:
    """The matching rounds as they were (claims reset point by point, every round)."""
    count = pairs.shape[0]
    groups: list[np.ndarray] = []
    remaining = np.arange(count, dtype=np.intp)
    first, second = pairs[:, 0].astype(np.intp), pairs[:, 1].astype(np.intp)
    priority, none = _old_reversed_bits(count, np.intp)
    claim = np.full(point_count, none, dtype=np.intp)
    used = np.zeros(point_count, dtype=bool)
    while remaining.size:
        used[:] = False
        parts = []
        candidates = remaining
        a, b, rank = first[candidates], second[candidates], priority[candidates]
        while candidates.size:
            claim[a] = none
            claim[b] = none
            np.minimum.at(claim, a, rank)
            np.minimum.at(claim, b, rank)
            picked = np.flatnonzero((claim[a] == rank) & (claim[b] == rank))
            parts.append(candidates[picked])
            used[a[picked]] = True
            used[b[picked]] = True
            free = np.flatnonzero(~(used[a] | used[b]))
            candidates, a, b, rank = candidates[free], a[free], b[free], rank[free]
        taken = np.zeros(count, dtype=bool)
        for part in parts:
            taken[part] = True
        groups.append(np.flatnonzero(taken))
        remaining = remaining[~taken[remaining]]
    degree = int(np.bincount(pairs.ravel(), minlength=point_count).max()) if count else 0
    while len(groups) > max(degree, 1):
        absorbed = _old_absorb_tail(pairs, groups, point_count)
        if len(absorbed) == len(groups):
            break
        groups = absorbed
    return groups


# the independent reference: the tail absorption as it was, kept for its shortcut
def _old_absorb_tail(pairs: np.ndarray, groups: list[np.ndarray], n: int) -> list[np.ndarray]:
    tail, kept = groups[-1], groups[:-1]
    colours = len(kept)
    if tail.size > coloring.MAX_TAIL_FRACTION * pairs.shape[0] or colours > coloring.MAX_COLOURS:
        return groups
    colour = np.full(pairs.shape[0], -1, dtype=np.int64)
    at_table = np.full((n, colours), -1, dtype=np.int64)
    for c, members in enumerate(kept):
        colour[members] = c
        at_table[pairs[members, 0], c] = members
        at_table[pairs[members, 1], c] = members
    state = coloring._Colouring(pairs, colour, at_table)
    budget = coloring.MAX_WALK_FACTOR * tail.size + min(n, coloring.MAX_WALK_POINTS)
    left: list[int] = []
    for spring in tail.tolist():
        u, v = pairs.item(spring, 0), pairs.item(spring, 1)
        free_u = [c for c, s in enumerate(at_table[u].tolist()) if s < 0]
        free_v = [c for c, s in enumerate(at_table[v].tolist()) if s < 0]
        both = [c for c in free_u if c in free_v]
        if both:
            state.assign(spring, both[0])
            continue
        if not free_u or not free_v or budget <= 0:
            left.append(spring)
            continue
        a, b = free_u[0], free_v[0]
        path, ends_at_u = state.alternating_path(v, a, b, u)
        budget -= len(path)
        if ends_at_u:
            left.append(spring)
            continue
        state.swap(path, a, b)
        state.assign(spring, a)
    out = [np.flatnonzero(colour == c) for c in range(colours)]
    if left:
        out.append(np.array(sorted(left), dtype=np.int64))
    return [g for g in out if g.size]


@pytest.mark.parametrize("name", sorted(MESHES))
def test_the_matching_rounds_match_the_old_route(name: str) -> None:
    edges, shear, positions = _mesh_springs(MESHES[name])
    n = positions.shape[0]
    rng = np.random.default_rng(11)
    big = quad_grid(60, 50)
    big_edges = face_edges(big[1], big[2])
    cases = [(edges, n), (shear, n), (edges[rng.permutation(edges.shape[0])], n)]
    cases.append((big_edges, 3000))  # rounds big enough to reset the claims by a fill
    cases.append((big_edges[rng.permutation(big_edges.shape[0])], 3000))
    for pairs, count in cases:
        if not pairs.size:
            continue
        want = _old_colour_groups(pairs, count)
        got = colour_groups(pairs, count)
        assert len(got) == len(want)
        assert all(np.array_equal(g, w) for g, w in zip(got, want, strict=True))


# the independent reference: components() as it was (hooking rounds, compared after each)
def _old_components(springs: np.ndarray, n: int) -> np.ndarray:
    label = np.arange(n, dtype=np.int64)
    pairs = np.asarray(springs, dtype=np.int64).reshape(-1, 2)
    if not pairs.size:
        return label
    a, b = pairs[:, 0], pairs[:, 1]
    while True:
        la, lb = label[a], label[b]
        low = np.minimum(la, lb)
        hooked = label.copy()
        np.minimum.at(hooked, la, low)
        np.minimum.at(hooked, lb, low)
        while True:
            jumped = hooked[hooked]
            if np.array_equal(jumped, hooked):
                break
            hooked = jumped
        if np.array_equal(hooked, label):
            return label
        label = hooked


def test_components_match_the_old_rounds_and_a_union_find() -> None:
    rng = np.random.default_rng(8)
    for n, m in ((1, 0), (10, 3), (200, 150), (500, 260), (300, 2000)):
        pairs = rng.integers(0, n, (m, 2))
        got = tethers_module.components(pairs, n)
        assert np.array_equal(got, _old_components(pairs, n))
        parent = list(range(n))
        for a, b in pairs.tolist():
            ra, rb = _root(parent, a), _root(parent, b)
            parent[max(ra, rb)] = min(ra, rb)
        assert got.tolist() == [_root(parent, x) for x in range(n)]


def _root(parent: list[int], x: int) -> int:
    while parent[x] != x:
        x = parent[x]
    return x
