"""affine_inverse: the handler's LAPACK-free inverse agrees with the definition."""

from __future__ import annotations

import numpy as np
import pytest

from addon.sim.mesh.affine import affine_inverse, transform_points


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


def test_transform_points_matches_the_matrix_product():
    rng = np.random.default_rng(3)
    points = rng.normal(size=(500, 3))
    m = np.eye(4)
    m[:3, :3] = rng.normal(size=(3, 3))
    m[:3, 3] = [1.0, -2.0, 3.0]
    expected = points @ m[:3, :3].T + m[:3, 3]
    np.testing.assert_allclose(transform_points(m, points, np.float64), expected, rtol=1e-12)
    out32 = transform_points(m, points)
    assert out32.dtype == np.float32 and out32.flags.c_contiguous
    np.testing.assert_allclose(out32, expected, rtol=1e-5, atol=1e-5)


def test_transform_points_identity_and_shift_by_hand():
    points = np.array([[1.0, 2.0, 3.0], [-1.0, 0.0, 0.5]])
    np.testing.assert_array_equal(transform_points(np.eye(4), points), points)
    shift = np.eye(4)
    shift[:3, 3] = [10.0, 0.0, -1.0]
    np.testing.assert_array_equal(
        transform_points(shift, points), [[11.0, 2.0, 2.0], [9.0, 0.0, -0.5]]
    )


# -- matrices LAPACK must never see ----------------------------------------------------------


def test_singular_matrices_give_finite_pseudo_inverses() -> None:
    for diagonal in ([0.0, 1.0, 1.0], [0.0, 0.0, 0.0], [1e-200, 1.0, 1.0]):
        m = np.eye(4)
        m[:3, :3] = np.diag(diagonal)
        m[:3, 3] = (1.0, 2.0, 3.0)
        inv = affine_inverse(m)
        assert np.isfinite(inv).all() and inv[3].tolist() == [0.0, 0.0, 0.0, 1.0]


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_a_non_finite_matrix_never_reaches_lapack(bad: float, monkeypatch) -> None:
    real = np.linalg.pinv

    def pinv(a, *args, **kwargs):  # the real one would hang on inf: fail fast instead
        if not np.isfinite(a).all():
            raise AssertionError("np.linalg.pinv called with a non-finite matrix")
        return real(a, *args, **kwargs)

    monkeypatch.setattr(np.linalg, "pinv", pinv)
    m = np.eye(4)
    m[0, 0] = bad
    out = affine_inverse(m)
    assert out.shape == (4, 4)
