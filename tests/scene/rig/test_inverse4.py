"""The cofactor 4x4 inverse the rig uses instead of LAPACK (costly under Blender)."""

from __future__ import annotations

import numpy as np
import pytest
from xof.addon.scene.rig.rig_math import inverse4


def test_single_and_stacked_inverses_equal_lapacks():
    rng = np.random.default_rng(3)
    for _ in range(500):
        m = rng.normal(size=(4, 4))
        np.testing.assert_allclose(inverse4(m), np.linalg.inv(m), rtol=1e-8, atol=1e-10)
    stack = rng.normal(size=(7, 3, 4, 4))
    np.testing.assert_allclose(inverse4(stack), np.linalg.inv(stack), rtol=1e-8, atol=1e-10)


def test_rigid_transforms_invert_exactly_enough():
    angle = 0.7
    m = np.eye(4)
    m[:2, :2] = [[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]]
    m[:3, 3] = (3.0, -2.0, 5.0)
    np.testing.assert_allclose(inverse4(m) @ m, np.eye(4), atol=1e-14)


def test_singular_matrices_raise_like_numpy():
    with pytest.raises(np.linalg.LinAlgError):
        inverse4(np.zeros((4, 4)))
    with pytest.raises(np.linalg.LinAlgError):
        inverse4(np.stack([np.eye(4), np.zeros((4, 4))]))
    assert not np.isfinite(inverse4(np.full((4, 4), np.nan))).any()


def test_safe_inverse_never_raises():
    from xof.addon.scene.rig.rig_math import safe_inverse4

    flat = np.diag([1.0, 1.0, 0.0, 1.0])  # a zero scale: the pseudo-inverse
    np.testing.assert_allclose(safe_inverse4(flat), np.linalg.pinv(flat))
    np.testing.assert_array_equal(safe_inverse4(np.full((4, 4), np.inf)), np.eye(4))
    m = np.eye(4)
    m[:3, 3] = (1.0, 2.0, 3.0)
    np.testing.assert_allclose(safe_inverse4(m) @ m, np.eye(4), atol=1e-15)
