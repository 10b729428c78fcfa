"""Per-row sums over ``(k, 4)`` storage rows (x, y, z, 0) without BLAS.

``rows @ ones(4)`` goes to OpenBLAS, which may hand even a small product to a second thread;
on a busy machine each such call then waits for a core (measured here: median 3x its best
time). Three strided adds stay on the calling thread and cost the same at best.
"""

from __future__ import annotations

import numpy as np


def squared_lengths(rows: np.ndarray, out: np.ndarray, work: np.ndarray) -> np.ndarray:
    """``out[i] = x^2 + y^2 + z^2`` of each row; ``work`` is a ``rows``-shaped buffer."""
    np.multiply(rows, rows, out=work)
    np.add(work[:, 0], work[:, 1], out=out)
    out += work[:, 2]
    return out


def dot_rows(rows: np.ndarray, vector: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``out[i] = rows[i, :3] . vector`` (``vector`` has 3 entries); ``out`` is ``(k,)``."""
    np.multiply(rows[:, 0], vector[0], out=out)
    for axis in (1, 2):
        if vector[axis] != 0.0:
            out += rows[:, axis] * vector[axis]
    return out
