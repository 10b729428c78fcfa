"""Colour groups: a partition of the springs into sets sharing no point, as few as a quad grid
allows (4 per spring kind: every kind of a quad grid is a bipartite graph of degree 4)."""

from __future__ import annotations

import numpy as np
import pytest

from addon.sim import bend_springs, face_edges, shear_springs
from addon.sim.coloring import colour_groups
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
