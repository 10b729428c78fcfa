"""Per-row sums over ``(k, 4)`` storage rows (x, y, z, 0) without BLAS.

``rows @ ones(4)`` goes to OpenBLAS, which may hand even a small product to a second thread;
on a busy machine each such call then waits for a core. Three strided adds stay on the
calling thread and cost the same at best.
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
    axes = [axis for axis in range(3) if vector[axis] != 0.0] or [0]  # a ground plane: one
    np.multiply(rows[:, axes[0]], vector[axes[0]], out=out)
    for axis in axes[1:]:
        out += rows[:, axis] * vector[axis]
    return out


def take_columns(rows: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``rows[idx, :3]`` as a contiguous ``(3, k)`` copy (one coordinate per row).

    Float32 ``(N, 4)`` storage is gathered as one 16-byte complex item per row (a 2-D fancy
    index is several times slower); per-point scalars then broadcast along the fast axis.
    """
    if rows.dtype == np.float32 and rows.flags.c_contiguous:
        picked = rows.view(np.complex128).reshape(-1).take(idx).view(np.float32)
        picked = picked.reshape(-1, 4)
    else:
        picked = np.take(rows, idx, axis=0)
    return np.ascontiguousarray(picked[:, :3].T)


def take_rows(rows: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``rows[idx]`` as a ``(k, 4)`` copy: float32 rows move as one 16-byte item each."""
    if rows.dtype == np.float32 and rows.flags.c_contiguous:
        return rows.view(np.complex128).reshape(-1).take(idx).view(np.float32).reshape(-1, 4)
    return np.take(rows, idx, axis=0)


def put_rows(rows: np.ndarray, idx: np.ndarray, values: np.ndarray) -> None:
    """``rows[idx] = values`` for ``(k, 4)`` ``values`` of the same dtype."""
    if rows.dtype == np.float32 and rows.flags.c_contiguous and values.flags.c_contiguous:
        flat = rows.view(np.complex128).reshape(-1)
        flat[idx] = values.view(np.complex128).reshape(-1)
    else:
        rows[idx] = values


def put_columns(rows: np.ndarray, idx: np.ndarray, columns: np.ndarray) -> None:
    """``rows[idx, :3] = columns.T`` for ``(3, k)`` ``columns``; the 4th column becomes 0."""
    full = np.zeros((idx.size, 4), dtype=rows.dtype)
    full[:, :3] = columns.T
    if rows.dtype == np.float32 and rows.flags.c_contiguous:
        rows.view(np.complex128).reshape(-1)[idx] = full.view(np.complex128).reshape(-1)
    else:
        rows[idx] = full
