"""XPBD with small steps: the default solver, stable at any stiffness.

Per substep: external forces into velocities, predict positions, one Gauss-Seidel pass over
the constraints colour group by colour group, tethers, collisions, velocities from the
positions moved. The pass runs the long-range stretch limiters first (longest first, see
``limiters.py``), then bend, shear and structural springs, so the springs that define the
cloth's size have the last word. With one pass per substep the XPBD multiplier starts at
zero each time, so a spring's correction is ``-C / (w1 + w2 + compliance / dt^2)`` along its
direction, and the per-spring factors ``w / (w1 + w2 + compliance / dt^2)`` are precomputed
per substep length.

A bend spring is soft when it is shorter than the straight chain it spans (bending) and as
stiff as the structural springs beyond that chain's length (stretching), so the same pass
that bends the cloth also limits its stretch over two springs at no extra gather.

Speed (numpy): the state is ``(N, 4)`` float32 (x, y, z, 0), viewed as one complex128 per
point, so rows move as one 16-byte item; no point repeats inside a group, so no scatter-add
is needed. During the pass the state is kept in the order of the big group (or tether slot)
being solved (``work_state.py``); one group's projection is ``constraint_pass.project``.
Which constraints there are and in which groups is built by ``build.py``; work buffers
are preallocated. Where the time goes: tests/bench/README.md.
"""

from __future__ import annotations

import numpy as np

from ..collide.colliders import Collider, Scratch, resolve_positions
from ..collide.two_way import TwoWay, cloth_triangles
from ..model import ClothModel
from ..settings import SimSettings
from ..wind import face_wind_for
from .build import (
    Report,
    apply_stiffness,
    build_groups,
    build_tether_slots,
    topology_key,
)
from .constraint_pass import ConstraintGroup, GroupViews, PassBuffers
from .tethers import TetherSlot
from .work_state import pass_plans


def as_complex(points: np.ndarray) -> np.ndarray:
    """An (N, 4) float32 C-contiguous array seen as (N,) complex128 (one item per point)."""
    return points.view(np.complex128).reshape(-1)


