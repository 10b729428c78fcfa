"""XPBD with small steps: the default solver, stable at any stiffness.

Per substep: external forces into velocities, predict positions, one Gauss-Seidel pass over
the springs colour group by colour group (bend, then shear, then structural, so the springs
that define the cloth's size have the last word), tethers, collisions, velocities from the
positions moved. With one pass per substep the XPBD multiplier starts at zero each time, so a
spring's correction is ``-C / (w1 + w2 + compliance / dt^2)`` along its direction, and the
per-spring factors ``w / (w1 + w2 + compliance / dt^2)`` are precomputed per substep length.

Speed (numpy): the state is ``(N, 4)`` float32 (x, y, z, 0), viewed as one complex128 per
point, so a colour group is gathered with one ``np.take`` and written back with one fancy
assignment moving 16 bytes per index (three times fewer index operations than a structure of
arrays; no point repeats inside a group, so no scatter-add is needed). Per-spring scaling is
done per component on strided views, which numpy does far faster than broadcasting over a
length-4 inner axis. Work buffers are preallocated and shared by the groups.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .colliders import Collider, resolve_positions
from .coloring import colour_groups
from .model import ClothModel, SpringKind
from .settings import SimSettings
from .tethers import Tethers, build_tethers

TINY_LENGTH_SQUARED = np.float32(1e-18)
SOLVE_ORDER = (SpringKind.BEND, SpringKind.SHEAR, SpringKind.STRUCTURAL)
ONES = np.ones(4, dtype=np.float32)


@dataclass
class _Group:
    ends: np.ndarray  # (2g,) point ids: first ends, then second ends
    rest: np.ndarray  # (g,) float32
    stiffness: np.ndarray  # (g,) float64 spring constants
    inv_a: np.ndarray  # (g,) float64
    inv_b: np.ndarray
    gain: np.ndarray  # (2, g) float32: +w_a / denom, -w_b / denom


@dataclass
class _TetherSlot:
    points: np.ndarray  # (T,) tethered point ids
    pins: np.ndarray  # (T,) their pins
    limits_squared: np.ndarray  # (T,) float32
    limits: np.ndarray  # (T,) float32


def as_complex(points: np.ndarray) -> np.ndarray:
    """An (N, 4) float32 C-contiguous array seen as (N,) complex128 (one item per point)."""
    return points.view(np.complex128).reshape(-1)


class XpbdSolver:
    """Steps an ``(N, 4)`` float32 state in place (see ``make_state``)."""

    dtype = np.float32

    def __init__(self, model: ClothModel, settings: SimSettings) -> None:
        self.model = model
        self.settings = settings
        n = model.point_count
        self.n = n
        self.inv_mass = model.inverse_masses
        self.movable = ~model.pinned
        self.pinned_ids = np.flatnonzero(model.pinned)
        self.groups = self._build_groups(model, settings)
        self.tethers = self._build_tether_slots(model, settings)
        largest = max((g.rest.size for g in self.groups), default=0)
        self._gathered = np.empty(2 * largest, dtype=np.complex128)
        self._delta = np.empty((largest, 4), dtype=np.float32)
        self._square = np.empty((largest, 4), dtype=np.float32)
        self._lengths = np.empty(largest, dtype=np.float32)
        self._gain = np.empty(2 * largest, dtype=np.float32)
        self._step = np.zeros(8 * largest, dtype=np.float32)  # 4th column stays 0
        self._prev = np.zeros((n, 4), dtype=np.float32)
        self._moved = np.zeros((n, 4), dtype=np.float32)
        self._dt = -1.0
        self._accel = np.zeros((n, 4), dtype=np.float32)
        self._keep = np.ones((n, 1), dtype=np.float32)

    @staticmethod
    def make_state(points: np.ndarray) -> np.ndarray:
        """Storage ``(N, 4)`` float32 for ``points`` (N, 3)."""
        storage = np.zeros((points.shape[0], 4), dtype=np.float32)
        storage[:, :3] = points
        return storage

    def _build_groups(self, model: ClothModel, settings: SimSettings) -> list[_Group]:
        per_kind = np.array([settings.stiffness, settings.shear_stiffness, settings.bend_stiffness])
        stiffness = per_kind[model.kinds] * model.spring_stiffness_scale()
        a, b = model.springs[:, 0], model.springs[:, 1]
        inv = self.inv_mass
        active = (stiffness > 0) & ((inv[a] + inv[b]) > 0)
        groups = []
        for kind in SOLVE_ORDER:
            ids = np.flatnonzero(active & (model.kinds == kind))
            for members in colour_groups(model.springs[ids], model.point_count):
                s = ids[members]
                groups.append(
                    _Group(
                        ends=np.concatenate([a[s], b[s]]),
                        rest=model.rest_lengths[s].astype(np.float32),
                        stiffness=stiffness[s],
                        inv_a=inv[a[s]],
                        inv_b=inv[b[s]],
                        gain=np.empty((2, s.size), dtype=np.float32),
                    )
                )
        return groups

    def _build_tether_slots(self, model: ClothModel, settings: SimSettings) -> list[_TetherSlot]:
        if not settings.tethers:
            return []
        graph = model.kinds != SpringKind.BEND
        tethers: Tethers = build_tethers(
            model.rest_positions,
            model.pinned,
            model.springs[graph],
            model.rest_lengths[graph],
            settings.tether_pins,
        )
        return [
            _TetherSlot(p, q, lim * lim, lim)
            for p, q, lim in zip(tethers.points, tethers.pins, tethers.lengths, strict=True)
        ]

    def _prepare(self, dt: float) -> None:
        """Per-substep-length factors: spring gains, external acceleration, velocity decay."""
        if dt == self._dt:
            return
        self._dt = dt
        for g in self.groups:
            denom = g.inv_a + g.inv_b + 1.0 / (g.stiffness * dt * dt)
            g.gain[0] = g.inv_a / denom
            g.gain[1] = -g.inv_b / denom
        s = self.settings
        free = self.movable
        accel = s.gravity[None, :] * free[:, None] + np.outer(self.inv_mass, s.wind)
        self._accel[:, :3] = accel * dt
        damping = s.damping * self.model.damping_scale * self.inv_mass
        keep = np.exp(-s.drag * dt) / (1.0 + damping * dt)
        self._keep[:, 0] = np.where(free, keep, 0.0)

    def substep(
        self,
        pos: np.ndarray,
        vel: np.ndarray,
        dt: float,
        pin_targets: np.ndarray | None,
        colliders: tuple[Collider, ...],
    ) -> None:
        """Advance ``pos``/``vel`` (N, 4) by ``dt``; ``pin_targets`` (P, 3) for pinned points."""
        self._prepare(dt)
        if pin_targets is not None and self.pinned_ids.size:
            pos[self.pinned_ids, :3] = pin_targets
        prev = self._prev
        np.copyto(prev, pos)
        vel += self._accel
        vel *= self._keep
        np.multiply(vel, np.float32(dt), out=self._moved)
        pos += self._moved
        self._solve_springs(as_complex(pos))
        self._solve_tethers(pos)
        if colliders:
            s = self.settings
            resolve_positions(colliders, pos, prev, self.movable, s.collision_margin, s.friction)
        np.subtract(pos, prev, out=vel)
        vel *= np.float32(1.0 / dt)

    def _solve_springs(self, points: np.ndarray) -> None:
        for g in self.groups:
            size = g.rest.size
            gathered = np.take(points, g.ends, out=self._gathered[: 2 * size], mode="clip")
            ends = gathered.view(np.float32).reshape(2, size, 4)
            delta = np.subtract(ends[1], ends[0], out=self._delta[:size])
            square = np.multiply(delta, delta, out=self._square[:size])
            length = np.matmul(square, ONES, out=self._lengths[:size])
            np.maximum(length, TINY_LENGTH_SQUARED, out=length)
            np.sqrt(length, out=length)
            np.divide(g.rest, length, out=length)
            np.subtract(np.float32(1.0), length, out=length)
            gain = np.multiply(g.gain, length, out=self._gain[: 2 * size].reshape(2, size))
            step = self._step[: 8 * size].reshape(2, size, 4)
            for axis in range(3):
                np.multiply(gain, delta[:, axis], out=step[:, :, axis])
            ends += step
            points[g.ends] = gathered

    def _solve_tethers(self, pos: np.ndarray) -> None:
        points = as_complex(pos)
        for t in self.tethers:
            p = np.take(points, t.points).view(np.float32).reshape(-1, 4)
            q = np.take(points, t.pins).view(np.float32).reshape(-1, 4)
            p -= q
            dist2 = np.matmul(np.square(p), ONES)
            over = np.flatnonzero(dist2 > t.limits_squared)
            if not over.size:
                continue
            scale = t.limits[over] / np.sqrt(dist2[over])
            pos[t.points[over]] = q[over] + p[over] * scale[:, None]
