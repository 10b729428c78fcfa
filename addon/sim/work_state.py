"""The order the constraint pass keeps the state in, so that big groups need no gather.

A colour group of a quad grid touches almost every point (``2g ~ N``). Gathering its ends,
projecting them and writing them back costs a ``2g`` take and an ``N`` or ``2g`` write
(complex128 items: a take ~0.8 ns an item, a scatter ~1.6 ns). Instead, while a pass runs the
state is kept *permuted*: in the order of the big group being solved, its first ends, then
its second ends, then the points it does not touch. Its ends are then a contiguous block
projected in place, and moving on to the next big group's order is one ``N``-item take
through a precomputed index (a take cannot write over its own source, so two buffers take
turns). The first take reads the solver's state, the last one writes it back in its own
order. Small groups (tails of the colouring, a few boundary springs) are solved by gather
and scatter in whatever order the state is in, their ends translated once, at build time.
Every constraint sees exactly the values a sequential loop would give it: the result is the
same, bit for bit, as gathering and scattering each group in the natural order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import lcm

import numpy as np

from .constraint_pass import ConstraintGroup, GroupViews, project, solve_group

# 2g / N from which a group is solved in place after a permuting take (N items taken, ~0.8 ns
# each) rather than by a 2g gather and a 2g scatter (~2.4 ns an item together)
IN_PLACE_MIN_FRACTION = 1.0 / 3.0


@dataclass
class _Step:
    group: GroupViews
    constraints: ConstraintGroup
    reorder: np.ndarray | None  # take the state through this, then project its head in place
    ends: np.ndarray  # small groups: the ends in the order the state is in at that point


class PassPlan:
    """How one pass over ``groups`` (in this order) moves the state between orders."""

    def __init__(
        self, groups: Sequence[ConstraintGroup], views: Sequence[GroupViews], point_count: int
    ) -> None:
        n = point_count
        self.steps: list[_Step] = []
        position: np.ndarray | None = None  # where each point is in the current order
        for g, w in zip(groups, views, strict=True):
            if g.ends.size >= IN_PLACE_MIN_FRACTION * n:
                order = _group_order(g.ends, n)
                reorder = order if position is None else position[order]
                position = np.empty(n, dtype=np.intp)
                position[order] = np.arange(n, dtype=np.intp)
                self.steps.append(_Step(w, g, reorder.astype(np.intp), g.ends))
            else:
                ends = g.ends if position is None else position[g.ends]
                self.steps.append(_Step(w, g, None, np.ascontiguousarray(ends, dtype=np.intp)))
        self.back = position  # natural order from the last one (None: never left it)
        self._buffers = (np.zeros(n, np.complex128), np.zeros(n, np.complex128))

    def run(self, points: np.ndarray) -> None:
        """One Gauss-Seidel pass over ``points`` (``(N,)`` complex128), in place."""
        current = points
        turn = 0
        for step in self.steps:
            if step.reorder is None:
                solve_group(current, step.constraints, step.group, step.ends)
                continue
            target = self._buffers[turn]
            turn ^= 1
            np.take(current, step.reorder, out=target, mode="clip")
            current = target
            project(current[: step.ends.size], step.constraints, step.group)
        if self.back is not None:
            np.take(current, self.back, out=points, mode="clip")


def _group_order(ends: np.ndarray, n: int) -> np.ndarray:
    """The group's ends (first ends, then second ends), then every other point."""
    untouched = np.ones(n, dtype=bool)
    untouched[ends] = False
    return np.concatenate([ends, np.flatnonzero(untouched)])


def pass_plans(
    groups: Sequence[ConstraintGroup], views: Sequence[GroupViews], point_count: int
) -> list[PassPlan]:
    """One plan per substep residue: groups with ``period`` p run when ``index % p == phase``."""
    cycle = lcm(*(g.period for g in groups)) if groups else 1
    plans = []
    for residue in range(cycle):
        chosen = [i for i, g in enumerate(groups) if residue % g.period == g.phase]
        plans.append(PassPlan([groups[i] for i in chosen], [views[i] for i in chosen], point_count))
    return plans
