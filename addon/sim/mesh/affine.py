"""Affine 4x4 matrices on point arrays, without BLAS or LAPACK.

The frame handler inverts world matrices and moves points through them every frame.
``np.linalg.inv`` and ``@`` on an ``(N, 3)`` array go through OpenBLAS (what Blender's numpy
uses), and even a 4x4 inverse or a 10k x 3 x 3 product wakes its worker thread, which then
spins on the other core while the solver runs (figures: tests/bench/README.md). The
adjugate of the 3x3 part and three scaled column adds cost the same and start no threads.
"""

from __future__ import annotations

import numpy as np


def affine_inverse(matrix: np.ndarray) -> np.ndarray:
    """Inverse of ``[[A, t], [0, 1]]`` as ``[[A^-1, -A^-1 t], [0, 1]]`` (A from its adjugate).

    A singular ``A`` (a zero scale) gives the pseudo-inverse, so a collapsed object never
    raises inside a frame handler; a non-finite one gives NaN (LAPACK's SVD raises on NaN
    and never returns on an infinity), which the simulator refuses with a warning. Twelve
    numbers: plain Python floats cost far less than ``np.cross`` and small array products.
    """
    m = np.asarray(matrix, dtype=np.float64)
    (a, b, c, x), (d, e, f, y), (g, h, i, z) = m[:3].tolist()
    # cofactors: rows of the adjugate, so that A @ adj = det * I
    adj = [
        [e * i - f * h, c * h - b * i, b * f - c * e],
        [f * g - d * i, a * i - c * g, c * d - a * f],
        [d * h - e * g, b * g - a * h, a * e - b * d],
    ]
    det = a * adj[0][0] + b * adj[1][0] + c * adj[2][0]
    out = np.eye(4)
    if abs(det) > 1e-300 and np.isfinite(det):
        inv_a = np.array(adj) / det
    elif np.isfinite(m[:3, :3]).all():
        inv_a = np.linalg.pinv(m[:3, :3])
    else:
        inv_a = np.full((3, 3), np.nan)
    out[:3, :3] = inv_a
    r = inv_a.tolist()
    out[:3, 3] = [-(row[0] * x + row[1] * y + row[2] * z) for row in r]
    return out


def transform_points(
    matrix: np.ndarray, points: np.ndarray, dtype: type = np.float32
) -> np.ndarray:
    """``matrix @ p`` for every row ``p`` of ``points`` ``(N, 3)``, as ``dtype``.

    Three column updates instead of ``points @ A.T`` (a BLAS call, see the module docstring);
    the identity costs one copy and a pure shift one add.
    """
    pts = np.asarray(points).reshape(-1, 3)
    m = np.asarray(matrix, dtype=np.float64)
    shift: np.ndarray = m[:3, 3].astype(dtype)
    if m[:3, :3].tolist() == _EYE3:  # a list compare: a few times cheaper than array_equal
        out: np.ndarray = np.array(pts, dtype=dtype, copy=True, order="C")
        if shift.any():
            out += shift
        return out
    a: np.ndarray = m[:3, :3].astype(dtype)
    out = np.empty((len(pts), 3), dtype=dtype)
    out[:] = shift
    column: np.ndarray = np.empty((len(pts), 1), dtype=dtype)
    for j in range(3):
        np.copyto(column[:, 0], pts[:, j], casting="unsafe")
        out += column * a[:, j]
    return out


_EYE3 = np.eye(3).tolist()
