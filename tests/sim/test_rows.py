"""Row helpers on ``(k, 4)`` storage against values written out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from addon.sim.mesh.rows import dot_rows, squared_lengths

ROWS = np.array([[1.0, 2.0, 3.0, 0.0], [-4.0, 0.5, 2.0, 0.0]], dtype=np.float32)


@pytest.mark.parametrize(
    ("vector", "expected"),
    [
        ((0.0, 0.0, 1.0), [3.0, 2.0]),  # a ground plane: only z is read
        ((0.0, 2.0, 0.0), [4.0, 1.0]),
        ((1.0, 0.0, -1.0), [-2.0, -6.0]),
        ((0.0, 0.0, 0.0), [0.0, 0.0]),
        ((1.0, 1.0, 1.0), [6.0, -1.5]),
    ],
)
def test_dot_rows(vector: tuple[float, float, float], expected: list[float]) -> None:
    out = np.full(2, np.nan, dtype=np.float32)
    assert dot_rows(ROWS, np.array(vector), out).tolist() == expected


def test_squared_lengths() -> None:
    out = squared_lengths(ROWS, np.empty(2, np.float32), np.empty_like(ROWS))
    assert out.tolist() == [14.0, 20.25]
