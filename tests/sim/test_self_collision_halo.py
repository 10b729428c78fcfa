"""The all-pairs search's halo (``self_collide/all_pairs.py``): a query answered from the
pairs of an earlier whole pass, and the moved rows and columns, gives the whole pass's pairs
bit for bit, and every pair a brute-force search finds, on moving scenes."""

from __future__ import annotations

import numpy as np
import pytest

from addon.sim import SimSettings, Simulator
from addon.sim.self_collide import self_collision
from addon.sim.self_collide.all_pairs import AllPairs, centres, spheres
from addon.sim.self_collide.self_collision import SelfCollision

from .grids import quad_grid
from .meshes import grid_triangles
from .test_self_collision import D, _folded_sheet, _folding, _turn


def _whole_pass(pairs: AllPairs, xs: np.ndarray, grow: float) -> tuple[np.ndarray, np.ndarray]:
    centre, bound = spheres(xs, pairs.triangles, grow)
    return np.divmod(np.flatnonzero(pairs.near(xs, centre, bound)), len(pairs.triangles))


def _brute(
    x: np.ndarray, triangles: np.ndarray, allowed: np.ndarray, grow: float
) -> tuple[set, set]:
    """Allowed pairs whose point is within ``grow`` of the triangle's bounding sphere (centroid,
    farthest corner), in float64 here: those clearly inside, and those within 0.01 % of the
    line (where float32 rounding and the test's widening decide)."""
    c = x[triangles].mean(axis=1)
    r = np.linalg.norm(x[triangles] - c[:, None], axis=2).max(axis=1)
    dist = np.linalg.norm(x[:, None, :] - c[None], axis=2)
    reach = r[None] + grow
    sure = (dist < reach * 0.9999) & allowed
    edge = (np.abs(dist - reach) <= reach * 2e-4) & allowed
    return set(zip(*np.nonzero(sure), strict=True)), set(zip(*np.nonzero(edge), strict=True))


def _scene(step: int, steps: int, rest: np.ndarray) -> np.ndarray:
    """A sheet folding over while it turns half round and moves 0.3 m; a corner flap of it
    whips up and down fast (its rows and columns move beyond the halo's spare reach)."""
    u = step / steps
    x = _folding(rest, np.pi * min(1.0, 1.2 * u))
    flap = (rest[:, 0] > 0.8 * rest[:, 0].max()) & (rest[:, 1] < 0.2 * rest[:, 1].max())
    x[flap, 2] += 0.02 * np.sin(7.0 * np.pi * u)
    return x @ _turn(np.pi * u).T + [0.3 * u, 0.0, 0.0]


@pytest.mark.parametrize("halo", [0.5 * D, 2.0 * D])
def test_the_halo_gives_the_whole_pass_bit_for_bit_on_a_moving_sheet(halo: float) -> None:
    n, h = 16, 0.005
    rest, _, _ = quad_grid(n, n, h * (n - 1))
    triangles = grid_triangles(n, n)
    collision = SelfCollision(triangles, rest, np.ones(len(rest)), D, dense=True)
    pairs = AllPairs(collision._rest, collision.triangles, collision.excluded, halo)
    steps, grows = 60, (1.5 * D, 2.0 * D, 1.7 * D)
    moved_only = 0
    for step in range(steps + 1):
        x = _scene(step, steps, rest)
        xs = np.ascontiguousarray(x.T, dtype=np.float32)
        grow = grows[step % 3]
        passes = pairs.passes
        got = pairs.pairs(xs, grow)
        want = _whole_pass(pairs, xs, grow)
        for a, b in zip(got, want, strict=True):
            assert a.dtype == b.dtype and np.array_equal(a, b), step
        found = set(zip(got[0].tolist(), got[1].tolist(), strict=True))
        sure, edge = _brute(xs.T.astype(np.float64), collision.triangles, pairs.allowed, grow)
        assert sure <= found <= sure | edge, step
        if pairs.passes == passes and pairs.tested > pairs._keys.size:
            moved_only += 1  # answered from the halo and some moved rows or columns
    assert pairs.passes < steps / 2, pairs.passes  # most queries answered from the halo
    assert moved_only > 3, moved_only


def test_the_halo_is_found_again_when_too_much_moved() -> None:
    # the whole sheet crumpled anew: beyond the spare reach everywhere, a whole pass
    rest, _, _ = quad_grid(12, 12, 0.06)
    triangles = grid_triangles(12, 12)
    collision = SelfCollision(triangles, rest, np.ones(len(rest)), D, dense=True)
    pairs = collision._all_pairs
    assert pairs is not None
    rng = np.random.default_rng(3)
    for k in range(4):
        x = 0.4 * rest + rng.normal(0.0, 0.01, rest.shape)
        xs = np.ascontiguousarray(x.T, dtype=np.float32)
        got = pairs.pairs(xs, 2 * D)
        assert pairs.passes == k + 1
        for a, b in zip(got, _whole_pass(pairs, xs, 2 * D), strict=True):
            assert np.array_equal(a, b)


def test_a_rigid_motion_keeps_the_halo() -> None:
    # a folded sheet turned and moved as a whole: no pair moved, one whole pass
    n, h = 16, 0.005
    rest, _, _ = quad_grid(n, n, h * (n - 1))
    collision = SelfCollision(grid_triangles(n, n), rest, np.ones(len(rest)), D, dense=True)
    pairs = collision._all_pairs
    assert pairs is not None
    folded = _folding(rest, np.pi)
    for step in range(10):
        x = folded @ _turn(0.2 * step).T + [0.5 * step, 0.1, 0.0]
        xs = np.ascontiguousarray(x.T, dtype=np.float32)
        got = pairs.pairs(xs, 2 * D)
        assert got[0].size > 50
        for a, b in zip(got, _whole_pass(pairs, xs, 2 * D), strict=True):
            assert np.array_equal(a, b)
    assert pairs.passes == 1
    centre, radius = centres(np.ascontiguousarray(folded.T, dtype=np.float32), pairs.triangles)
    assert centre.shape == (3, len(pairs.triangles)) and radius.dtype == np.float32


def test_positions_with_the_halo_are_those_of_the_whole_pass(monkeypatch) -> None:
    # the strip folding onto itself, simulated: with the halo (two distances) and without
    # (every query a whole pass) the positions are equal bit for bit, frame by frame
    def run(halo: float) -> tuple[list[np.ndarray], int]:
        monkeypatch.setattr(self_collision, "HALO", halo)
        model, triangles = _folded_sheet(9, 19, 0.04, 0.03)
        settings = SimSettings.cloth(self_collision=True, self_distance=D, substeps=8)
        sim = Simulator(model, settings, triangles=triangles)
        collision = sim._self_hits[0]
        assert isinstance(collision, SelfCollision)
        assert collision._all_pairs is not None
        out = [sim.step().positions.copy() for _ in range(24)]
        return out, collision._all_pairs.passes

    with_halo, passes = run(2.0)
    whole, every = run(0.0)
    assert passes < every
    for a, b in zip(with_halo, whole, strict=True):
        assert np.array_equal(a, b)
