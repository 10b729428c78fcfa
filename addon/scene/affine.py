"""Inverse of an object's 4x4 affine matrix without LAPACK.

The frame handler inverts world matrices every frame. ``np.linalg.inv`` goes through LAPACK,
and with OpenBLAS (what Blender's numpy uses) even a 4x4 inverse wakes its worker thread,
which then spins on the other core while the solver runs: the frame took 2.5-3x longer
here. The adjugate of the 3x3 part costs a few multiplications and no threads.
"""

from __future__ import annotations

import numpy as np


def affine_inverse(matrix: np.ndarray) -> np.ndarray:
    """Inverse of ``[[A, t], [0, 1]]`` as ``[[A^-1, -A^-1 t], [0, 1]]`` (A from its adjugate).

    A singular ``A`` (a zero scale) gives the pseudo-inverse, so a collapsed object never
    raises inside a frame handler.
    """
    m = np.asarray(matrix, dtype=np.float64)
    a = m[:3, :3]
    cof = np.array(
        [
            np.cross(a[1], a[2]),
            np.cross(a[2], a[0]),
            np.cross(a[0], a[1]),
        ]
    )  # rows of the cofactor matrix: a @ cof.T = det * I
    det = float(a[0] @ cof[0])
    out = np.eye(4)
    if abs(det) > 1e-300 and np.isfinite(det):
        inv_a = cof.T / det
    else:
        inv_a = np.linalg.pinv(a)
    out[:3, :3] = inv_a
    out[:3, 3] = -inv_a @ m[:3, 3]
    return out
