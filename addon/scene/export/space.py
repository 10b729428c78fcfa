"""Blender space -> file space: the inverse of :class:`..convert.Conversion`.

The conversion is a mirror times a scale, so the inverse is its transpose over the scale;
matrices go through the importer's own :func:`..animation.to_file_matrix`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..anim.animation import to_file_matrix
from ..imp.convert import Conversion
from ..rig.rig_math import inverse4

#: rows per block of the mirror (16k points: 192 KB of float32, in the cache)
_ROWS = 1 << 14


class FileSpace:
    """``float_bits`` 32: vertex data stays float32. Blender's values are float32 and each step
    (a sign, a division) is one correctly rounded operation, which in float32 gives exactly the
    float64 result rounded to float32 (what a 32-bit file stores), without float64 copies."""

    def __init__(self, conversion: Conversion, float_bits: int = 32) -> None:
        self.conversion = conversion
        self.mirror = np.asarray(conversion.mirror, dtype=np.float64)
        self.scale = float(conversion.scale)
        self.dtype: Any = np.dtype(np.float32 if float_bits == 32 else np.float64)
        basis = np.asarray(conversion.basis, dtype=np.float64)
        self._c, self._c_inv = basis, inverse4(basis)
        columns = np.abs(self.mirror).argmax(axis=0)
        self._signed = sorted(columns) == [0, 1, 2] and bool(
            np.all(np.abs(self.mirror).sum(axis=0) == 1)
        )
        self._columns, self._signs = columns, self.mirror[columns, np.arange(3)]

    def _mirrored(self, vectors: np.ndarray, in_place: bool = False) -> np.ndarray:
        """``v @ L`` in the working dtype; a signed permutation is a gather, a sign and ``+ 0``
        (which turns -0 into 0 exactly as the matrix product's sums do), block by block in
        the cache. ``in_place``: into ``vectors`` itself when it is already C-ordered rows of
        the working dtype (no new array: its page faults cost more than the arithmetic)."""
        v = np.asarray(vectors, dtype=self.dtype).reshape(-1, 3)
        if not self._signed:  # pragma: no cover - every axis choice is a signed permutation
            return (v.astype(np.float64) @ self.mirror).astype(self.dtype)
        own = in_place and v.flags.c_contiguous and v.flags.writeable
        out = v if own else np.empty_like(v, order="C")
        signs = None if np.all(self._signs == 1.0) else self._signs.astype(self.dtype)
        zero = self.dtype.type(0.0)
        spare = np.empty((min(_ROWS, len(v)), 3), dtype=self.dtype)
        for start in range(0, len(v), _ROWS):
            rows, done = v[start : start + _ROWS], out[start : start + _ROWS]
            gathered = spare[: len(rows)] if own else done  # C order: v[:, c] is strided
            np.take(rows, self._columns, axis=1, out=gathered, mode="clip")
            if signs is not None:
                np.multiply(gathered, signs, out=gathered)
            np.add(gathered, zero, out=done)
        return out

    def positions(self, points: np.ndarray, in_place: bool = False) -> np.ndarray:
        """(n, 3) Blender points -> file points (``p = L^T p_b / s``); ``in_place``: see
        :meth:`_mirrored`."""
        out = self._mirrored(points, in_place)
        if self.scale == 1.0:
            return out
        if float(self.dtype.type(self.scale)) == self.scale:
            out /= self.dtype.type(self.scale)
            return out
        # a scale that is no float32 (0.1): divided in float64, then rounded once; a value
        # past float32 becomes inf, which the exporter reports (``non_finite_warnings``)
        with np.errstate(over="ignore"):
            return (out.astype(np.float64) / self.scale).astype(self.dtype)

    def directions(self, vectors: np.ndarray, in_place: bool = False) -> np.ndarray:
        return self._mirrored(vectors, in_place)

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

    def file_uvs(self, uv: np.ndarray, in_place: bool = False) -> np.ndarray:
        """:meth:`uvs` in the working dtype (``1 - v`` is one rounding in either); ``in_place``:
        into ``uv`` itself when it is C-ordered rows of the working dtype."""
        own = in_place and uv.dtype == self.dtype and uv.flags.c_contiguous and uv.flags.writeable
        out = uv.reshape(-1, 2) if own else np.array(uv, dtype=self.dtype).reshape(-1, 2)
        np.subtract(self.dtype.type(1.0), out[:, 1], out=out[:, 1])
        return out
