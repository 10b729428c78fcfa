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
point, so rows move as one 16-byte item (a structure of arrays needs three times as many
index operations and measured slower here); no point repeats inside a group, so no
scatter-add is needed. During the pass the state is kept in the order of the big group (or
tether slot) being solved, so its ends are a contiguous block projected in place and one
take moves on to the next group's order (``work_state.py``); one group's projection is
``constraint_pass.project`` (why its arithmetic is laid out that way is written there).
Where the time goes at 10k points, 12 substeps (CPU per frame, loaded 2-core machine, total
~14.5 ms): springs, limiters and tethers ~11 ms (20 groups of ~5k springs, 12.5 of them and
2 tether slots a substep, ~45 us a group plus ~8 us for each take between orders),
collisions ~2.5 ms (a resting cloth has ~2,500 floor contacts a substep), the rest ~1 ms.
Work buffers are preallocated.
"""

from __future__ import annotations

import numpy as np

from .colliders import Collider, Scratch, resolve_positions
from .coloring import colour_groups
from .constraint_pass import ConstraintGroup, GroupViews, Mode, PassBuffers
from .limiters import limiter_levels
from .model import ClothModel, SpringKind
from .settings import SimSettings
from .tethers import TetherSlot, build_tethers
from .wind import face_wind_for
from .work_state import pass_plans

# Measured on the bench scene (see tests/bench/bench_solver.py): solving shear springs and
# the limiters over 4+ springs every other substep (with twice the step, so as stiff; limiter
# levels alternate, span 8 shares its substeps with shear) costs 18% less at 10k than solving
# span 4 every substep, stretch p99 4.7 -> 4.9%, end mean 0.69 -> 0.72%. Bend springs (with
# their span-2 limit) every other substep, on the span-4 limiters' turn: 20% less again at
# 10k, 9% at 40k, stretch p99 4.9 -> 4.7% (on shear's turn it was 6.0%). So odd substeps
# solve span 4 (16 ...), bend and structural; even ones span 8, shear and structural.
LONG_LIMITER_LEVEL = 1  # limiter levels from here on (span 4, 8 ...) run every other substep
# The stretch limiter setting counts levels for a cloth this many springs across; finer cloth
# gets one more level per doubling (measured: at 200 springs across, 3 levels gave p99
# stretch 8.9%, 4 levels 6.6%, at 4% more time; at 100 across a 4th level only cost time).
REFERENCE_SPRINGS_ACROSS = 100.0
MAX_LIMITER_LEVELS = 8


def as_complex(points: np.ndarray) -> np.ndarray:
    """An (N, 4) float32 C-contiguous array seen as (N,) complex128 (one item per point)."""
    return points.view(np.complex128).reshape(-1)


def _pair_keys(pairs: np.ndarray, n: int) -> np.ndarray:
    return np.minimum(pairs[:, 0], pairs[:, 1]) * n + np.maximum(pairs[:, 0], pairs[:, 1])


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
        largest = max((g.size for g in self.groups), default=0)
        self._buffers = PassBuffers(largest)
        self._views: list[GroupViews] = [self._buffers.views(g.size) for g in self.groups]
        self._plans = pass_plans(self.groups, self._views, n, self.tethers)
        self._prev = np.zeros((n, 4), dtype=np.float32)
        self._moved = np.zeros((n, 4), dtype=np.float32)
        self._dt = -1.0
        self._accel = np.zeros((n, 4), dtype=np.float32)
        # replicated over the 4 columns: a (N, 1) factor broadcast over rows of 4 costs 9x more
        self._keep = np.ones((n, 4), dtype=np.float32)
        self._scratch = Scratch(n, np.float32)
        self.notes: list[str] = []
        self.face_wind = face_wind_for(model, settings, self.notes)

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

    @property
    def constraint_count(self) -> int:
        """Springs and limiters solved per substep."""
        return sum(g.rest.size for g in self.groups)

    # building ----------------------------------------------------------------------------

    def _build_groups(self, model: ClothModel, settings: SimSettings) -> list[ConstraintGroup]:
        per_kind = np.array([settings.stiffness, settings.shear_stiffness, settings.bend_stiffness])
        scale = model.spring_stiffness_scale()
        stiffness = per_kind[model.kinds] * scale
        hard = settings.stiffness * scale
        n = model.point_count
        springs = model.springs
        inv = self.inv_mass
        movable = (inv[springs[:, 0]] + inv[springs[:, 1]]) > 0
        structural = model.kinds == SpringKind.STRUCTURAL
        levels = limiter_levels(
            springs[structural],
            model.rest_lengths[structural],
            model.rest_positions,
            _limiter_level_count(settings, model),
        )
        spring_keys = _pair_keys(springs, n)
        order = np.argsort(spring_keys, kind="stable")
        sorted_keys = spring_keys[order]
        bend = model.kinds == SpringKind.BEND
        bend_limit = np.full(springs.shape[0], np.nan)
        limiter_sets: list[tuple[np.ndarray, np.ndarray]] = []
        for level, (pairs, limits) in enumerate(levels):
            keys = _pair_keys(pairs, n)
            hit = np.zeros(keys.size, dtype=bool)
            if sorted_keys.size:
                found = np.searchsorted(sorted_keys, keys).clip(max=sorted_keys.size - 1)
                hit = sorted_keys[found] == keys
                if level == 0:  # two-spring chains that are bend springs: limit those
                    match = order[found[hit]]
                    on_bend = bend[match]
                    bend_limit[match[on_bend]] = limits[hit][on_bend]
            ends, ends_limits = pairs[~hit], limits[~hit]
            keep = (inv[ends[:, 0]] + inv[ends[:, 1]]) > 0
            limiter_sets.append((ends[keep], ends_limits[keep]))

        groups: list[ConstraintGroup] = []
        for level in reversed(range(len(limiter_sets))):
            ends, limits = limiter_sets[level]
            k = settings.stiffness * _pair_scale(model, ends)
            start = len(groups)
            self._add_groups(groups, Mode.LIMITER, ends, limits, k, n)
            if level >= LONG_LIMITER_LEVEL:
                _every_other(groups[start:], phase=level % 2)  # shear has phase 0
        for kind in (SpringKind.BEND, SpringKind.SHEAR, SpringKind.STRUCTURAL):
            wanted = (stiffness > 0) | np.isfinite(bend_limit)  # limits work without bending
            ids = np.flatnonzero(movable & wanted & (model.kinds == kind))
            if kind == SpringKind.BEND:
                limited = ids[np.isfinite(bend_limit[ids])]
                plain = ids[~np.isfinite(bend_limit[ids])]
                start = len(groups)
                self._add_groups(
                    groups,
                    Mode.LIMITED_SPRING,
                    springs[limited],
                    model.rest_lengths[limited],
                    stiffness[limited],
                    n,
                    bend_limit[limited],
                    hard[limited],
                )
                _every_other(groups[start:], phase=1)  # with the span-4 limiters
                ids = plain
            start = len(groups)
            self._add_groups(
                groups, Mode.SPRING, springs[ids], model.rest_lengths[ids], stiffness[ids], n
            )
            if kind == SpringKind.SHEAR:
                _every_other(groups[start:], phase=0)
        return groups

    def _add_groups(
        self,
        groups: list[ConstraintGroup],
        mode: Mode,
        pairs: np.ndarray,
        rest: np.ndarray,
        stiffness: np.ndarray,
        n: int,
        limit: np.ndarray | None = None,
        hard: np.ndarray | None = None,
    ) -> None:
        if not pairs.size:
            return
        inv = self.inv_mass
        for members in colour_groups(pairs, n):
            a, b = pairs[members, 0], pairs[members, 1]
            groups.append(
                ConstraintGroup(
                    mode=mode,
                    ends=np.concatenate([a, b]),
                    rest=rest[members].astype(np.float32),
                    stiffness=stiffness[members],
                    inv_a=inv[a],
                    inv_b=inv[b],
                    limit=None if limit is None else limit[members].astype(np.float32),
                    hard_stiffness=None if hard is None else hard[members],
                )
            )

    def _build_tether_slots(self, model: ClothModel, settings: SimSettings) -> list[TetherSlot]:
        if not settings.tethers:
            return []
        tethers = build_tethers(
            model.rest_positions,
            model.pinned,
            model.springs[model.kinds != SpringKind.BEND],
            k=settings.tether_pins,
        )
        return [
            TetherSlot(p, q, lim)
            for p, q, lim in zip(tethers.points, tethers.pins, tethers.lengths, strict=True)
        ]

    # stepping ----------------------------------------------------------------------------

    def _prepare(self, dt: float) -> None:
        """Per-substep-length factors: spring gains, external acceleration, velocity decay."""
        if dt == self._dt:
            return
        self._dt = dt
        for g in self.groups:
            g.prepare(dt)
        s = self.settings
        free = self.movable
        wind = np.zeros(3) if self.face_wind is not None else s.wind
        accel = s.gravity[None, :] * free[:, None] + np.outer(self.inv_mass, wind)
        self._accel[:, :3] = accel * dt
        damping = s.damping * self.model.damping_scale * self.inv_mass
        keep = np.exp(-s.drag * dt) / (1.0 + damping * dt)
        self._keep[:] = np.where(free, keep, 0.0)[:, None]

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
        if self.face_wind is not None and np.any(self.settings.wind):
            push = self.face_wind.forces(pos, self.settings.wind)
            vel[:, :3] += (push * (self.inv_mass * dt)[:, None]).astype(np.float32)
        vel *= self._keep
        np.multiply(vel, np.float32(dt), out=self._moved)
        pos += self._moved
        self._solve_constraints(as_complex(pos), index)
        if colliders:
            s = self.settings
            resolve_positions(
                colliders,
                pos,
                prev,
                self.movable,
                s.collision_margin,
                s.friction,
                self._scratch,
            )
        np.subtract(pos, prev, out=vel)
        vel *= np.float32(1.0 / dt)

    def _solve_constraints(self, points: np.ndarray, index: int = 0) -> None:
        """Springs, limiters, then tethers: one pass, in the plan of this substep's turn."""
        self._plans[index % len(self._plans)].run(points)


