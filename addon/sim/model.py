"""The simulated object: rest shape, masses, springs and their kinds, validated once.

Everything a solver needs that does not change while the simulation runs lives here, so the
solvers can precompute from it. Bad input is repaired and reported in ``warnings`` rather
than raised: a broken file must still give a usable (if partly pinned) cloth.
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np


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


class ClothModel:
    """Rest positions ``(N, 3)``, masses ``(N,)``, springs ``(S, 2)`` and kinds ``(S,)`` uint8.

    Masses that are zero, negative or non-finite pin their point (negative and non-finite
    ones are reported). Springs with an index out of range or joining a point to itself are
    dropped (reported). Rest lengths are measured on the rest positions.
    """

    def __init__(
        self,
        rest_positions: np.ndarray,
        masses: np.ndarray,
        springs: np.ndarray,
        kinds: np.ndarray | None = None,
        stiffness_scale: np.ndarray | None = None,
        damping_scale: np.ndarray | None = None,
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
            self.warnings.append(
                f"{int(bad_rest.sum())} non-finite rest positions: set to 0 and pinned"
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
        valid = (pairs >= 0).all(axis=1) & (pairs < count).all(axis=1)
        valid &= pairs[:, 0] != pairs[:, 1]
        valid &= kind <= max(SpringKind)
        if not valid.all():
            self.warnings.append(
                f"{int((~valid).sum())} springs dropped (index out of range, self or bad kind)"
            )
        self.rest_positions = rest
        self.masses = mass
        self.pinned = pinned
        self.springs = np.ascontiguousarray(pairs[valid])
        self.kinds = np.ascontiguousarray(kind[valid])
        self.stiffness_scale = _per_point(stiffness_scale, count, "stiffness scale", self.warnings)
        self.damping_scale = _per_point(damping_scale, count, "damping scale", self.warnings)
        ends = self.rest_positions[self.springs]
        self.rest_lengths = np.linalg.norm(ends[:, 1] - ends[:, 0], axis=1)

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
