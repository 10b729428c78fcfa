"""Small scenes shared by the solver tests."""

from __future__ import annotations

import numpy as np

from addon.sim import (
    ClothModel,
    SpringKind,
    bend_springs,
    face_edges,
    merge_with_kinds,
    shear_springs,
)

from .grids import quad_grid


def grid_model(
    n: int,
    size: float = 1.0,
    height: float = 1.0,
    pins: tuple[int, ...] = (),
    mass: float = 0.3,
    extra: bool = True,
) -> ClothModel:
    """An ``n`` x ``n`` cloth with the given pinned vertices."""
    positions, sizes, corners = quad_grid(n, n, size, height)
    parts = [face_edges(sizes, corners)]
    if extra:
        parts += [shear_springs(sizes, corners), bend_springs(sizes, corners, positions)]
    springs, kinds = merge_with_kinds(*parts)
    masses = np.full(n * n, mass)
    masses[list(pins)] = 0.0
    return ClothModel(positions, masses, springs, kinds)


def structural_stretch(model: ClothModel, positions: np.ndarray) -> np.ndarray:
    """|len / rest - 1| of every structural spring."""
    structural = model.kinds == SpringKind.STRUCTURAL
    a, b = model.springs[structural].T
    lengths = np.linalg.norm(positions[b] - positions[a], axis=1)
    return np.abs(lengths / model.rest_lengths[structural] - 1.0)


def storage_rows(points: np.ndarray, dtype: type) -> np.ndarray:
    """Points as the solvers' (N, 4) rows (x, y, z, 0) of ``dtype``."""
    out = np.zeros((points.shape[0], 4), dtype=dtype)
    out[:, :3] = points
    return out
