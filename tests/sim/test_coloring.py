"""Colour groups: a partition of the springs into sets sharing no point, as few as a quad grid
allows (4 per spring kind: every kind of a quad grid is a bipartite graph of degree 4)."""

from __future__ import annotations

import time

import numpy as np
import pytest

from addon.sim import (
    ClothModel,
    SimSettings,
    Simulator,
    bend_springs,
    face_edges,
    merge_with_kinds,
    shear_springs,
)
from addon.sim.xpbd.build import STRIDE_MIN_CONSTRAINTS
from addon.sim.xpbd.coloring import MAX_TAIL_SPRINGS, colour_groups, stride_colours
from addon.sim.xpbd.constraint_pass import Mode
from addon.sim.xpbd.limiters import limiter_levels
from tests.sim.grids import quad_grid, triangle_fan


def _check_partition(pairs: np.ndarray, groups: list[np.ndarray], n: int) -> None:
    every = np.concatenate(groups)
    assert np.array_equal(np.sort(every), np.arange(pairs.shape[0]))  # each spring once
    for g in groups:
        assert np.array_equal(g, np.sort(g))
        ends = pairs[g].ravel()
        assert np.unique(ends).size == ends.size  # no point twice in a group


@pytest.mark.parametrize("size", [(7, 5), (40, 40), (101, 99)])
def test_every_spring_kind_of_a_quad_grid_takes_four_groups(size: tuple[int, int]) -> None:
    nx, ny = size
    positions, sizes, corners = quad_grid(nx, ny)
    n = nx * ny
    for pairs in (
        face_edges(sizes, corners),
        shear_springs(sizes, corners),
        bend_springs(sizes, corners, positions),
    ):
        groups = colour_groups(pairs, n)
        _check_partition(pairs, groups, n)
        assert len(groups) == 4


def test_an_odd_cycle_keeps_its_third_colour() -> None:
    # 101 springs in a ring: two colours cannot do; the swap would run into the spring's
    # own other end, so one spring stays in a group of its own
    n = 101
    ring = np.stack([np.arange(n), (np.arange(n) + 1) % n], axis=1)
    groups = colour_groups(ring, n)
    _check_partition(ring, groups, n)
    assert len(groups) == 3 and min(g.size for g in groups) == 1


def test_triangle_meshes_and_random_graphs_stay_valid() -> None:
    positions, sizes, corners = triangle_fan(12)
    fan = face_edges(sizes, corners)
    _check_partition(fan, colour_groups(fan, positions.shape[0]), positions.shape[0])
    rng = np.random.default_rng(3)
    for n in (10, 200, 3000):
        pairs = rng.integers(0, n, (4 * n, 2))
        pairs = np.unique(np.sort(pairs[pairs[:, 0] != pairs[:, 1]], axis=1), axis=0)
        groups = colour_groups(pairs, n)
        _check_partition(pairs, groups, n)
        degree = np.bincount(pairs.ravel(), minlength=n).max()
        assert len(groups) <= 2 * degree  # a maximal matching per group: at most 2D - 1


def _shares_no_point(pairs: np.ndarray, groups: list[np.ndarray]) -> bool:
    """Plain loop: no point twice within a group."""
    for g in groups:
        seen: set[int] = set()
        for i in g.tolist():
            a, b = int(pairs[i, 0]), int(pairs[i, 1])
            if a in seen or b in seen:
                return False
            seen.update((a, b))
    return True


