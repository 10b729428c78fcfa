"""Which file faces Blender can hold, and the corner order after the winding reversal.

Pure numpy. Meshes made of one face size (all triangles, all quads: nearly every real file)
take a fast path on an (f, k) view; mixed sizes take the general path.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .convert import face_starts, reversed_winding_order


@dataclass(eq=False)
class FacePlan:
    kept: np.ndarray  # (f,) bool: file faces Blender gets
    sizes: np.ndarray  # (kept,) corner counts of the kept faces
    notes: list[str] = field(default_factory=list)  # why faces were dropped (counts)
    uniform: int | None = None  # the one face size, when all faces have it
    file_sizes: np.ndarray | None = None  # (f,) corner counts of every file face
    _loop_to_corner: np.ndarray | None = None

    @property
    def all_kept(self) -> bool:
        return len(self.sizes) == len(self.kept)

    @property
    def loop_to_corner(self) -> np.ndarray:
        """(loops,) file corner index of each Blender loop (built on first use)."""
        if self._loop_to_corner is None:
            k = self.uniform
            if k is not None:
                faces = np.arange(len(self.kept)) if self.all_kept else np.flatnonzero(self.kept)
                self._loop_to_corner = (faces[:, None] * k + _reverse_perm(k)[None, :]).ravel()
            else:
                kept_corners = np.flatnonzero(
                    np.repeat(self.kept, _sizes(self.file_sizes, self.sizes))
                )
                self._loop_to_corner = kept_corners[reversed_winding_order(self.sizes)]
        return self._loop_to_corner

    def per_loop(self, per_corner: np.ndarray) -> np.ndarray:
        """A per-file-corner array reordered to Blender's loops (dropped faces removed)."""
        k = self.uniform
        if k is None:
            return per_corner[self.loop_to_corner]
        grid = per_corner.reshape(len(self.kept), k, *per_corner.shape[1:])
        if not self.all_kept:
            grid = grid[self.kept]
        return grid[:, _reverse_perm(k)].reshape(-1, *per_corner.shape[1:])

    def loop_starts(self) -> np.ndarray:
        """int32 offset of each Blender face's first loop."""
        if self.uniform is not None:
            return np.arange(0, len(self.sizes) * self.uniform, self.uniform, dtype=np.int32)
        return face_starts(self.sizes).astype(np.int32)


def _reverse_perm(k: int) -> np.ndarray:
    """Corner order of a reversed face keeping its first corner: [a, b, c, d] -> [a, d, c, b]."""
    return np.r_[0, np.arange(k - 1, 0, -1)]


def _sizes(file_sizes: np.ndarray | None, kept_sizes: np.ndarray) -> np.ndarray:
    return file_sizes if file_sizes is not None else kept_sizes


def _uniform_size(sizes: np.ndarray) -> int | None:
    if len(sizes) == 0:
        return None
    k = int(sizes[0])
    return k if int(sizes.min()) == k == int(sizes.max()) else None


