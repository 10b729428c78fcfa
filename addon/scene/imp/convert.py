"""D3D file space -> Blender space, in one place.

The file is left-handed, Y up, with row-vector matrices and UV ``v`` pointing down. Blender is
right-handed, Z up, column vectors. The default conversion is the mirror ``P`` that swaps Y
and Z (a bare rotation would import everything mirrored). The user's forward/up axes pick a
different mirror; the global scale multiplies positions and translations.

With ``L`` the 3x3 mirror and ``s`` the scale:

- positions ``p_b = s * L @ p``, normals ``n_b = L @ n``;
- matrices ``M_b = C @ M.T @ C^-1`` with ``C = [[s*L, 0], [0, 1]]`` (so frame matrices keep
  their own scale, and world positions stay consistent with the scaled vertices);
- face winding reversed (a mirror flips it), UV ``v -> 1 - v``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

_AXES = {
    "X": (1.0, 0.0, 0.0),
    "Y": (0.0, 1.0, 0.0),
    "Z": (0.0, 0.0, 1.0),
    "-X": (-1.0, 0.0, 0.0),
    "-Y": (0.0, -1.0, 0.0),
    "-Z": (0.0, 0.0, -1.0),
}


def mirror_for_axes(forward: str = "Z", up: str = "Y") -> np.ndarray:
    """The 3x3 map sending the file's ``up`` to Blender +Z and ``forward`` to Blender +Y.

    The third axis goes to +/-X so that the map has determinant -1: the file is left-handed,
    Blender right-handed, so the right conversion is always a mirror. ``("Z", "Y")`` (the D3D
    convention) gives the plain Y/Z swap.
    """
    if forward not in _AXES or up not in _AXES:
        raise ValueError(f"unknown axis: forward={forward!r} up={up!r}")
    f = np.array(_AXES[forward])
    u = np.array(_AXES[up])
    if abs(float(f @ u)) > 0.5:
        raise ValueError(f"forward and up must differ: {forward!r}, {up!r}")
    r = np.cross(u, f)  # file axis that becomes Blender +X; makes det([r f u]) == -1
    return np.stack([r, f, u])  # rows: the file vectors that land on Blender X, Y, Z


@dataclass(frozen=True)
class Conversion:
    """A fixed file->Blender conversion: mirror ``L`` (3x3, det -1) and global ``scale``."""

    mirror: np.ndarray
    scale: float = 1.0

    @classmethod
    def from_options(cls, forward: str = "Z", up: str = "Y", scale: float = 1.0) -> Conversion:
        return cls(mirror_for_axes(forward, up), float(scale))

    @property
    def basis(self) -> np.ndarray:
        """4x4 ``C``: file column vectors -> Blender column vectors (scale included)."""
        c = np.eye(4)
        c[:3, :3] = self.scale * self.mirror
        return c

    def _apply(self, vectors: np.ndarray, factor: float, single: bool = False) -> np.ndarray:
        """``factor * L @ v`` per row; ``L`` is a signed permutation: gather columns, no matmul.

        ``single``: the result as float32, rounded once from the exact product (the input is
        rounded first where only signs change: the same values, a float64 pass fewer)."""
        v = np.asarray(vectors)
        if v.dtype not in (np.float32, np.float64):
            v = v.astype(np.float64)
        columns = np.abs(self.mirror).argmax(axis=1)
        signs = self.mirror[np.arange(3), columns] * factor
        if sorted(columns) != [0, 1, 2] or not np.allclose(np.abs(self.mirror).sum(axis=1), 1):
            out = (v @ self.mirror.T) * factor  # not a signed permutation: plain product
            return out.astype(np.float32) if single else out
        exact = np.all(np.abs(signs) == 1.0)
        if single and exact:
            v = v.astype(np.float32, copy=False)
        out = v[:, columns]
        if not np.all(signs == 1.0):
            out *= signs.astype(out.dtype)
        return out.astype(np.float32, copy=False) if single else out

    def positions(self, points: np.ndarray, single: bool = False) -> np.ndarray:
        """(n, 3) file points -> (n, 3) Blender points (float32 stays float32; ``single``:
        float32 always)."""
        return self._apply(points, self.scale, single)

    def directions(self, vectors: np.ndarray, single: bool = False) -> np.ndarray:
        """(n, 3) file normals/directions -> Blender (no scale; ``L`` is orthonormal). Values
        past float32 become infinite without numpy's warning: callers check for them."""
        with np.errstate(over="ignore", invalid="ignore"):
            return self._apply(vectors, 1.0, single)

    def matrix(self, m: np.ndarray) -> np.ndarray:
        """A file 4x4 row-vector matrix -> Blender 4x4 column-vector matrix."""
        c = self.basis
        c_inv = np.eye(4)
        c_inv[:3, :3] = self.mirror.T / self.scale
        return c @ np.asarray(m, dtype=np.float64).T @ c_inv

    @staticmethod
    def uvs(uv: np.ndarray, single: bool = False) -> np.ndarray:
        """(n, 2) file UVs (v down) -> Blender UVs (v up); ``single``: float32, ``1 - v``
        computed in float64 and rounded once."""
        source = np.asarray(uv).reshape(-1, 2)
        out = np.empty(source.shape, dtype=np.float32 if single else np.float64)
        with np.errstate(over="ignore", invalid="ignore"):  # past float32: inf, reported later
            out[:, 0] = source[:, 0]
            np.subtract(1.0, source[:, 1], out=out[:, 1], dtype=np.float64, casting="same_kind")
        return out


def face_starts(face_sizes: np.ndarray) -> np.ndarray:
    """Offset of each face's first corner in the flat corner array."""
    starts = np.zeros(len(face_sizes), dtype=np.int64)
    if len(face_sizes) > 1:
        np.cumsum(face_sizes[:-1], out=starts[1:])
    return starts


def reversed_winding_order(face_sizes: np.ndarray) -> np.ndarray:
    """Permutation of corners that reverses every face, keeping each face's first corner.

    Face ``[a, b, c, d]`` becomes ``[a, d, c, b]``. ``new_corners = corners[order]``, and the
    same order applies to anything stored per corner (normal indices, corner UVs...).
    """
    sizes = np.asarray(face_sizes, dtype=np.int64)
    total = int(sizes.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    starts = face_starts(sizes)
    face_of = np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)
    start_of = starts[face_of]
    size_of = sizes[face_of]
    local = np.arange(total, dtype=np.int64) - start_of
    return start_of + (size_of - local) % size_of
