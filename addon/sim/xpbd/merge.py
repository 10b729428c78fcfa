"""Several XPBD solvers' points and constraints in one solver: one pass for many objects.

The objects' points are laid end to end (object ``i`` at rows ``offsets[i]`` on). Colour
group ``c`` of pass stage ``s`` of every object joins one merged group: the objects share no
point, so the merged group still has no point twice, and each object's groups keep their
order, so every constraint sees exactly the values it sees when its object is solved alone.
Tether slots merge the same way. Per-point terms (gravity, wind, damping, drag), face wind
and colliders stay per object: ``point_terms`` concatenates the objects' own, the face wind
is one over every blown object's faces with each object's wind on its own faces, and
contacts are applied to each object's rows with its own settings.

A collider is skipped for a substep when the box of every point's path over it lies beyond
the box it reaches over the frame (its ``reach``: a sphere's, or a surface's at both its
poses, grown by the reach): no point can meet it, so skipping changes nothing, and a
surface's candidate pairs stay valid, as they are kept by where their points were found.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..collide.colliders import Collider, resolve_positions
from ..collide.two_way import TwoWay
from ..wind import FaceWind
from .constraint_pass import ConstraintGroup
from .solver import XpbdSolver
from .tethers import TetherSlot, share_work


@dataclass
class ContactSet:
    """Colliders for the free points flagged in ``movable`` ``(N,)``, with the margin and
    friction of the objects they belong to, and per collider the box ``(2, 3)`` beyond
    which it does not reach this frame (None: anywhere; ``begin_frame`` sets them)."""

    colliders: tuple[Collider, ...]
    movable: np.ndarray
    margin: float
    friction: float
    reach: list[np.ndarray | None] = field(default_factory=list)

    def begin_frame(self) -> None:
        """The colliders' boxes for the frame about to be stepped (they have their poses)."""
        self.reach = [reach_box((c,), self.margin) for c in self.colliders]

    def near(self, points: np.ndarray | None) -> tuple[Collider, ...]:
        """The colliders whose box meets ``points`` (a ``(2, 3)`` box; None: all)."""
        if points is None or all(box is None for box in self.reach):
            return self.colliders
        return tuple(
            c
            for c, box in zip(self.colliders, self.reach, strict=True)
            if box is None or not apart(points, box)
        )


# float32 positions against float64 collider coordinates: a box edge is trusted to this much
BOX_TOLERANCE = 1e-4
BOX_RELATIVE_TOLERANCE = 1e-5


def reach_box(colliders: Sequence[Collider], margin: float) -> np.ndarray | None:
    """``(2, 3)`` lower and upper corner of where ``colliders`` can push a point this frame
    (each one's ``reach``), or None when one of them may reach anywhere (a plane)."""
    lows, highs = [], []
    margin = max(float(margin), 0.0)
    for collider in colliders:
        reach = collider.reach(margin)
        if reach is None:
            return None
        lows.append(reach[0])
        highs.append(reach[1])
    if not lows:
        return None
    box = np.array([np.min(lows, axis=0), np.max(highs, axis=0)], dtype=np.float64)
    slack = BOX_TOLERANCE + BOX_RELATIVE_TOLERANCE * float(np.abs(box).max())
    box[0] -= slack
    box[1] += slack
    return box if np.isfinite(box).all() else None


def points_box(pos: np.ndarray, prev: np.ndarray, work: np.ndarray | None = None) -> np.ndarray:
    """``(2, 3)`` box of the ``(N, 4)`` rows of ``pos`` and ``prev`` (a NaN propagates);
    ``work``: an ``(N, 4)`` buffer for the two's row-wise extremes.

    Reduced over rows of 64 points: numpy reduces the 4-wide rows of ``(N, 4)`` along axis 0
    some 20x slower."""
    if work is None or work.shape != pos.shape or work.dtype != pos.dtype:
        work = np.empty_like(pos)
    low = _row_extreme(np.minimum(pos, prev, out=work), np.minimum)
    high = _row_extreme(np.maximum(pos, prev, out=work), np.maximum)
    return np.array([low[:3], high[:3]], dtype=np.float64)


def _row_extreme(rows: np.ndarray, op: np.ufunc) -> np.ndarray:
    n = len(rows)
    head = n - n % 64
    parts = []
    if head:
        parts.append(op.reduce(rows[:head].reshape(-1, 256), axis=0).reshape(64, 4))
    if head < n:
        parts.append(rows[head:])
    return op.reduce(np.concatenate(parts) if len(parts) > 1 else parts[0], axis=0)


def apart(points: np.ndarray, reach: np.ndarray) -> bool:
    """Whether two ``(2, 3)`` boxes are separated along some axis (False with a NaN)."""
    return bool(np.any(points[0] > reach[1]) or np.any(points[1] < reach[0]))


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
            for group, source in zip(solver.groups, solver.sources, strict=True):
                by_place.setdefault(source.place, []).append((group, int(off)))
        groups = [merge_group(by_place[place]) for place in sorted(by_place)]
        inv_mass = np.concatenate([s.inv_mass for s in self.members])
        self.sources = []
        self._setup(inv_mass, groups, self._merged_tethers())
        self.notes = []
        self.face_wind = None
        self._face_winds = self._merged_face_wind()
        self.contact_sets: list[ContactSet] = []
        self.two_way = TwoWay(
            np.concatenate(
                [
                    m.two_way.triangles + off
                    for m, off in zip(self.members, self.offsets[:-1], strict=True)
                ]
            ),
            np.concatenate([m.model.rest_positions for m in self.members]),
            inv_mass,
        )

    def _merged_face_wind(self) -> tuple[FaceWind, np.ndarray] | None:
        """One face wind over the faces of every member blown by one, with each member's
        wind on its own faces ``(F, 3)`` (a member without one gets no push)."""
        blown = [
            (m, int(off))
            for m, off in zip(self.members, self.offsets, strict=False)
            if m.face_wind is not None and np.any(m.settings.wind)
        ]
        if not blown:
            return None
        sizes = np.concatenate([m.model.face_sizes for m, _ in blown])
        corners = np.concatenate([m.model.face_corners + off for m, off in blown])
        wind = FaceWind(sizes, corners, self.n)
        counts = [m.face_wind.face_count for m, _ in blown]  # type: ignore[union-attr]
        per_face = np.repeat(np.array([m.settings.wind for m, _ in blown]), counts, axis=0)
        return wind, per_face.astype(np.float64)

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
        """Every blown member's face wind in one pass (each point's push sums the same
        faces in the same order as its member's own)."""
        if self._face_winds is not None:
            wind, per_face = self._face_winds
            push = wind.forces(pos, per_face)
            vel[:, :3] += (push * (self.inv_mass * dt)[:, None]).astype(np.float32)

    def collide(self, pos: np.ndarray, prev: np.ndarray, colliders: tuple[Collider, ...]) -> None:
        del colliders  # the members' own, in ``contact_sets``
        box = None
        if any(b is not None for contact in self.contact_sets for b in contact.reach):
            box = points_box(pos, prev, self._scratch.rows)
        for contact in self.contact_sets:
            near = contact.near(box)
            if not near:
                continue  # no point can reach them this substep
            if self.two_way.active:  # each set's own triangles, its candidates kept apart
                self.two_way.resolve(
                    near,
                    pos,
                    prev,
                    contact.margin,
                    contact.friction,
                    contact.movable,
                    id(contact.movable),
                )
            resolve_positions(
                near,
                pos,
                prev,
                contact.movable,
                contact.margin,
                contact.friction,
                self._scratch,
            )
