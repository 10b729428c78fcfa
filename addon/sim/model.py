"""The simulated object: rest shape, masses, springs and their kinds, validated once.

Everything a solver needs that does not change while the simulation runs lives here, so the
solvers can precompute from it. Bad input is repaired and reported in ``warnings`` rather
than raised: a broken file must still give a usable (if partly pinned) cloth.
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np

from .mesh.affine import transform_points


class SpringKind(IntEnum):
    STRUCTURAL = 0
    SHEAR = 1
    BEND = 2


def _per_point(values: np.ndarray | None, count: int, name: str, warnings: list[str]) -> np.ndarray:
    """A per-point scale: missing = 1, non-finite or negative entries = 1 (reported)."""
    if values is None:
        return np.ones(count, dtype=np.float64)
    out = np.array(values, dtype=np.float64).reshape(-1)
    if out.size != count:
        warnings.append(f"{name}: {out.size} values for {count} points, ignored")
        return np.ones(count, dtype=np.float64)
    bad = ~np.isfinite(out) | (out < 0)
    if bad.any():
        warnings.append(f"{name}: {int(bad.sum())} non-finite or negative values set to 1")
        out[bad] = 1.0
    return out


# springs measured at a time by ``_lengths``: its work rows stay in cache
LENGTH_CHUNK = 1 << 15


def _lengths(points: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """``|points[j] - points[i]|`` per pair (indices in range), one coordinate column at a
    time, a chunk of pairs at a time."""
    count = pairs.shape[0]
    out = np.empty(count, dtype=np.float64)
    columns = [np.ascontiguousarray(points[:, axis], dtype=np.float64) for axis in range(3)]
    d, e = np.empty(LENGTH_CHUNK), np.empty(LENGTH_CHUNK)
    for lo in range(0, count, LENGTH_CHUNK):
        hi = min(lo + LENGTH_CHUNK, count)
        first = np.ascontiguousarray(pairs[lo:hi, 0], dtype=np.intp)
        second = np.ascontiguousarray(pairs[lo:hi, 1], dtype=np.intp)
        total, a, b = out[lo:hi], d[: hi - lo], e[: hi - lo]
        for axis, column in enumerate(columns):
            column.take(second, out=a, mode="clip")
            column.take(first, out=b, mode="clip")
            a -= b
            if axis:
                a *= a
                total += a
            else:  # the sum starts at 0: 0 + x*x is x*x (NaN stays NaN)
                np.multiply(a, a, out=total)
        np.sqrt(total, out=total)
    return out


def _matrix(matrix: np.ndarray | None, warnings: list[str]) -> np.ndarray | None:
    """The build matrix as float64 (4, 4), or None for the identity (also for a non-finite
    one, reported)."""
    if matrix is None:
        return None
    m = np.array(matrix, dtype=np.float64)
    if m.shape != (4, 4):
        raise ValueError(f"object matrix must be (4, 4), got {m.shape}")
    if not np.isfinite(m).all():
        warnings.append("non-finite object matrix: the rest shape is measured as it is")
        return None
    return m


def rows_of(values: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """``values[ids]`` for ascending distinct ``ids``: a view when they are one run (as a
    kind's springs are in the order ``merge_with_kinds`` gives), else a copy."""
    if ids.size and int(ids[-1]) - int(ids[0]) + 1 == ids.size:
        return values[int(ids[0]) : int(ids[-1]) + 1]
    return values[ids]


def _faces(
    sizes: np.ndarray | None, corners: np.ndarray | None, count: int, warnings: list[str]
) -> tuple[np.ndarray, np.ndarray]:
    """Valid polygons: sizes ``(F,)`` int64 and corners ``(C,)`` int64 (empty without)."""
    empty = (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64))
    if sizes is None or corners is None:
        return empty
    s = np.asarray(sizes, dtype=np.int64).reshape(-1)
    c = np.asarray(corners, dtype=np.int64).reshape(-1)
    if (s < 0).any() or int(s.sum()) != c.size:
        warnings.append(f"faces: sizes add up to {int(s.clip(0).sum())}, not {c.size}: ignored")
        return empty
    bad_corner = (c < 0) | (c >= count)
    bad = np.zeros(s.size, dtype=bool)
    if bad_corner.any():
        face_of = np.repeat(np.arange(s.size), s)
        bad[face_of[bad_corner]] = True
        warnings.append(f"{int(bad.sum())} faces dropped (corner index out of range)")
    return s[~bad], c[~np.repeat(bad, s)]


