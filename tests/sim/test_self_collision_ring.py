"""Self-collision inside the rest ring (``self_collide/rest_ring.py``): the rows of a tight
fold, within the exclusion of each other at rest, keep from crossing, and a still fold is
left as it is. Crossings are counted by an independent triangle-triangle test.

The figure behind it: the 10k-point cape on the walking body (``bench_character.py``) had
10, 8, 11, 84, 184 and 416 crossing cape triangle pairs at frames 9-14, every one a pair
within ~3 cm at rest (the border folded over into a hem, tight pleats one or two columns
wide), which the distance pairs leave out."""

from __future__ import annotations

import numpy as np

from addon.sim.self_collide.self_collision import SelfCollision
from addon.sim.xpbd.solver import XpbdSolver

from .grids import folded_over, quad_grid
from .meshes import grid_triangles, intersecting_pairs

D = 0.015
NX, NY, H, FOLD_ROW = 9, 14, 0.005, 8  # a 4 cm x 6.5 cm strip of 5 mm squares


def _hem(radius: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The flat strip (rest), and the same strip hemmed: rows past ``FOLD_ROW`` turned over
    a half circle of ``radius`` back over the first part, ``2 radius`` above it. Returns
    rest, hemmed, the flap (rows on top) and the inverse masses (the flat part pinned)."""
    rest, _, _ = quad_grid(NX, NY, H * (NX - 1))
    s = rest[:, 1].copy()  # arc length along the strip
    fold = FOLD_ROW * H
    y, z, top = folded_over(s, fold, radius)
    return rest, np.stack([rest[:, 0], y, z], 1), top, np.where(s <= fold, 0.0, 1.0)


def _resolve(
    collision: SelfCollision, prev: np.ndarray, now: np.ndarray, inverse_masses: np.ndarray
) -> np.ndarray:
    pos = XpbdSolver.make_state(now)
    collision.resolve_positions(pos, XpbdSolver.make_state(prev), inverse_masses > 0, 0.0, 0.0)
    return pos[:, :3].astype(float)


def test_a_fold_dropped_through_itself_inside_the_rest_ring_is_put_back() -> None:
    # the flap of a hem (3 mm above the strip, every pair within the exclusion of 4 D at
    # rest: the distance pairs have none) drops 5 mm in one substep, through the strip
    rest, hem, flap, inv = _hem(0.0015)
    triangles = grid_triangles(NX, NY)
    now = hem.copy()
    drop = flap & (rest[:, 1] > FOLD_ROW * H + np.pi * 0.0015 + 2 * H)
    now[drop, 2] -= 0.005
    assert intersecting_pairs(hem, triangles) == 0
    assert intersecting_pairs(now, triangles) > 0  # 38 crossing pairs
    collision = SelfCollision(triangles, rest, inv, D)
    assert abs(collision.excluded - 4 * D) < 1e-9  # edges of D / 3: the fine-mesh exclusion
    out = _resolve(collision, hem, now, inv)
    assert intersecting_pairs(out, triangles) == 0
    # the dropped rows are back above the strip, about the thin distance (D / 10) over it
    assert out[drop, 2].min() > 0.0
    assert out[drop, 2].max() < 2 * 0.0015 + 1e-6
    # the control: without the ring's test (the code before it) the crossing stays
    control = SelfCollision(triangles, rest, inv, D)
    assert control.ring is not None
    control.ring.guard = lambda *args: 0  # type: ignore[method-assign]
    assert intersecting_pairs(_resolve(control, hem, now, inv), triangles) > 0


def test_a_still_fold_and_a_flat_sheet_are_left_as_they_are() -> None:
    rest, hem, _, inv = _hem(0.0015)
    triangles = grid_triangles(NX, NY)
    collision = SelfCollision(triangles, rest, inv, D)
    # a hem at rest, its layers 3 mm apart (beyond the thin distance): nothing moves
    out = _resolve(collision, hem, hem, inv)
    assert np.abs(out - hem).max() < 1e-7
    assert collision.ring is not None
    assert collision.ring.bent_leaves > 0  # the crease was looked at
    # the flat strip, and the strip squeezed to 60 % along its length: no crease, no test
    for squeeze in (1.0, 0.6):
        flat = rest * np.array([1.0, squeeze, 1.0])
        out = _resolve(collision, flat, flat, inv)
        assert np.abs(out - flat).max() < 1e-7
        assert collision.ring.bent_leaves == 0


def test_layers_of_a_fold_closer_than_the_thin_distance_are_pushed_to_it() -> None:
    # a hem of radius 0.5 mm: its flap 1 mm over the strip, closer than D / 10 = 1.5 mm;
    # the strip is pinned, so the flap alone moves, up to 1.5 mm over it
    rest, hem, flap, inv = _hem(0.0005)
    triangles = grid_triangles(NX, NY)
    collision = SelfCollision(triangles, rest, inv, D)
    out = _resolve(collision, hem, hem, inv)
    middle = flap & (rest[:, 1] > FOLD_ROW * H + 3 * H) & (rest[:, 0] > H) & (rest[:, 0] < 7 * H)
    assert np.all(out[middle, 2] > 0.001 + 1e-4)
    assert np.all(out[middle, 2] < 0.0015 + 1e-4)
    assert np.abs(out[~flap] - hem[~flap]).max() < 1e-7  # pinned (float32 storage)


def test_a_mesh_whose_exclusion_stays_within_an_edge_has_no_ring_test() -> None:
    # the ring is tested where the exclusion reaches past the next row: the strip's 5 mm
    # edges under the fine-mesh exclusion (4 D = 6 cm, twelve edges); ``make demo``'s cape
    # has 3.8 cm edges under 2 D = 3 cm (its left-out pairs are adjacent triangles'), where
    # the test cost a third more Python calls a frame for nothing
    rest, _, _ = quad_grid(5, 5, 4 * 2.5 * D)  # edges 2.5 D: the coarse exclusion, 2 D
    coarse = SelfCollision(grid_triangles(5, 5), rest, np.ones(25), D)
    assert abs(coarse.excluded - 2 * D) < 1e-9 and coarse.ring is None
    rest, _, _ = quad_grid(5, 5, 4 * 0.6 * D)  # edges 0.6 D: still 2 D, past three rows
    assert SelfCollision(grid_triangles(5, 5), rest, np.ones(25), D).ring is not None
    rest, _, _ = quad_grid(NX, NY, H * (NX - 1))
    assert SelfCollision(grid_triangles(NX, NY), rest, np.ones(NX * NY), D).ring is not None
