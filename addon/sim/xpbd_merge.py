"""Several XPBD solvers' points and constraints in one solver: one pass for many objects.

The objects' points are laid end to end (object ``i`` at rows ``offsets[i]`` on). Colour
group ``c`` of pass stage ``s`` of every object joins one merged group: the objects share no
point, so the merged group still has no point twice, and each object's groups keep their
order, so every constraint sees exactly the values it sees when its object is solved alone.
Tether slots merge the same way. Per-point terms (gravity, wind, damping, drag), face wind
and colliders stay per object: ``point_terms`` concatenates the objects' own, face wind and
contacts are applied to each object's rows with its own settings.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .colliders import Collider, resolve_positions
from .constraint_pass import ConstraintGroup
from .solver_xpbd import XpbdSolver
from .tethers import TetherSlot, share_work


@dataclass
class ContactSet:
    """Colliders for the free points flagged in ``movable`` ``(N,)``, with the margin and
    friction of the objects they belong to."""

    colliders: tuple[Collider, ...]
    movable: np.ndarray
    margin: float
    friction: float


def _concat(parts: Sequence[np.ndarray | None]) -> np.ndarray | None:
    if any(p is None for p in parts):
        return None
    return np.concatenate([p for p in parts if p is not None])


def merge_group(parts: Sequence[tuple[ConstraintGroup, int]]) -> ConstraintGroup:
    """One group from the same-place groups of several objects (each with its row offset)."""
    first = parts[0][0]
    ends_a = [g.ends[: g.size] + off for g, off in parts]
    ends_b = [g.ends[g.size :] + off for g, off in parts]
    return ConstraintGroup(
        mode=first.mode,
        ends=np.concatenate(ends_a + ends_b),
        rest=np.concatenate([g.rest for g, _ in parts]),
        stiffness=np.concatenate([g.stiffness for g, _ in parts]),
        inv_a=np.concatenate([g.inverse_masses()[0] for g, _ in parts]),
        inv_b=np.concatenate([g.inverse_masses()[1] for g, _ in parts]),
        limit=_concat([g.limit for g, _ in parts]),
        hard_stiffness=_concat([g.hard_stiffness for g, _ in parts]),
        period=first.period,
        phase=first.phase,
    )


class MergedXpbd(XpbdSolver):
    """The solvers of several objects stepped as one (same substep length for all)."""

    def __init__(self, solvers: Sequence[XpbdSolver]) -> None:
        self.members = list(solvers)
        sizes = [s.n for s in self.members]
        self.offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self.settings = self.members[0].settings  # the shared substep settings
        self.model = self.members[0].model  # per-point terms come from each member's own
        by_place: dict[tuple[int, int], list[tuple[ConstraintGroup, int]]] = {}
        for solver, off in zip(self.members, self.offsets, strict=False):
            for group, source in zip(solver.groups, solver._sources, strict=True):
                by_place.setdefault(source.place, []).append((group, int(off)))
        groups = [merge_group(by_place[place]) for place in sorted(by_place)]
        inv_mass = np.concatenate([s.inv_mass for s in self.members])
        self._sources = []
        self._setup(inv_mass, groups, self._merged_tethers())
        self.notes = []
        self.face_wind = None
        self.contact_sets: list[ContactSet] = []

    def _merged_tethers(self) -> list[TetherSlot]:
        slots = max((len(s.tethers) for s in self.members), default=0)
        out = []
        for k in range(slots):
            have = [
                (s.tethers[k], int(off))
                for s, off in zip(self.members, self.offsets, strict=False)
                if k < len(s.tethers)
            ]
            out.append(
                TetherSlot(
                    np.concatenate([t.points + off for t, off in have]),
                    np.concatenate([t.pins + off for t, off in have]),
                    np.concatenate([t.limits for t, _ in have]),
                )
            )
        return share_work(out)

    def update_settings(self, settings: object) -> bool:
        """Never in place: a member's new settings make the World merge again."""
        del settings
        return False

    def rows(self, i: int) -> slice:
        """The rows of member ``i``."""
        return slice(int(self.offsets[i]), int(self.offsets[i + 1]))

    def point_terms(self, dt: float) -> tuple[np.ndarray, np.ndarray]:
        parts = [s.point_terms(dt) for s in self.members]
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])

    def push_face_wind(self, pos: np.ndarray, vel: np.ndarray, dt: float) -> None:
        for i, member in enumerate(self.members):
            if member.face_wind is not None:
                rows = self.rows(i)
                member.push_face_wind(pos[rows], vel[rows], dt)

    def collide(self, pos: np.ndarray, prev: np.ndarray, colliders: tuple[Collider, ...]) -> None:
        del colliders  # the members' own, in ``contact_sets``
        for contact in self.contact_sets:
            resolve_positions(
                contact.colliders,
                pos,
                prev,
                contact.movable,
                contact.margin,
                contact.friction,
                self._scratch,
            )
