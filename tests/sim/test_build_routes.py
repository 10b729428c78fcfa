"""The build's shortcuts against the routes they skip (the old code, kept here as reference,
or plain loops): the same arrays, bit for bit, on the reference meshes of
``test_build_reference.py`` and on cases made to reach each fallback."""

from __future__ import annotations

import math

import numpy as np
import pytest

from addon.sim import SimSettings, Simulator, coloring, limiter_chains, work_state
from addon.sim import springs as springs_module
from addon.sim import tethers as tethers_module
from addon.sim.coloring import colour_groups, reversed_bits, stride_colours
from addon.sim.limiters import limiter_levels
from addon.sim.model import LENGTH_CHUNK, ClothModel, SpringKind, _lengths
from addon.sim.springs import (
    _without,
    bend_springs,
    face_edges,
    merge_with_kinds,
    shear_springs,
)
from addon.sim.xpbd_build import _not_bend

from .grids import quad_grid
from .test_build_reference import MESHES, Mesh, _capped_cylinder, _jittered, _springs

_REVERSED_BYTES = np.array([int(f"{b:08b}"[::-1], 2) for b in range(256)], dtype=np.int64)


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


def test_a_prefix_check_probes_and_then_compares_everything() -> None:
    order = np.arange(300)
    assert work_state._starts_with(order, np.arange(200))
    head = np.arange(200)
    head[150] = 999
    assert not work_state._starts_with(order, head)
    assert not work_state._starts_with(order, np.arange(1, 10))
    assert not work_state._starts_with(order[:5], np.arange(10))


def test_two_pins_sort_as_the_stable_argsort() -> None:
    rng = np.random.default_rng(6)
    d2 = rng.integers(0, 4, (400, 2)).astype(np.float64)  # many ties
    d2[rng.random((400, 2)) < 0.2] = np.inf
    d2[rng.random((400, 2)) < 0.1] = np.nan
    order, values = tethers_module._sorted_pairs(d2)
    want = np.argsort(d2, axis=1, kind="stable")
    assert np.array_equal(order, want)
    assert np.array_equal(values, np.take_along_axis(d2, want, axis=1), equal_nan=True)


def test_tethers_to_two_pins_match_the_sorted_route(monkeypatch: pytest.MonkeyPatch) -> None:
    positions, sizes, corners = quad_grid(30, 20)
    edges = face_edges(sizes, corners)
    pinned = np.zeros(600, dtype=bool)
    pinned[[0, 29]] = True
    got = tethers_module.build_tethers(positions, pinned, edges)
    monkeypatch.setattr(tethers_module, "_sorted_pairs", _argsorted_pairs)
    want = tethers_module.build_tethers(positions, pinned, edges)
    for name in ("points", "pins", "lengths"):
        for g, w in zip(getattr(got, name), getattr(want, name), strict=True):
            assert np.array_equal(g, w)


@pytest.mark.parametrize("pins", [[0, 29], [0, 29, 300, 599, 17]])
def test_tethers_are_the_same_in_any_chunks(pins: list, monkeypatch: pytest.MonkeyPatch) -> None:
    positions, sizes, corners = quad_grid(30, 20)
    edges = face_edges(sizes, corners)
    pinned = np.zeros(600, dtype=bool)
    pinned[pins] = True
    got = tethers_module.build_tethers(positions, pinned, edges, k=3)
    monkeypatch.setattr(tethers_module, "CHUNK_ELEMENTS", 11)  # a few rows at a time
    want = tethers_module.build_tethers(positions, pinned, edges, k=3)
    for name in ("points", "pins", "lengths"):
        for g, w in zip(getattr(got, name), getattr(want, name), strict=True):
            assert np.array_equal(g, w)


