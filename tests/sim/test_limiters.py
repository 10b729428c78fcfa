"""Long-range stretch limiters: pairs and limits worked out by hand, and what they buy."""

from __future__ import annotations

import numpy as np

from addon.sim import Plane, SimSettings, Simulator, Sphere
from addon.sim.limiters import limiter_levels
from addon.sim.springs import face_edges
from addon.sim.xpbd_build import limiter_level_count

from .grids import quad_grid
from .helpers import grid_model, structural_stretch


def _as_dict(pairs: np.ndarray, limits: np.ndarray) -> dict[tuple[int, int], float]:
    return {(int(a), int(b)): float(x) for (a, b), x in zip(pairs, limits, strict=True)}


def test_straight_chain_levels() -> None:
    # five points on the x axis, 1 m apart, springs between neighbours
    positions = np.stack([np.arange(5.0), np.zeros(5), np.zeros(5)], axis=1)
    springs = np.array([[0, 1], [1, 2], [2, 3], [3, 4]])
    levels = limiter_levels(springs, np.ones(4), positions, 3)
    assert len(levels) == 2  # spans of 2 and 4 springs; nothing spans 8
    assert _as_dict(*levels[0]) == {(0, 2): 2.0, (1, 3): 2.0, (2, 4): 2.0}
    assert _as_dict(*levels[1]) == {(0, 4): 4.0}


def test_corners_are_not_chained() -> None:
    # an L: 0 -> 1 along x, 1 -> 2 along y (90 degrees at 1)
    positions = np.array([[0.0, 0, 0], [1, 0, 0], [1, 1, 0]])
    assert limiter_levels(np.array([[0, 1], [1, 2]]), np.ones(2), positions, 1) == []


def test_limit_is_the_length_along_the_springs_not_the_chord() -> None:
    # a gentle arc: the limit is the path (1 + 1), longer than the chord, so the rest shape
    # satisfies it and the arc may still straighten
    positions = np.array([[0.0, 0, 0], [1, 0.2, 0], [2, 0, 0]])
    lengths = np.linalg.norm(np.diff(positions, axis=0), axis=1)
    ((pairs, limits),) = limiter_levels(np.array([[0, 1], [1, 2]]), lengths, positions, 1)
    assert _as_dict(pairs, limits) == {(0, 2): float(lengths.sum())}
    assert limits[0] > np.linalg.norm(positions[2] - positions[0])


def test_grid_level_one_is_every_skip_one_pair() -> None:
    # 4 x 4 vertices: per row the pairs (0, 2) and (1, 3), 4 rows; the same per column
    positions, sizes, corners = quad_grid(4, 4, size=3.0)
    edges = face_edges(sizes, corners)
    lengths = np.linalg.norm(positions[edges[:, 1]] - positions[edges[:, 0]], axis=1)
    levels = limiter_levels(edges, lengths, positions, 2)
    assert len(levels) == 1  # a span of 4 springs needs 5 vertices in a line
    pairs, limits = levels[0]
    rows = {(4 * r + c, 4 * r + c + 2) for r in range(4) for c in range(2)}
    columns = {(c + 4 * r, c + 4 * r + 8) for c in range(4) for r in range(2)}
    assert set(_as_dict(pairs, limits)) == rows | columns
    assert np.allclose(limits, 2.0)


def _drape(settings: SimSettings, n: int = 40, frames: int = 96) -> np.ndarray:
    """The bench scene at 40 x 40: 2 m sheet pinned at two corners over a ball and a floor."""
    model = grid_model(n, size=2.0, height=1.0, pins=(0, n - 1))
    sim = Simulator(model, settings)
    colliders = (Sphere((1.0, 0.5, 0.3), 0.3), Plane((0, 0, 0), (0, 0, 1)))
    for _ in range(frames):
        out = sim.step(colliders=colliders)
    assert sim.recoveries == 0
    return structural_stretch(model, out)


def test_stretch_over_a_sphere_within_targets() -> None:
    # issue 6's figures: mean stretch <= 1 %, 99th percentile <= 6 %
    for settings in (SimSettings.cloth(), SimSettings.cloth(bend_stiffness=0.0)):
        stretch = _drape(settings)
        assert stretch.mean() <= 0.01
        assert np.percentile(stretch, 99) <= 0.06


def test_without_limiters_the_sphere_stretches_the_cloth() -> None:
    stretch = _drape(SimSettings.cloth(stretch_limit_levels=0))
    assert np.percentile(stretch, 99) > 0.06  # what the limiters are for


def test_finer_cloth_gets_one_more_level_per_doubling() -> None:
    # 101 x 101 points: 100 springs across (the reference) -> as set; 201: 200 across -> +1
    coarse, fine = grid_model(101, size=2.0), grid_model(201, size=2.0)
    cloth = SimSettings.cloth(stretch_limit_levels=3)
    assert limiter_level_count(cloth, coarse) == 3
    assert limiter_level_count(cloth, fine) == 4
    assert limiter_level_count(SimSettings.cloth(stretch_limit_levels=0), fine) == 0
    assert limiter_level_count(SimSettings.soft_body(stretch_limit_levels=3), fine) == 0
    assert limiter_level_count(SimSettings.cloth(stretch_limit_levels=8), fine) == 8