class ClothModel:
    """Rest positions ``(N, 3)``, masses ``(N,)``, springs ``(S, 2)`` and kinds ``(S,)`` uint8.

    Masses that are zero, negative or non-finite pin their point (negative and non-finite
    ones are reported). Springs with an index out of range or joining a point to itself are
    dropped (reported). ``face_sizes`` ``(F,)`` and ``face_corners`` ``(C,)`` (optional) are
    the mesh's polygons, for the face wind; faces with a corner out of range are dropped
    (reported).

    ``rest_positions`` are in the object's space; ``matrix`` (4, 4), column-vector convention
    (Blender's ``matrix_world``), is where the object is when the cloth is built (None:
    identity). Lengths, tethers and limiters are measured on ``rest_world``, the rest shape
    as ``matrix`` places it, so a scaled object's cloth is as big as it looks.
    """

    def __init__(
        self,
        rest_positions: np.ndarray,
        masses: np.ndarray,
        springs: np.ndarray,
        kinds: np.ndarray | None = None,
        stiffness_scale: np.ndarray | None = None,
        damping_scale: np.ndarray | None = None,
        face_sizes: np.ndarray | None = None,
        face_corners: np.ndarray | None = None,
        matrix: np.ndarray | None = None,
    ) -> None:
        self.warnings: list[str] = []
        rest = np.array(rest_positions, dtype=np.float64).reshape(-1, 3)
        count = rest.shape[0]
        bad_rest = ~np.isfinite(rest).all(axis=1)
        mass = np.array(masses, dtype=np.float64).reshape(-1)
        if mass.size != count:
            raise ValueError(f"{mass.size} masses for {count} points")
        negative = mass < 0
        nonfinite = ~np.isfinite(mass)
        if negative.any():
            self.warnings.append(f"{int(negative.sum())} negative masses: points pinned")
        if nonfinite.any():
            self.warnings.append(f"{int(nonfinite.sum())} non-finite masses: points pinned")
        if bad_rest.any():
            bad = int(bad_rest.sum())
            self.warnings.append(
                f"{bad} point{'s' if bad != 1 else ''} with a non-finite rest position "
                "(NaN or inf): held at the object's origin"
            )
            rest[bad_rest] = 0.0
        pinned = negative | nonfinite | (mass <= 0) | bad_rest
        mass[pinned] = 0.0

        pairs = np.array(springs, dtype=np.int64).reshape(-1, 2)
        kind = (
            np.zeros(pairs.shape[0], dtype=np.uint8)
            if kinds is None
            else np.array(kinds, dtype=np.uint8).reshape(-1)
        )
        if kind.size != pairs.shape[0]:
            raise ValueError(f"{kind.size} spring kinds for {pairs.shape[0]} springs")
        first, second = pairs[:, 0], pairs[:, 1]
        valid = first != second
        in_range = not pairs.size or (int(pairs.min()) >= 0 and int(pairs.max()) < count)
        if not in_range:  # per spring only when some index is off (whole-array checks first)
            valid &= (first >= 0) & (first < count) & (second >= 0) & (second < count)
        if kind.size and int(kind.max()) > max(SpringKind):
            valid &= kind <= max(SpringKind)
        self.rest_positions = rest
        self.matrix = _matrix(matrix, self.warnings)
        self.rest_world = (
            rest if self.matrix is None else transform_points(self.matrix, rest, np.float64)
        )
        self.masses = mass
        self.pinned = pinned
        if valid.all():  # the copies above are the model's own
            self.springs, self.kinds = np.ascontiguousarray(pairs), np.ascontiguousarray(kind)
        else:
            self.warnings.append(
                f"{int((~valid).sum())} springs dropped (index out of range, self or bad kind)"
            )
            self.springs = np.ascontiguousarray(pairs[valid])
            self.kinds = np.ascontiguousarray(kind[valid])
        self.stiffness_scale = _per_point(stiffness_scale, count, "stiffness scale", self.warnings)
        self.damping_scale = _per_point(damping_scale, count, "damping scale", self.warnings)
        self.rest_lengths = _lengths(self.rest_world, self.springs)
        self.face_sizes, self.face_corners = _faces(face_sizes, face_corners, count, self.warnings)

    @property
    def has_faces(self) -> bool:
        return bool(self.face_sizes.size)

    @property
    def point_count(self) -> int:
        return int(self.rest_positions.shape[0])

    @property
    def inverse_masses(self) -> np.ndarray:
        """1 / mass for free points, 0 for pinned ones."""
        inv = np.zeros_like(self.masses)
        free = ~self.pinned
        inv[free] = 1.0 / self.masses[free]
        return inv

    def spring_stiffness_scale(self) -> np.ndarray:
        """Per-spring scale: the mean of its two points' painted stiffness scales."""
        s = self.stiffness_scale
        return 0.5 * (s[self.springs[:, 0]] + s[self.springs[:, 1]])
