"""The soft body's pull back to its original shape (the book's Revert), substep-independent.

After each resolve every movable point moves a fraction ``s_sub`` of the way to its original
position transformed by the object's current matrix: ``d = (target - pos) * s_sub;
vel += d; pos += d``. With ``s_sub = 1 - (1 - s) ** (1 / substeps)`` the remaining offset
after one frame is ``(1 - s)`` of what it was whatever the substep count (``(1 - s) **
time_scale`` with a speed multiplier).
"""

from __future__ import annotations

import numpy as np

from .mesh.affine import transform_points


def substep_fraction(shape_stiffness: float, substeps: int, time_scale: float = 1.0) -> float:
    """The pull per substep; with a ``time_scale`` the frame's pull is that of ``time_scale``
    frames (a slowed simulation returns to shape as slowly as it moves)."""
    s = min(max(float(shape_stiffness), 0.0), 1.0)
    return 1.0 - (1.0 - s) ** (float(time_scale) / max(int(substeps), 1))


def transformed(rest: np.ndarray, matrix: np.ndarray | None) -> np.ndarray:
    """Points ``(N, 3)`` through a (4, 4) column-vector ``matrix`` (identity when None)."""
    if matrix is None:
        return np.asarray(rest, dtype=np.float64)
    return transform_points(matrix, rest, np.float64)


def pull_toward(
    pos: np.ndarray,
    vel: np.ndarray,
    targets: np.ndarray,
    weights: np.ndarray,
    work: np.ndarray | None = None,
) -> None:
    """``d = (targets - pos) * weights`` added to positions and velocities (all ``(N, 4)``).

    ``weights``: the substep fraction for movable points, 0 for pinned ones, best ``(N, 4)``
    (the same per row: a ``(N, 1)`` one broadcast over rows of 4 costs several times more).
    ``work``: an ``(N, 4)`` buffer for ``d`` (a temporary that size is mapped per call).
    """
    d = np.subtract(targets, pos, out=work)
    d *= weights
    pos += d
    vel += d
