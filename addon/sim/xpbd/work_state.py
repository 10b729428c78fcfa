"""The order the constraint pass keeps the state in, so that big sets need no gather.

A colour group of a quad grid touches almost every point (``2g ~ N``), and so does a tether
slot. Gathering such a set, projecting it and writing it back costs a ``2g`` take and an
``N`` or ``2g`` write of complex128 items (a scatter costs about twice a take).
Instead, while a pass runs, the state is kept *permuted*: in the order of the big set being
solved (a group's first ends, then its second ends; a slot's tethered points), then the
points it does not touch. The set is then a contiguous block projected in place, and moving
on to the next set's order is one ``N``-item take through a precomputed index (a take cannot
write over its own source, so two buffers take turns; a set in the same order as the one
before needs none). The first take reads the solver's state, the last one writes it back in
its own order. Small groups (tails of the colouring, a few boundary springs) are solved by
gather and scatter in whatever order the state is in, and a slot's pins are gathered: their
indices are translated once, at build time. Every constraint sees exactly the values a
sequential loop would give it: the springs' result is the same, bit for bit, as gathering
and scattering each group in the natural order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import lcm

import numpy as np

from .constraint_pass import ConstraintGroup, GroupViews, project, solve_group
from .tethers import TetherSlot

# 2g / N from which a group is solved in place after a permuting take of N items rather
# than by a 2g gather and a 2g scatter (about three takes' worth an item)
IN_PLACE_MIN_FRACTION = 1.0 / 3.0


@dataclass
class _Step:
    """One set solved: in place on the head of the state (``ids`` None) after an optional
    ``reorder`` take, or by gathering ``ids``; a slot gathers its pins' ``anchors``."""

    group: ConstraintGroup | None
    views: GroupViews | None
    slot: TetherSlot | None
    reorder: np.ndarray | None
    ids: np.ndarray | None
    anchors: np.ndarray | None = None


class PassPlan:
    """How one pass over ``groups`` then ``slots`` (in this order) moves the state."""

    def __init__(
        self,
        groups: Sequence[ConstraintGroup],
        views: Sequence[GroupViews],
        point_count: int,
        slots: Sequence[TetherSlot] = (),
        shared: _Shared | None = None,
    ) -> None:
        self.n = point_count
        self.steps: list[_Step] = []
        # the current order is ``_first`` then ``_rest`` (ascending); None: the natural one
        self._first: np.ndarray | None = None
        self._rest: np.ndarray | None = None
        self._position: np.ndarray | None = None  # where each point is in it ...
        self._stale = False  # ... unless a shared move skipped updating it
        self._head: int = 0  # id of the set the current order starts with (0: natural)
        self._shared = shared if shared is not None else _Shared(point_count)
        for g, w in zip(groups, views, strict=True):
            if g.ends.size >= IN_PLACE_MIN_FRACTION * point_count:
                reorder = self._enter(g.ends)
                self.steps.append(_Step(g, w, None, reorder, None))
            else:
                self.steps.append(_Step(g, w, None, None, self._here(g.ends)))
        for slot in slots:
            reorder = self._enter(slot.points)
            self.steps.append(_Step(None, None, slot, reorder, None, self._here(slot.pins)))
        self.back = self._last_positions()  # natural order from the last one (None: never left)
        self._buffers = self._shared.buffers

    def forget_build(self) -> None:
        """Drop what only building needed (``back`` keeps the last order's positions)."""
        self._first = self._rest = self._position = None

    def _here(self, ids: np.ndarray) -> np.ndarray:
        """``ids`` translated into the current order (shared by plans in the same order)."""
        if self._first is None:
            return np.ascontiguousarray(ids, dtype=np.intp)
        key = (self._head, id(ids))
        here = self._shared.translated.get(key)
        if here is None:
            here = self._positions().take(ids).astype(np.intp, copy=False)
            self._shared.translated[key] = here
        return here

    def _last_positions(self) -> np.ndarray | None:
        """The positions of the last order, the same array as another plan's ending there."""
        if self._first is None:
            return None
        last = self._shared.last.get(self._head)
        if last is None:
            last = self._positions()
            self._shared.last[self._head] = last
        return last

    def _positions(self) -> np.ndarray:
        """Where each point is in the current order, brought up to date."""
        assert self._first is not None and self._rest is not None
        if self._position is None:
            self._position = np.empty(self.n, dtype=np.intp)
            self._stale = True
        if self._stale:
            identity, h = self._shared.identity, self._first.size
            self._position[self._first] = identity[:h]
            self._position[self._rest] = identity[h:]
            self._stale = False
        return self._position

    def _starts(self, head: np.ndarray) -> bool:
        """Whether the current order starts with ``head``."""
        if self._first is None or self._rest is None:
            return False
        h = self._first.size
        if head.size <= h:
            return _starts_with(self._first, head)
        return _starts_with(self._first, head[:h]) and _starts_with(self._rest, head[h:])

    def _enter(self, head: np.ndarray) -> np.ndarray | None:
        """Make ``head`` (distinct ids) the start of the order; the take that does it, or
        None when the order already starts so."""
        if self._starts(head):
            return None
        untouched = self._shared.untouched
        untouched.fill(True)
        untouched[head] = False
        rest = np.flatnonzero(untouched)
        key = (self._head, id(head))
        reorder = self._shared.orders.get(key)  # another plan made the same move: share it
        if reorder is None:
            if self._first is None:
                reorder = np.concatenate([head, rest]).astype(np.intp, copy=False)
            else:  # the old positions of the new order, gathered in its two parts
                position, h = self._positions(), head.size
                reorder = np.empty(self.n, dtype=np.intp)
                position.take(head, out=reorder[:h], mode="clip")
                position.take(rest, out=reorder[h:], mode="clip")
            self._shared.orders[key] = reorder
        self._first, self._rest = head, rest
        self._stale = True  # the positions follow when something needs them
        self._head = id(head)
        return reorder

    def run(self, points: np.ndarray) -> None:
        """One Gauss-Seidel pass over ``points`` (``(N,)`` complex128), in place."""
        current = points
        turn = 0
        for step in self.steps:
            group, slot = step.group, step.slot
            if step.ids is not None and group is not None and step.views is not None:
                solve_group(current, group, step.views, step.ids)
                continue
            if step.reorder is not None:
                target = self._buffers[turn]
                turn ^= 1
                current.take(step.reorder, out=target, mode="clip")
                current = target
            if group is not None and step.views is not None:
                project(current[: group.ends.size], group, step.views)
            elif slot is not None and step.anchors is not None:
                anchors = current.take(step.anchors, out=slot.anchors, mode="clip")
                slot.project(current[: slot.points.size], anchors)
        if self.back is not None:
            current.take(self.back, out=points, mode="clip")


