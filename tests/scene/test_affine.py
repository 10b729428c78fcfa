"""affine_inverse: the handler's LAPACK-free inverse agrees with the definition."""

from __future__ import annotations

import numpy as np

from addon.scene.affine import affine_inverse


def test_inverse_of_random_affine_matrices():
    rng = np.random.default_rng(7)
    for _ in range(200):
        m = np.eye(4)
        m[:3, :3] = rng.normal(size=(3, 3)) * rng.uniform(0.01, 100)
        m[:3, 3] = rng.normal(size=3) * 50
        inv = affine_inverse(m)
        np.testing.assert_allclose(inv @ m, np.eye(4), atol=1e-9 * np.linalg.cond(m))
        assert inv[3].tolist() == [0.0, 0.0, 0.0, 1.0]


def test_rotation_and_translation_by_hand():
    # a quarter turn about Z, then a shift by (1, 2, 3): the inverse shifts back, then turns back
    m = np.array([[0.0, -1, 0, 1], [1, 0, 0, 2], [0, 0, 1, 3], [0, 0, 0, 1]])
    expected = np.array([[0.0, 1, 0, -2], [-1, 0, 0, 1], [0, 0, 1, -3], [0, 0, 0, 1]])
    np.testing.assert_allclose(affine_inverse(m), expected, atol=1e-15)


def test_zero_scale_gives_a_finite_pseudo_inverse():
    m = np.diag([2.0, 0.0, 1.0, 1.0])
    inv = affine_inverse(m)
    assert np.isfinite(inv).all()
    np.testing.assert_allclose(inv[:3, :3], np.diag([0.5, 0.0, 1.0]))
