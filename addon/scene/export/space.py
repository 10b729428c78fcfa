"""Blender space -> file space: the inverse of :class:`..convert.Conversion`.

The conversion is a mirror times a scale, so the inverse is its transpose over the scale;
matrices go through the importer's own :func:`..animation.to_file_matrix`.
"""

from __future__ import annotations

import numpy as np

from ..animation import to_file_matrix
from ..convert import Conversion


class FileSpace:
    def __init__(self, conversion: Conversion) -> None:
        self.conversion = conversion
        self.mirror = np.asarray(conversion.mirror, dtype=np.float64)
        self.scale = float(conversion.scale)
        basis = np.asarray(conversion.basis, dtype=np.float64)
        self._c, self._c_inv = basis, np.linalg.inv(basis)

    def positions(self, points: np.ndarray) -> np.ndarray:
        """(n, 3) Blender points -> file points (``p = L^T p_b / s``)."""
        return (np.asarray(points, dtype=np.float64) @ self.mirror) / self.scale

    def directions(self, vectors: np.ndarray) -> np.ndarray:
        return np.asarray(vectors, dtype=np.float64) @ self.mirror

    def matrix(self, m: np.ndarray) -> np.ndarray:
        """One Blender 4x4 column-vector matrix -> the file's row-vector matrix."""
        return to_file_matrix(self.conversion, np.asarray(m, dtype=np.float64))

    def matrices(self, m: np.ndarray) -> np.ndarray:
        """(k, 4, 4) Blender matrices -> file matrices, batched."""
        return np.swapaxes(self._c_inv @ np.asarray(m, dtype=np.float64) @ self._c, -1, -2)

    @staticmethod
    def uvs(uv: np.ndarray) -> np.ndarray:
        """Blender UVs (v up) -> file UVs (v down); the flip is its own inverse."""
        return Conversion.uvs(uv)