def pass_plans(
    groups: Sequence[ConstraintGroup],
    views: Sequence[GroupViews],
    point_count: int,
    slots: Sequence[TetherSlot] = (),
) -> list[PassPlan]:
    """One plan per substep residue: groups with ``period`` p run when ``index % p == phase``;
    tether slots close every pass."""
    cycle = lcm(*(g.period for g in groups)) if groups else 1
    shared = _Shared(point_count)
    plans = []
    for residue in range(cycle):
        chosen = [i for i, g in enumerate(groups) if residue % g.period == g.phase]
        chosen_groups = [groups[i] for i in chosen]
        chosen_views = [views[i] for i in chosen]
        plans.append(PassPlan(chosen_groups, chosen_views, point_count, slots, shared))
    shared.orders.clear()  # only needed while building
    shared.translated.clear()
    shared.last.clear()
    shared.untouched = shared.identity = np.empty(0, dtype=np.intp)
    for plan in plans:
        plan.forget_build()
    return plans


def _starts_with(order: np.ndarray, head: np.ndarray) -> bool:
    """``order[: head.size] == head``, a few items compared before all of them."""
    if head.size > order.size:
        return False
    probe = min(head.size, 64)
    if not np.array_equal(order[:probe], head[:probe]):
        return False
    return bool(np.array_equal(order[: head.size], head))


class _Shared:
    """What the plans of one solver share: the two take buffers (plans run one at a time)
    and the moves already built, keyed by (the set the order came from, the set it enters),
    so a move both plans make is stored once (an order depends only on the set it starts
    with, so a plan following another's moves needs no positions of its own)."""

    def __init__(self, point_count: int) -> None:
        self.buffers = (
            np.zeros(point_count, np.complex128),
            np.zeros(point_count, np.complex128),
        )
        self.orders: dict[tuple[int, int], np.ndarray] = {}
        # ids translated into an order, keyed by (the set it starts with, the ids), and the
        # positions of the order a plan ends in, keyed by that set
        self.translated: dict[tuple[int, int], np.ndarray] = {}
        self.last: dict[int, np.ndarray] = {}
        self.untouched = np.empty(point_count, dtype=bool)  # work arrays of the build
        self.identity = np.arange(point_count, dtype=np.intp)