def _argsorted_pairs(d2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(d2, axis=1, kind="stable")
    return order, np.take_along_axis(d2, order, axis=1)


def test_rows_of_one_run_are_a_view_of_the_same_values() -> None:
    from addon.sim.model import rows_of as _rows

    values = np.arange(40).reshape(20, 2)
    for ids in (np.arange(3, 11), np.array([2, 3, 5]), np.arange(0), np.array([7])):
        got = _rows(values, ids)
        assert np.array_equal(got, values[ids])
        run = ids.size > 0 and ids[-1] - ids[0] + 1 == ids.size
        assert np.shares_memory(got, values) == run


def _plain_level_pairs(chains: limiter_chains.Chains, src: np.ndarray) -> dict:
    """Every valid chain's pair (not one point at both ends) and its smallest limit, by a
    loop: leaving a chain to its mirror (same ends, no larger limit) changes neither."""
    best: dict[tuple[int, int], float] = {}
    for i in range(src.size):
        a, b = int(src[i]), int(chains.end[i])
        if chains.valid[i] and a != b:
            key = (min(a, b), max(a, b))
            best[key] = min(best.get(key, np.inf), float(chains.total[i]))
    return best


@pytest.mark.parametrize("chunk", [limiter_chains.CHUNK, 7])
@pytest.mark.parametrize("name", sorted(_all_meshes()))
def test_level_pairs_match_every_valid_chain(
    name: str, chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The mirror check (only kept backward chains look theirs up) drops no pair and keeps
    each pair's smallest limit, at every level, also when the chains go in many chunks."""
    monkeypatch.setattr(limiter_chains, "CHUNK", chunk)
    positions, sizes, corners = _all_meshes()[name]
    edges = face_edges(sizes, corners, positions.shape[0])
    lengths = np.linalg.norm(positions[edges[:, 1]] - positions[edges[:, 0]], axis=1)
    real = limiter_chains.level_pairs
    seen = []

    def checked(chains: limiter_chains.Chains, src: np.ndarray, n: int) -> tuple:
        pairs, limits = real(chains, src, n)
        want = _plain_level_pairs(chains, src)
        assert [tuple(p) for p in pairs.tolist()] == sorted(want)
        assert limits.tolist() == [want[k] for k in sorted(want)]
        seen.append(chains.mirrors)
        return pairs, limits

    monkeypatch.setattr(limiter_chains, "level_pairs", checked)
    limiter_levels(edges, lengths, positions, 4)
    assert seen


class _OldPlan:
    """``work_state.PassPlan``'s build as it was: the whole order concatenated, and every
    move's positions scattered at once (the reference for the parts and the lazy updates)."""

    def __init__(self, groups: list, point_count: int, slots: list, orders: dict) -> None:
        self.n = point_count
        self.order: np.ndarray | None = None
        self.position: np.ndarray | None = None
        self.head = 0
        self.steps: list[tuple] = []
        for g in groups:
            if g.ends.size >= work_state.IN_PLACE_MIN_FRACTION * point_count:
                self.steps.append((self.enter(g.ends, orders), None, None))
            else:
                self.steps.append((None, self.here(g.ends), None))
        for slot in slots:
            self.steps.append((self.enter(slot.points, orders), None, self.here(slot.pins)))
        self.back = self.position

    def here(self, ids: np.ndarray) -> np.ndarray:
        here = ids if self.position is None else self.position[ids]
        return np.ascontiguousarray(here, dtype=np.intp)

    def enter(self, head: np.ndarray, orders: dict) -> np.ndarray | None:
        n = self.n
        if self.order is not None and work_state._starts_with(self.order, head):
            return None
        untouched = np.ones(n, dtype=bool)
        untouched[head] = False
        order = np.concatenate([head, np.flatnonzero(untouched)]).astype(np.intp, copy=False)
        key = (self.head, id(head))
        reorder = orders.get(key)
        if reorder is None:
            reorder = order if self.position is None else self.position[order]
            orders[key] = reorder
        self.order = order
        self.position = np.empty(n, dtype=np.intp)
        self.position[order] = np.arange(n)
        self.head = id(head)
        return reorder


def _same_array(got: np.ndarray | None, want: np.ndarray | None) -> bool:
    if got is None or want is None:
        return got is None and want is None
    return got.dtype == want.dtype and np.array_equal(got, want)


def _plan_meshes() -> dict[str, Mesh]:
    return {
        **_all_meshes(),
        "grid60": quad_grid(60, 40, 2.0, 1.0),
        "sheet": _jittered(50, 45, 0.01, 5),
    }


@pytest.mark.parametrize("name", sorted(_plan_meshes()))
def test_pass_plans_match_the_old_route(name: str) -> None:
    """Every move, translated index set and way back equal the old build's; the plans of
    one solver share the moves, translations and ways back they have in common."""
    positions, sizes, corners = _plan_meshes()[name]
    n = positions.shape[0]
    springs, kinds = _springs((positions, sizes, corners))
    masses = np.full(n, 0.3)
    masses[[0, n // 3]] = 0.0
    sim = Simulator(ClothModel(positions, masses, springs, kinds), SimSettings.cloth())
    solver = sim.solver
    groups, tethers = solver.groups, solver.tethers
    cycle = math.lcm(*(g.period for g in groups)) if groups else 1
    orders: dict = {}
    shared = 0
    for residue, plan in enumerate(solver._plans):
        chosen = [g for g in groups if residue % g.period == g.phase]
        old = _OldPlan(chosen, n, tethers, orders)
        assert len(plan.steps) == len(old.steps)
        for step, (reorder, ids, anchors) in zip(plan.steps, old.steps, strict=True):
            assert _same_array(step.reorder, reorder)
            assert _same_array(step.ids, ids)
            assert _same_array(step.anchors, anchors)
        assert _same_array(plan.back, old.back)
        if residue:
            first = solver._plans[0]
            shared += plan.back is first.back
            ends = zip(plan.steps[-2:], first.steps[-2:], strict=True)
            shared += sum(s.anchors is f.anchors for s, f in ends)
    assert len(solver._plans) == cycle
    if name in ("grid60", "sheet"):
        assert cycle == 2 and shared == 3
