"""The runtime's kept inverse of the object's world matrix follows the matrix it is asked for."""

from __future__ import annotations

import numpy as np
from xof.addon.scene.cloth.runtime import ClothRuntime


def _matrix(shift: tuple[float, float, float], scale: float) -> np.ndarray:
    m = np.diag([scale, 2.0 * scale, 1.0, 1.0])
    m[:3, 3] = shift
    return m


def test_inverse_is_kept_for_the_same_matrix_and_redone_for_a_new_one() -> None:
    rt = object.__new__(ClothRuntime)  # only the kept inverse is used
    rt._inverse_of = (b"", np.eye(4))
    first = _matrix((1.0, -2.0, 3.0), 2.0)
    inv = rt.inverse(first)
    # [[A, t], [0, 1]]^-1 = [[A^-1, -A^-1 t], [0, 1]], worked out by hand
    expected = np.diag([0.5, 0.25, 1.0, 1.0])
    expected[:3, 3] = (-0.5, 0.5, -3.0)
    assert np.array_equal(inv, expected)
    assert rt.inverse(first.copy()) is inv  # same values: the kept one
    moved = _matrix((0.0, 0.0, 1.0), 0.5)
    again = rt.inverse(moved)
    expected = np.diag([2.0, 1.0, 1.0, 1.0])
    expected[:3, 3] = (0.0, 0.0, -1.0)
    assert np.array_equal(again, expected)
    assert np.array_equal(rt.inverse(first), np.diag([0.5, 0.25, 1.0, 1.0]) + _shift())


def _shift() -> np.ndarray:
    out = np.zeros((4, 4))
    out[:3, 3] = (-0.5, 0.5, -3.0)
    return out
