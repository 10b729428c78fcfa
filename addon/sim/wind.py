"""The book's face wind: each face pushed along its normal by the wind's normal part.

For a face with unit normal ``n`` the push is ``n * dot(n, wind)`` (newtons): a face square
to the wind takes all of it, one edge-on to it none, so a sheet turns and flutters instead of
drifting. The push is shared equally among the face's corners. Normals come from the
current positions (Newell's sum over the polygon, so n-gons and bent quads work); a
degenerate face gets no push.
"""

from __future__ import annotations

import numpy as np

from .model import ClothModel
from .settings import SimSettings


class FaceWind:
    """Face wind forces for a mesh of ``face_sizes`` ``(F,)`` and ``corners`` ``(C,)``."""

    def __init__(self, face_sizes: np.ndarray, corners: np.ndarray, point_count: int) -> None:
        sizes = np.asarray(face_sizes, dtype=np.int64).reshape(-1)
        verts = np.asarray(corners, dtype=np.int64).reshape(-1)
        if int(sizes.sum()) != verts.size or (sizes < 0).any():
            raise ValueError(f"face sizes add up to {int(sizes.sum())}, not {verts.size} corners")
        if verts.size and (verts.min() < 0 or verts.max() >= point_count):
            raise ValueError("face corner index out of range")
        keep = np.repeat(sizes >= 3, sizes)  # points and edges make no face
        face_of = np.repeat(np.arange(sizes.size, dtype=np.int64), sizes)[keep]
        sizes3 = sizes[sizes >= 3]
        self.corners = np.ascontiguousarray(verts[keep])
        starts = np.zeros(sizes3.size, dtype=np.int64)
        np.cumsum(sizes3[:-1], out=starts[1:])
        following = np.arange(1, self.corners.size + 1, dtype=np.int64)
        if sizes3.size:
            following[starts + sizes3 - 1] = starts
        self.following = self.corners[following]  # the next corner around the same face
        _, self.face_of = np.unique(face_of, return_inverse=True)
        self.face_count = int(sizes3.size)
        self.share = (1.0 / sizes3)[self.face_of]  # each corner's part of its face's push
        self.n = int(point_count)

    def normals(self, positions: np.ndarray) -> np.ndarray:
        """Unit face normals ``(F, 3)`` (zero for a degenerate face) of ``(N, 3+)`` points."""
        p = np.asarray(positions)[:, :3].astype(np.float64, copy=False)
        here, there = p[self.corners], p[self.following]
        cross = np.cross(here, there)  # Newell: twice the area vector, summed per face
        area = np.stack(
            [np.bincount(self.face_of, cross[:, k], minlength=self.face_count) for k in range(3)],
            axis=1,
        )
        length = np.linalg.norm(area, axis=1)
        out = np.zeros_like(area)
        np.divide(area, length[:, None], out=out, where=length[:, None] > 1e-30)
        return out

    def forces(self, positions: np.ndarray, wind: np.ndarray) -> np.ndarray:
        """Per-point forces ``(N, 3)`` float64; ``wind`` is ``(3,)`` or per face ``(F, 3)``."""
        normal = self.normals(positions)
        push = normal * np.einsum("ij,ij->i", normal, np.broadcast_to(wind, normal.shape))[:, None]
        part = push[self.face_of] * self.share[:, None]
        out = np.empty((self.n, 3), dtype=np.float64)
        for k in range(3):
            out[:, k] = np.bincount(self.corners, part[:, k], minlength=self.n)
        return out


def face_wind_for(model: ClothModel, settings: SimSettings, notes: list[str]) -> FaceWind | None:
    """The face wind of ``model`` when the settings ask for it."""
    if settings.wind_model != "FACE":
        return None
    if not model.has_faces:
        notes.append("face wind needs the mesh's faces: using the uniform wind")
        return None
    return FaceWind(model.face_sizes, model.face_corners, model.point_count)