def _mixed(pairs: np.ndarray) -> np.ndarray:
    """The diagonal-stripe colour of each pair: (a // s + (1 - D / s) (a // D) + 2 [wide]) % 4."""
    lo, d = pairs.min(axis=1), np.abs(pairs[:, 1] - pairs[:, 0])
    s, big = d.min(), d.max()
    return (lo // s + ((1 - big // s) % 4) * (lo // big) + 2 * (d == big)) % 4


def test_two_strides_colour_by_stride() -> None:
    # a grid's limiters of one level (strides 2 and 2 * 30) and a random subset of them:
    # valid, four diagonal stripes each holding both directions
    positions, sizes, corners = quad_grid(30, 23)
    edges = face_edges(sizes, corners)
    ((chains, _),) = limiter_levels(edges, np.ones(len(edges)), positions, 1)
    rng = np.random.default_rng(5)
    for pairs in (chains, chains[rng.random(len(chains)) < 0.6]):
        groups = stride_colours(pairs, 690)
        assert groups is not None and len(groups) == 4
        _check_partition(pairs, groups, 690)
        assert _shares_no_point(pairs, groups)
        colour = _mixed(pairs)
        for g in groups:
            assert np.unique(colour[g]).size == 1
            assert np.unique(np.abs(pairs[g, 1] - pairs[g, 0])).size == 2
    # strides 2 and 3 (not a multiple): stride and parity, 2 * [wide] + (a // d) % 2
    pairs = np.array([[0, 2], [2, 4], [4, 6], [1, 4], [4, 7], [7, 10], [6, 9]])
    groups = stride_colours(pairs, 11)
    assert groups is not None and _shares_no_point(pairs, groups)
    d = pairs[:, 1] - pairs[:, 0]
    parity = 2 * (d == 3) + (pairs[:, 0] // d) % 2
    assert [sorted(set(parity[g].tolist())) for g in groups] == [[0], [1], [2], [3]]
    # a ring of 9 (strides 1 and 8): the stripes meet themselves across the closing pair
    ring = np.stack([np.arange(9), (np.arange(9) + 1) % 9], axis=1)
    groups = stride_colours(ring, 9)
    assert groups is not None and _shares_no_point(ring, groups)
    _check_partition(ring, groups, 9)
    # three strides, or a repeated pair: left to the matching
    assert stride_colours(np.array([[0, 1], [1, 3], [3, 6]]), 7) is None
    assert stride_colours(np.array([[0, 1], [2, 3], [1, 0]]), 4) is None
    assert colour_groups(np.array([[0, 1], [2, 3], [1, 0]]), 4, by_stride=True)


def test_big_limiter_sets_are_coloured_by_stride_in_the_solver() -> None:
    # 260 x 260 points: every limiter level holds more than STRIDE_MIN_CONSTRAINTS chains
    positions, sizes, corners = quad_grid(260, 260)
    pairs, kinds = merge_with_kinds(
        face_edges(sizes, corners),
        shear_springs(sizes, corners),
        bend_springs(sizes, corners, positions),
    )
    masses = np.full(len(positions), 0.3)
    masses[[0, 259]] = 0.0
    sim = Simulator(ClothModel(positions, masses, pairs, kinds), SimSettings.cloth())
    limited = [g for g in sim.solver.groups if g.mode in (Mode.LIMITER, Mode.LIMITED_SPRING)]
    assert len(limited) >= 16 and 4 * limited[0].size > STRIDE_MIN_CONSTRAINTS
    for g in limited:
        ends = g.ends
        assert np.unique(ends).size == ends.size  # no point twice in a group
        d = np.abs(ends[g.size :] - ends[: g.size])
        assert np.unique(d).size == 2  # both directions in every group
        stripe = _mixed(np.stack([ends[: g.size], ends[g.size :]], axis=1))
        assert np.unique(stripe).size == 1  # one diagonal stripe


# -- edge cases: multigraphs, stars, a shuffled grid -----------------------------------------


def _check_exact_partition(pairs: np.ndarray, groups: list[np.ndarray]) -> None:
    every = np.concatenate(groups) if groups else np.empty(0, dtype=np.int64)
    assert np.array_equal(np.sort(every), np.arange(pairs.shape[0]))
    for g in groups:
        assert g.size and np.array_equal(g, np.sort(g))
        ends = pairs[g].ravel()
        assert np.unique(ends).size == ends.size


def test_colouring_small_random_multigraphs() -> None:
    # repeated springs (both directions too); no self-loops: ClothModel and the limiters drop
    # them before colour_groups sees them
    rng = np.random.default_rng(6)
    for _ in range(1500):
        n = int(rng.integers(2, 30))
        pairs = rng.integers(0, n, (int(rng.integers(0, 60)), 2))
        pairs = pairs[pairs[:, 0] != pairs[:, 1]]
        if pairs.size and rng.random() < 0.4:
            repeat = pairs[rng.integers(0, len(pairs), 5)]
            pairs = np.concatenate([pairs, repeat, repeat[:, ::-1]])
        _check_exact_partition(pairs, colour_groups(pairs, n))


def test_colouring_stars_and_odd_cycles() -> None:
    for spokes in (3, 32, 33, 40, 70):  # around MAX_COLOURS
        star = np.stack([np.zeros(spokes, np.int64), np.arange(1, spokes + 1)], axis=1)
        groups = colour_groups(star, spokes + 1)
        _check_exact_partition(star, groups)
        assert len(groups) == spokes
        start = spokes + 1
        ring = np.arange(start, start + 7)
        cycle = np.stack([ring, np.roll(ring, -1)], axis=1)
        link = np.array([[1, start]])
        pairs = np.concatenate([star, cycle, link])
        groups = colour_groups(pairs, start + 7)
        _check_exact_partition(pairs, groups)
        assert len(groups) == spokes  # the cycle's third colour fits in the star's


@pytest.mark.parametrize("nx", [100, 320])
def test_colouring_a_shuffled_grid_is_quick_and_small_tails_are_absorbed(nx: int) -> None:
    # an imported mesh has its vertices in any order: Kempe walks in Python place a tail of
    # up to MAX_TAIL_SPRINGS (100 x 100: 19,800 springs, 4 groups); a bigger one (320 x 320:
    # 204,160 springs, a tail of ~24k) keeps a group of its own instead of a 0.6 s walk
    _, sizes, corners = quad_grid(nx, nx)
    n = nx * nx
    perm = np.random.default_rng(7).permutation(n)
    shuffled = np.sort(perm[face_edges(sizes, corners)], axis=1)
    shuffled = shuffled[np.argsort(shuffled[:, 0] * n + shuffled[:, 1])]
    started = time.process_time()
    groups = colour_groups(shuffled, n)
    spent = time.process_time() - started
    assert len(groups) == (4 if nx == 100 else 5)
    assert groups[-1].size > MAX_TAIL_SPRINGS or nx == 100
    assert spent < 0.4, f"{spent:.2f} s CPU for {len(shuffled)} springs"  # 0.07 s here
    _check_exact_partition(shuffled, groups)
