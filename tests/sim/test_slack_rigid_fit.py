"""The rigid fit self-collision's slack and the all-pairs halo take out of a cloth's motion
(``slack.moved_rigidly``), against a Kabsch fit computed here."""

from __future__ import annotations

import numpy as np

from addon.sim.mesh.affine import transform_points
from addon.sim.self_collide.slack import moved_rigidly


def _kabsch_motion(built: np.ndarray, here: np.ndarray) -> np.ndarray:
    """Each point's motion after the best-fit rotation and shift, in float64 with matrix
    products (the textbook form, independent of the code under test)."""
    b = built - built.mean(axis=0)
    x = here - here.mean(axis=0)
    u, _, vt = np.linalg.svd(b.T @ x)
    d = np.sign(np.linalg.det(u @ vt))
    turn = u @ np.diag([1.0, 1.0, d]) @ vt
    return x @ turn.T - b


def _scene(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    built = rng.uniform(-1.0, 1.0, (n, 3))
    c, s = np.cos(0.7), np.sin(0.7)
    turn = np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])
    here = built @ turn.T + [0.4, -1.2, 0.3] + rng.normal(0.0, 0.01, (n, 3))  # and a wobble
    return built, here


def test_the_fit_leaves_the_motion_beyond_the_best_rotation_and_shift() -> None:
    for n, seed in ((4, 1), (513, 2), (5000, 3)):
        built, here = _scene(n, seed)
        moved = moved_rigidly(built, here)
        assert moved.dtype == np.float32 and moved.shape == (n, 3)
        assert np.allclose(moved, _kabsch_motion(built, here), atol=2e-6)
        assert np.abs(moved).max() < 0.06  # the wobble, not the turn (1.2 m) or the shift


def test_the_fit_turns_the_points_as_the_column_transform_did_bit_for_bit() -> None:
    # the turn applied column by column over (N,) columns, not as a (N, 1) x (3,) broadcast
    # (``transform_points``: 10x the time on the demo cape's 513 points): the same sums in
    # the same order, so the same float32 motion
    for n, seed in ((513, 4), (40_000, 5)):
        built, here = _scene(n, seed)
        b = built - built.mean(axis=0)
        x = here - here.mean(axis=0)
        u, _, vt = np.linalg.svd(np.einsum("ni,nj->ij", b, x))
        if np.linalg.det(u @ vt) < 0:
            u[:, -1] = -u[:, -1]
        turn = np.eye(4)
        turn[:3, :3] = u @ vt
        before = (transform_points(turn, x, np.float64) - b).astype(np.float32)
        assert np.array_equal(moved_rigidly(built, here), before)
