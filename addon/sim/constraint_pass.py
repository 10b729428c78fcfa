"""One colour group of distance constraints solved in place: the XPBD solver's inner loop.

A group's constraints share no point, so one gather, a vectorised projection and one scatter
(``solve_group``), or the projection alone on a block the pass keeps contiguous (``project``,
see ``work_state``), solve it exactly as a sequential loop would. The state is ``(N, 4)``
float32 rows (x, y, z, 0) seen as ``(N,)`` complex128, so a gather or scatter moves one
16-byte item per end.

Why the arithmetic is laid out as it is (numpy; figures in tests/bench/README.md): per-row
scalars applied to ``(g, 4)`` rows are the expensive part: broadcasting ``(g, 1)`` over a
length-4 inner axis costs many times a strided per-component product. So the
per-constraint factor scales the difference vector by three strided products (on ``g``
rows, not ``2g``), and the two ends' mass shares are applied as one contiguous product with
gains stored replicated over the 4 columns (``(2, g, 4)``, built once per step length).
numpy's NaN-aware ``maximum`` is slower than a plain pass, so a limiter's
``max(factor, 0)`` is ``factor + |factor|`` with halved gains, and the squared length gets
``+ tiny`` rather than ``max(tiny)`` (coincident ends give a zero correction, not NaN).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np

TINY_LENGTH_SQUARED = np.float32(1e-18)
ONE = np.float32(1.0)


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
    # filled by ``prepare``: mass shares replicated over the 4 columns, (+w_a, -w_b) / denom
    gain4: np.ndarray = field(default_factory=lambda: np.empty((2, 0, 4), np.float32))
    soft_share: np.ndarray | None = None  # LIMITED_SPRING: soft gain / gain4 per constraint
    hard_share: np.ndarray | None = None  # LIMITED_SPRING: half the hard gain / gain4
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
        """Gains for a substep of ``dt`` (``period`` x ``dt`` is this group's own step)."""
        span = dt * self.period
        inv_a, inv_b = self.inverse_masses()
        soft = _denominator(inv_a, inv_b, self.stiffness, span)
        if self.hard_stiffness is None:
            halved = 2.0 if self.mode == Mode.LIMITER else 1.0  # see solve_group
            self.gain4 = _replicated_gains(inv_a, inv_b, soft * halved)
            return
        hard = _denominator(inv_a, inv_b, self.hard_stiffness, span)
        reference = np.minimum(soft, hard)  # the larger gain carries the replicated factor
        self.gain4 = _replicated_gains(inv_a, inv_b, reference)
        self.soft_share = _share(reference, soft)
        self.hard_share = _share(reference, hard) * np.float32(0.5)  # halved: see solve_group


def _denominator(
    inv_a: np.ndarray, inv_b: np.ndarray, stiffness: np.ndarray, dt: float
) -> np.ndarray:
    """``w_a + w_b + compliance / dt^2`` (infinite for a zero stiffness)."""
    with np.errstate(divide="ignore", over="ignore"):
        compliance = np.where(stiffness > 0, 1.0 / (stiffness * dt * dt), np.inf)
    return inv_a + inv_b + compliance


def _replicated_gains(inv_a: np.ndarray, inv_b: np.ndarray, denom: np.ndarray) -> np.ndarray:
    gains = np.stack([inv_a / denom, -inv_b / denom]).astype(np.float32)
    gains[~np.isfinite(gains)] = 0.0
    return np.ascontiguousarray(np.repeat(gains[:, :, None], 4, axis=2))


def _share(reference: np.ndarray, denom: np.ndarray) -> np.ndarray:
    """``gain / reference gain`` = ``reference denominator / denom``, 0 where undefined."""
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(np.isfinite(reference), reference / denom, 0.0)
    return np.nan_to_num(share, nan=0.0, posinf=0.0).astype(np.float32)


class PassBuffers:
    """Work arrays sized for the largest group, sliced once per group (``views``)."""

    def __init__(self, largest: int) -> None:
        self.gathered = np.empty(2 * largest, dtype=np.complex128)
        self.delta = np.empty((largest, 4), dtype=np.float32)
        self.square = np.empty((largest, 4), dtype=np.float32)
        self.length = np.empty(largest, dtype=np.float32)
        self.factor = np.empty(largest, dtype=np.float32)
        self.hard = np.empty(largest, dtype=np.float32)
        self.step = np.empty((2, largest, 4), dtype=np.float32)

    def views(self, size: int) -> GroupViews:
        return GroupViews(
            gathered=self.gathered[: 2 * size],
            delta=self.delta[:size],
            square=self.square[:size],
            length=self.length[:size],
            factor=self.factor[:size],
            hard=self.hard[:size],
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
    factor = w.factor  # the fraction of the difference vector to close: 1 - target / length
    np.divide(g.rest, length, out=factor)
    np.subtract(ONE, factor, out=factor)
    if g.mode == Mode.LIMITER:  # max(factor, 0) doubled: the gains are halved for it
        factor += np.abs(factor, out=length)
    elif g.mode == Mode.LIMITED_SPRING:
        _limited_factor(g, length, factor, w.hard)
    for axis in range(3):
        column = delta[:, axis]
        np.multiply(column, factor, out=column)
    ends += np.multiply(g.gain4, delta, out=w.step)


def _limited_factor(
    g: ConstraintGroup, length: np.ndarray, factor: np.ndarray, hard: np.ndarray
) -> None:
    """A bend spring and a limiter on the same pair, both projected from the same start.

    Soft factor scaled by its share, plus ``max(1 - limit / length, 0)`` scaled by the hard
    share (stored halved, for ``x + |x|``). Beyond the limit the hard part closes nearly all
    of the excess; the soft part adds its ~2% toward the rest length. Branch-free: a masked
    update of the stretched few costs more numpy calls than these full-length products.
    ``length`` is used as scratch.
    """
    if g.limit is None or g.soft_share is None or g.hard_share is None:
        return
    factor *= g.soft_share
    np.divide(g.limit, length, out=hard)
    np.subtract(ONE, hard, out=hard)
    hard += np.abs(hard, out=length)
    hard *= g.hard_share
    factor += hard
