"""One colour group of distance constraints solved in place: the XPBD solver's inner loop.

A group's constraints share no point, so one gather, a vectorised projection and one scatter
(``solve_group``), or the projection alone on a block the pass keeps contiguous (``project``,
see ``work_state``), solve it exactly as a sequential loop would. The state is ``(N, 4)``
float32 rows (x, y, z, 0) seen as ``(N,)`` complex128, so a gather or scatter moves one
16-byte item per end.

Why the arithmetic is laid out as it is (numpy; figures in tests/bench/README.md): per-row
scalars applied to ``(g, 4)`` rows are the expensive part: broadcasting ``(g, 1)`` over a
length-4 inner axis costs many times a strided per-component product. So one factor per
constraint, its mass share folded in (``c0 - c1 / length`` with ``c0 = w / denom``, ``c1 =
c0 * rest``), scales the difference vector by three strided products. Where both ends of
every constraint have the same coefficients (equal masses; an end that never moves, a pin,
is put back afterwards) the one scaled vector is added to the first ends and subtracted from
the second; otherwise each end's is built by the same steps from its own coefficients, so a
row gives the same bits on either path. numpy's NaN-aware ``maximum`` is slower than a plain
pass, so a limiter's ``max(factor, 0)`` is ``factor + |factor|`` with halved coefficients,
and the squared length gets ``+ tiny`` rather than ``max(tiny)`` (coincident ends give a
zero correction, not NaN).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

import numpy as np

TINY_LENGTH_SQUARED = np.float32(1e-18)


class Mode(IntEnum):
    SPRING = 0  # two-sided, pulls toward ``rest``
    LIMITER = 1  # one-sided, only pulls when longer than ``limit`` (stored as ``rest``)
    LIMITED_SPRING = 2  # soft toward ``rest``, hard beyond ``limit`` (bend springs)


@dataclass
class ConstraintGroup:
    """Constraints sharing no point, with their per-step factors and work views."""

    mode: Mode
    ends: np.ndarray  # (2g,) point ids: first ends, then second ends
    rest: np.ndarray  # (g,) float32 target length (the limit for a LIMITER)
    stiffness: np.ndarray  # (g,) float64 spring constants (soft ones for LIMITED_SPRING)
    inv_a: np.ndarray | None = None  # (g,) float64 inverse masses of the first ends ...
    inv_b: np.ndarray | None = None  # ... and of the second ends (None: from ``inv_mass``)
    limit: np.ndarray | None = None  # LIMITED_SPRING: (g,) float32 stretch limit
    hard_stiffness: np.ndarray | None = None  # LIMITED_SPRING: stiffness beyond the limit
    period: int = 1  # solved on every ``period``-th substep, with ``period`` x the step
    phase: int = 0  # ... on the substeps whose index % period == phase
    # filled by ``prepare``: per constraint ``(c0, c1)`` (LIMITED_SPRING: the soft pair, then
    # the hard pair, halved), float32 ``(k, g)`` when every row's ends have the same ...
    coef: np.ndarray | None = None
    coefs: np.ndarray | None = None  # ... else ``(2, k, g)``, the first ends' and the second's
    fixed: np.ndarray | None = None  # ends (of the 2g) without coefficients beside one with
    kept: np.ndarray | None = None  # their positions while the shared update moves them
    inv_mass: np.ndarray | None = None  # (N,) every point's inverse mass, shared by groups

    def inverse_masses(self) -> tuple[np.ndarray, np.ndarray]:
        """``(w_a, w_b)`` per constraint: stored, or gathered from ``inv_mass`` (which saves
        two float64 arrays per constraint on big meshes)."""
        if self.inv_a is not None and self.inv_b is not None:
            return self.inv_a, self.inv_b
        if self.inv_mass is None:
            raise ValueError("a constraint group needs inv_a/inv_b or inv_mass")
        g = self.size
        return self.inv_mass[self.ends[:g]], self.inv_mass[self.ends[g:]]

    @property
    def size(self) -> int:
        return int(self.rest.size)

    def prepare(self, dt: float) -> None:
        """Coefficients for a substep of ``dt`` (``period`` x ``dt`` is this group's step)."""
        span = dt * self.period
        inv_a, inv_b = self.inverse_masses()
        soft = _denominator(inv_a, inv_b, self.stiffness, span)
        scale = 0.5 if self.mode == Mode.LIMITER else 1.0  # halved: see _factor
        ends = [_coefficients(w, soft, scale, self.rest) for w in (inv_a, inv_b)]
        if self.hard_stiffness is not None and self.limit is not None:
            hard = _denominator(inv_a, inv_b, self.hard_stiffness, span)
            ends = [
                np.concatenate([c, _coefficients(w, hard, 0.5, self.limit)])
                for c, w in zip(ends, (inv_a, inv_b), strict=True)
            ]
        a, b = ends
        moves_a, moves_b = a.any(axis=0), b.any(axis=0)
        fixed = np.flatnonzero(np.concatenate([~moves_a & moves_b, ~moves_b & moves_a]))
        self.fixed = fixed if fixed.size else None
        self.kept = np.empty(fixed.size, dtype=np.complex128) if fixed.size else None
        if bool(np.all((a == b).all(axis=0) | ~moves_a | ~moves_b)):
            self.coef, self.coefs = np.where(moves_a, a, b), None
        else:
            self.coef, self.coefs = None, np.stack([a, b])


def _coefficients(
    inv: np.ndarray, denom: np.ndarray, scale: float, target: np.ndarray
) -> np.ndarray:
    """``(c0, c1)`` of one end: ``scale * w / denom`` and that times ``target`` (0 where
    undefined: a zero stiffness or a pinned end)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        c0 = (scale * inv / denom).astype(np.float32)
    c0[~np.isfinite(c0)] = 0.0
    return np.stack([c0, c0 * target.astype(np.float32)])


def _denominator(
    inv_a: np.ndarray, inv_b: np.ndarray, stiffness: np.ndarray, dt: float
) -> np.ndarray:
    """``w_a + w_b + compliance / dt^2`` (infinite for a zero stiffness)."""
    with np.errstate(divide="ignore", over="ignore"):
        compliance = np.where(stiffness > 0, 1.0 / (stiffness * dt * dt), np.inf)
    return inv_a + inv_b + compliance


class PassBuffers:
    """Work arrays sized for the largest group, sliced once per group (``views``)."""

    def __init__(self, largest: int) -> None:
        self.gathered = np.empty(2 * largest, dtype=np.complex128)
        self.delta = np.empty((largest, 4), dtype=np.float32)
        self.square = np.empty((largest, 4), dtype=np.float32)
        self.length = np.empty(largest, dtype=np.float32)
        self.factor = np.empty(largest, dtype=np.float32)
        self.hard = np.empty(largest, dtype=np.float32)
        self.spare = np.empty(largest, dtype=np.float32)
        self.step = np.zeros((2, largest, 4), dtype=np.float32)  # column 3 stays 0

    def views(self, size: int) -> GroupViews:
        return GroupViews(
            gathered=self.gathered[: 2 * size],
            delta=self.delta[:size],
            square=self.square[:size],
            length=self.length[:size],
            factor=self.factor[:size],
            hard=self.hard[:size],
            spare=self.spare[:size],
            step=self.step[:, :size],
        )


@dataclass
class GroupViews:
    gathered: np.ndarray
    delta: np.ndarray
    square: np.ndarray
    length: np.ndarray
    factor: np.ndarray
    hard: np.ndarray
    spare: np.ndarray
    step: np.ndarray


def solve_group(
    points: np.ndarray, g: ConstraintGroup, w: GroupViews, ends: np.ndarray | None = None
) -> None:
    """Project every constraint of ``g`` once; ``points`` is the ``(N,)`` complex128 view.

    ``ends`` replaces ``g.ends`` when the state is kept in another order (``work_state``).
    """
    ids = g.ends if ends is None else ends
    gathered = points.take(ids, out=w.gathered, mode="clip")
    project(gathered, g, w)
    points[ids] = gathered


def project(gathered: np.ndarray, g: ConstraintGroup, w: GroupViews) -> None:
    """Project the group's ``2g`` ends (complex128: first ends, then second ends) in place."""
    ends = gathered.view(np.float32).reshape(2, -1, 4)
    delta = np.subtract(ends[1], ends[0], out=w.delta)
    square = np.multiply(delta, delta, out=w.square)
    length = np.add(square[:, 0], square[:, 1], out=w.length)
    length += square[:, 2]
    length += TINY_LENGTH_SQUARED
    np.sqrt(length, out=length)
    kept = None
    if g.fixed is not None and g.kept is not None:
        kept = gathered.take(g.fixed, out=g.kept, mode="clip")
    if g.coef is not None:
        factor = _factor(g.mode, g.coef, length, w)
        for axis in range(3):
            column = delta[:, axis]
            np.multiply(column, factor, out=column)
        ends[0] += delta
        ends[1] -= delta
    elif g.coefs is not None:
        for end in range(2):
            factor = _factor(g.mode, g.coefs[end], length, w)
            step = w.step[end]
            for axis in range(3):
                np.multiply(delta[:, axis], factor, out=step[:, axis])
        ends[0] += w.step[0]
        ends[1] -= w.step[1]
    if kept is not None:
        gathered[g.fixed] = kept  # ends that never move, as the formula leaves them


def _factor(mode: Mode, coef: np.ndarray, length: np.ndarray, w: GroupViews) -> np.ndarray:
    """The fraction of the difference vector an end moves by: ``c0 - c1 / length`` (a
    limiter's and a bend spring's hard part: that plus its absolute value, with halved
    coefficients, i.e. twice ``max(., 0)``). A bend spring (LIMITED_SPRING) adds its soft
    part toward the rest length and its hard part beyond the limit, both from the same
    start: beyond the limit the hard part closes nearly all of the excess, the soft one adds
    its ~2 %; branch-free, as a masked update of the stretched few costs more numpy calls."""
    factor = np.divide(coef[1], length, out=w.factor)
    np.subtract(coef[0], factor, out=factor)
    if mode == Mode.LIMITER:
        factor += np.abs(factor, out=w.spare)
    elif mode == Mode.LIMITED_SPRING and coef.shape[0] == 4:  # the hard pair follows
        hard = np.divide(coef[3], length, out=w.hard)
        np.subtract(coef[2], hard, out=hard)
        hard += np.abs(hard, out=w.spare)
        factor += hard
    return factor