class XpbdSolver:
    """Steps an ``(N, 4)`` float32 state in place (see ``make_state``)."""

    dtype = np.float32

    def __init__(
        self, model: ClothModel, settings: SimSettings, report: Report | None = None
    ) -> None:
        """``report`` (optional) is told each of ``build.BUILD_STAGES`` as it starts."""
        self.model = model
        self.settings = settings
        inv_mass = model.inverse_masses
        # each group's sources (which springs or limiters): new stiffness values are set by them
        groups, self.sources = build_groups(model, settings, inv_mass, report)
        apply_stiffness(groups, self.sources, model, settings)
        if report is not None:
            report("tethers")
        tethers = build_tether_slots(model, settings)
        if report is not None:
            report("pass plans")
        self._setup(inv_mass, groups, tethers)
        self.two_way = TwoWay(
            cloth_triangles(model.face_sizes, model.face_corners), model.rest_positions, inv_mass
        )
        self.notes: list[str] = []
        self.face_wind = face_wind_for(model, settings, self.notes)

    def _setup(
        self, inv_mass: np.ndarray, groups: list[ConstraintGroup], tethers: list[TetherSlot]
    ) -> None:
        """Pass plans and work buffers for ``groups`` and ``tethers`` over ``N`` points."""
        n = inv_mass.size
        self.n = n
        self.inv_mass = inv_mass
        self.movable = inv_mass > 0
        self.pinned_ids = np.flatnonzero(~self.movable)
        self.groups = groups
        self.tethers = tethers
        largest = max((g.size for g in groups), default=0)
        self._buffers = PassBuffers(largest)
        self._views: list[GroupViews] = [self._buffers.views(g.size) for g in groups]
        self._plans = pass_plans(groups, self._views, n, tethers)
        self._prev = np.zeros((n, 4), dtype=np.float32)
        self._moved = np.zeros((n, 4), dtype=np.float32)
        self._dt = -1.0
        self._accel = np.zeros((n, 4), dtype=np.float32)
        # replicated over the 4 columns: a (N, 1) factor broadcast over rows of 4 costs more
        self._keep = np.ones((n, 4), dtype=np.float32)
        self._scratch = Scratch(n, np.float32)

    @staticmethod
    def make_state(points: np.ndarray) -> np.ndarray:
        """Storage ``(N, 4)`` float32 for ``points`` (N, 3)."""
        storage = np.zeros((points.shape[0], 4), dtype=np.float32)
        storage[:, :3] = points
        return storage

    def substeps_for(self, step: float) -> int:
        """Substeps per frame: the setting (XPBD has no stability bound to follow)."""
        del step
        return self.settings.substeps

    def update_settings(self, settings: SimSettings) -> bool:
        """Take new values for the same topology (see ``build.topology_key``): the
        groups' stiffness, forces and damping are recomputed, nothing is recoloured. False
        (and nothing changed) when the new settings need a new build."""
        if topology_key(settings) != topology_key(self.settings):
            return False
        self.settings = settings
        apply_stiffness(self.groups, self.sources, self.model, settings)
        self.notes = []
        self.face_wind = face_wind_for(self.model, settings, self.notes)
        self._dt = -1.0  # gains, forces and damping follow at the next substep
        return True

    # stepping ----------------------------------------------------------------------------

    def _prepare(self, dt: float) -> None:
        """Per-substep-length factors: spring gains, external acceleration, velocity decay."""
        if dt == self._dt:
            return
        self._dt = dt
        for g in self.groups:
            g.prepare(dt)
        moved, keep = self.point_terms(dt)
        self._accel[:, :3] = moved
        self._keep[:] = keep[:, None]

    def point_terms(self, dt: float) -> tuple[np.ndarray, np.ndarray]:
        """Per point for a substep of ``dt``: the velocity gained from gravity and uniform
        wind ``(N, 3)``, and the fraction of velocity kept after damping and drag ``(N,)``
        (0 for pinned points), both float64."""
        s = self.settings
        free = self.movable
        wind = np.zeros(3) if self.face_wind is not None else s.wind
        accel = s.gravity[None, :] * free[:, None] + np.outer(self.inv_mass, wind)
        damping = s.damping * self.model.damping_scale * self.inv_mass
        keep = np.exp(-s.drag * dt) / (1.0 + damping * dt)
        return accel * dt, np.where(free, keep, 0.0)

    def push_face_wind(self, pos: np.ndarray, vel: np.ndarray, dt: float) -> None:
        """The face wind's velocity change over ``dt`` (nothing for the uniform model)."""
        if self.face_wind is not None and np.any(self.settings.wind):
            push = self.face_wind.forces(pos, self.settings.wind)
            vel[:, :3] += (push * (self.inv_mass * dt)[:, None]).astype(np.float32)

    def collide(self, pos: np.ndarray, prev: np.ndarray, colliders: tuple[Collider, ...]) -> None:
        """Push the cloth's triangles off surface colliders' vertices (``two_way.py``),
        then the free points out of ``colliders``, with friction."""
        if colliders:
            s = self.settings
            if self.two_way.active:
                self.two_way.resolve(colliders, pos, prev, s.collision_margin, s.friction)
            resolve_positions(
                colliders,
                pos,
                prev,
                self.movable,
                s.collision_margin,
                s.friction,
                self._scratch,
            )

    def substep(
        self,
        pos: np.ndarray,
        vel: np.ndarray,
        dt: float,
        pin_targets: np.ndarray | None,
        colliders: tuple[Collider, ...],
        index: int = 0,
    ) -> None:
        """Advance ``pos``/``vel`` (N, 4) by ``dt``; ``pin_targets`` (P, 3) for pinned points.

        ``index`` counts the substeps of the frame: constraint sets solved every other substep
        pick their turn from it.
        """
        self._prepare(dt)
        if pin_targets is not None and self.pinned_ids.size:
            pos[self.pinned_ids, :3] = pin_targets
        prev = self._prev
        np.copyto(prev, pos)
        vel += self._accel
        self.push_face_wind(pos, vel, dt)
        vel *= self._keep
        np.multiply(vel, np.float32(dt), out=self._moved)
        pos += self._moved
        self._solve_constraints(as_complex(pos), index)
        self.collide(pos, prev, colliders)
        np.subtract(pos, prev, out=vel)
        vel *= np.float32(1.0 / dt)

    def _solve_constraints(self, points: np.ndarray, index: int = 0) -> None:
        """Springs, limiters, then tethers: one pass, in the plan of this substep's turn."""
        self._plans[index % len(self._plans)].run(points)