def _limiter_level_count(settings: SimSettings, model: ClothModel) -> int:
    """The setting's levels, plus one per doubling of the cloth's size in springs beyond
    ``REFERENCE_SPRINGS_ACROSS``, so the longest limiter spans as much of a fine cloth as of
    a coarse one. Cloth only: a soft body keeps its shape by the pull back, and must stay
    cheap."""
    levels = int(settings.stretch_limit_levels)
    if settings.kind != "CLOTH" or settings.stiffness <= 0 or levels <= 0:
        return 0
    structural = model.rest_lengths[model.kinds == SpringKind.STRUCTURAL]
    if not structural.size:
        return levels
    typical = float(np.median(structural))
    extent = float(np.ptp(model.rest_positions, axis=0).max())
    if typical <= 0.0 or not np.isfinite(extent / typical):
        return levels
    extra = round(np.log2(max(extent / typical, 1.0) / REFERENCE_SPRINGS_ACROSS))
    return min(levels + max(int(extra), 0), MAX_LIMITER_LEVELS)


def _every_other(groups: list[ConstraintGroup], phase: int) -> None:
    """Solve ``groups`` every second substep (with twice the step, so as stiff)."""
    for g in groups:
        g.period, g.phase = 2, phase


def _pair_scale(model: ClothModel, pairs: np.ndarray) -> np.ndarray:
    """The mean painted stiffness scale of each pair's two points."""
    s = model.stiffness_scale
    return 0.5 * (s[pairs[:, 0]] + s[pairs[:, 1]])
