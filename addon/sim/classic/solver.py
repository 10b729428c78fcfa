"""The book's explicit mass-spring model, kept faithful to its formulas (float64).

Per point: ``F = m * g + wind - damping * v`` (plus ``-drag * m * v``, zero in the book).
Per spring, with ``dir`` the unit vector from its first to its second point:
``f = (ks * (len - rest) + kd * dot(v2 - v1, dir)) * dir`` added to the first point and
subtracted from the second. Then ``v += F / m * dt; x += v * dt`` (velocity first), mass 0
pinned. Collisions push points out and adjust velocities (``colliders.resolve_velocities``).

Explicit integration needs ``dt < 2 / omega_max``: ``substeps_for`` raises the substep count
to what the bound of ``stability.py`` asks for the stiffest point, up to
``settings.max_substeps``; stiffer springs than that allows are softened (all ``ks`` and
``kd`` by one factor, reported in ``notes``), so the defaults and the book's constants run
stable. Face wind (``settings.wind_model == "FACE"``) replaces the uniform wind force.
"""

from __future__ import annotations

import numpy as np

from ..collide.colliders import Collider, resolve_velocities
from ..model import ClothModel
from ..settings import SimSettings
from ..wind import face_wind_for
from .stability import point_rates, stiffness_scale_for, substeps_needed


class ClassicSolver:
    """Steps an ``(N, 4)`` float64 state (x, y, z, 0 per row) in place."""

    dtype = np.float64

    @staticmethod
    def make_state(points: np.ndarray) -> np.ndarray:
        """Storage ``(N, 4)`` float64 for ``points`` (N, 3)."""
        storage = np.zeros((points.shape[0], 4), dtype=np.float64)
        storage[:, :3] = points
        return storage

    def __init__(self, model: ClothModel, settings: SimSettings) -> None:
        self.model = model
        self.settings = settings
        self.n = model.point_count
        self.inv_mass = model.inverse_masses
        self.movable = ~model.pinned
        self.pinned_ids = np.flatnonzero(model.pinned)
        per_kind = np.array([settings.stiffness, settings.shear_stiffness, settings.bend_stiffness])
        self.ks = per_kind[model.kinds] * model.spring_stiffness_scale()
        self.kd = np.full(self.ks.size, settings.spring_damping)
        self.a = model.springs[:, 0]
        self.b = model.springs[:, 1]
        self.rest = model.rest_lengths
        self.point_damping = settings.damping * model.damping_scale
        self.notes: list[str] = []
        self.face_wind = face_wind_for(model, settings, self.notes)
        self._rates = point_rates(
            model.springs, self.ks, self.kd, self.inv_mass, self.point_damping, settings.drag
        )
        nominal = settings.time_scale / settings.fps
        scale = stiffness_scale_for(nominal, settings.max_substeps, *self._rates)
        if scale < 1.0:
            self.ks *= scale
            self.kd *= scale
            stiff, damp, own = self._rates
            self._rates = (stiff * scale, damp * scale, own)
            self.notes.append(
                f"classic solver: springs softened to {scale:.3g} x their stiffness to stay "
                f"stable with {settings.max_substeps} substeps (raise max_substeps or use XPBD)"
            )

    def substeps_for(self, step: float) -> int:
        """Substeps for ``step`` seconds of simulated time: the setting, or more when the
        stability bound needs them (at most ``max_substeps``)."""
        needed = substeps_needed(step, *self._rates)
        return min(max(self.settings.substeps, needed), self.settings.max_substeps)

    def forces(self, pos: np.ndarray, vel: np.ndarray) -> np.ndarray:
        """Total force ``(N, 4)`` on every point, the book's way."""
        s = self.settings
        m = self.model.masses[:, None]
        gravity = np.append(s.gravity, 0.0)
        force = m * gravity - self.point_damping[:, None] * vel
        if self.face_wind is not None:
            if np.any(s.wind):
                force[:, :3] += self.face_wind.forces(pos, s.wind)
        else:
            force[:, :3] += s.wind
        if s.drag:
            force -= s.drag * m * vel
        if self.a.size:
            delta = pos[self.b] - pos[self.a]
            length = np.sqrt(np.einsum("ij,ij->i", delta, delta))
            direction = np.zeros_like(delta)
            np.divide(delta, length[:, None], out=direction, where=length[:, None] > 0)
            relative = vel[self.b] - vel[self.a]
            magnitude = self.ks * (length - self.rest) + self.kd * np.einsum(
                "ij,ij->i", relative, direction
            )
            spring = magnitude[:, None] * direction
            for axis in range(3):
                force[:, axis] += np.bincount(self.a, spring[:, axis], minlength=self.n)
                force[:, axis] -= np.bincount(self.b, spring[:, axis], minlength=self.n)
        return force

    def substep(
        self,
        pos: np.ndarray,
        vel: np.ndarray,
        dt: float,
        pin_targets: np.ndarray | None,
        colliders: tuple[Collider, ...],
        index: int = 0,
    ) -> None:
        """Advance by ``dt``; pinned points move to ``pin_targets`` (P, 3) at constant speed.

        ``index`` (the substep's number in the frame) is unused: every substep is alike.
        """
        del index
        pins = self.pinned_ids
        if pins.size:
            if pin_targets is not None:
                vel[pins, :3] = (pin_targets - pos[pins, :3]) / dt
            else:
                vel[pins] = 0.0
        force = self.forces(pos, vel)
        vel += force * (self.inv_mass * dt)[:, None]
        pos += vel * dt
        if pins.size and pin_targets is not None:
            pos[pins, :3] = pin_targets
        if colliders:
            s = self.settings
            resolve_velocities(colliders, pos, vel, self.movable, s.collision_margin, s.friction)