def _repeats_in_big_faces(sizes: np.ndarray, corners: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Faces of 5+ corners that use a vertex twice (sort within each face)."""
    out = np.zeros(len(sizes), dtype=bool)
    big = np.flatnonzero(sizes >= 5)
    if len(big) == 0:
        return out
    big_sizes = sizes[big]
    local = np.arange(int(big_sizes.sum())) - np.repeat(face_starts(big_sizes), big_sizes)
    sel = np.repeat(starts[big], big_sizes) + local
    fid = np.repeat(big, big_sizes)
    vals = corners[sel]
    order = np.lexsort((vals, fid))
    fid, vals = fid[order], vals[order]
    dup = (fid[1:] == fid[:-1]) & (vals[1:] == vals[:-1])
    out[fid[1:][dup]] = True
    return out


def _repeats(sizes: np.ndarray, corners: np.ndarray, k: int | None) -> np.ndarray:
    """Faces using a vertex twice (Blender cannot hold them)."""
    f = len(sizes)
    if k is not None:  # (f, k) view: compare columns
        c2 = corners.reshape(f, k)
        rep = np.zeros(f, dtype=bool)
        if k <= 4:
            for a in range(k):
                for b in range(a + 1, k):
                    rep |= c2[:, a] == c2[:, b]
            return rep
        for a in range(k):
            rep |= c2[:, a] == c2[:, (a + 1) % k]
        return rep | _repeats_in_big_faces(sizes, corners, face_starts(sizes))
    starts = face_starts(sizes)
    face_of = np.repeat(np.arange(f), sizes)
    nxt = np.arange(1, len(corners) + 1)
    nonempty = sizes > 0
    nxt[(starts + sizes - 1)[nonempty]] = starts[nonempty]
    rep = np.zeros(f, dtype=bool)
    rep[face_of[corners == corners[nxt]]] = True
    quads = np.flatnonzero(sizes == 4)
    s = starts[quads]
    rep[quads] |= (corners[s] == corners[s + 2]) | (corners[s + 1] == corners[s + 3])
    return rep | _repeats_in_big_faces(sizes, corners, starts)


def _copies(sizes: np.ndarray, corners: np.ndarray, kept: np.ndarray) -> np.ndarray:
    """Kept faces with the same vertices as an earlier kept face, in any order (Blender holds
    one face a vertex set: ``Mesh.validate()`` removes the others).

    Per face size, a key that does not depend on the corner order (power sums of the vertex
    ids, wrapping in uint64) is sorted; only faces whose key occurs twice are compared exactly.
    """
    out = np.zeros(len(sizes), dtype=bool)
    starts = face_starts(sizes)
    corners = np.ascontiguousarray(corners, dtype=np.int64)
    for size in np.unique(sizes[kept]).tolist():
        ids = np.flatnonzero(kept & (sizes == size))
        key = _power_sums_key(corners, starts[ids], size, ids.size * size == corners.size)
        ordered = np.sort(key)
        twice = ordered[1:][ordered[1:] == ordered[:-1]]
        if not len(twice):
            continue  # the usual case: no two faces share a key
        maybe = np.flatnonzero(np.isin(key, twice))
        exact = np.sort(corners[starts[ids[maybe]][:, None] + np.arange(size)], axis=1)
        _, first = np.unique(exact, axis=0, return_index=True)
        copy = np.ones(len(maybe), dtype=bool)
        copy[first] = False  # the earliest face of each vertex set stays
        out[ids[maybe[copy]]] = True
    return out


def _power_sums_key(corners: np.ndarray, at: np.ndarray, size: int, whole: bool) -> np.ndarray:
    """Per face of ``size`` corners starting at ``at``: its ids' sum, sum of squares and sum
    of cubes (uint64, wrapping) mixed into one key, a corner column at a time (a million
    quads' (F, 4) blocks would be a fresh 32 MB each). ``whole``: the faces are all of
    ``corners``, in order (read as columns of a view)."""
    block = corners.reshape(-1, size) if whole else None
    sums = np.zeros(at.size, dtype=np.uint64)
    squares = np.zeros(at.size, dtype=np.uint64)
    cubes = np.zeros(at.size, dtype=np.uint64)
    for j in range(size):
        column = (block[:, j] if block is not None else corners[at + j]).view(np.uint64)
        sums += column
        power = column * column
        squares += power
        power *= column
        cubes += power
    sums *= np.uint64(0x9E3779B97F4A7C15)
    squares *= np.uint64(0xC2B2AE3D27D4EB4F)
    sums ^= squares
    sums ^= cubes
    return sums


def plan_faces(sizes: np.ndarray, corners: np.ndarray, n_verts: int) -> FacePlan:
    """Drop faces with < 3 corners, out-of-range or repeated vertices, and faces repeating an
    earlier face's vertices; reverse the winding."""
    sizes = np.asarray(sizes, dtype=np.int64).ravel()
    corners = np.asarray(corners, dtype=np.int64).ravel()
    f = len(sizes)
    notes: list[str] = []
    k = _uniform_size(sizes)
    drop = sizes < 3
    if drop.any():
        notes.append(f"{int(drop.sum())} face(s) with fewer than 3 corners dropped")
    if len(corners) and (int(corners.min()) < 0 or int(corners.max()) >= n_verts):
        bad_corner = (corners < 0) | (corners >= n_verts)
        bad = np.zeros(f, dtype=bool)
        bad[np.repeat(np.arange(f), sizes)[bad_corner]] = True
        bad &= ~drop
        notes.append(f"{int(bad.sum())} face(s) with vertex indices out of range dropped")
        drop |= bad
    if len(corners):
        rep = _repeats(sizes, corners, k) & ~drop
        if rep.any():
            notes.append(f"{int(rep.sum())} face(s) using a vertex twice dropped")
            drop |= rep
        same = _copies(sizes, corners, ~drop)
        if same.any():
            notes.append(
                f"{int(same.sum())} face(s) repeating an earlier face's vertices dropped "
                "(Blender holds one face a vertex set; the vertices are kept)"
            )
            drop |= same
    kept = ~drop
    uniform = k if k is not None and k >= 3 else None
    return FacePlan(kept, sizes[kept], notes, uniform, sizes)
