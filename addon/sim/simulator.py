"""One simulated object over time: the state, pins that follow the mesh, and the safety net.

``step`` advances one frame: pinned points move at constant speed from where they are to
``pinned_targets`` over the substeps, the chosen solver runs each substep, a soft body is
pulled back to shape after each one, and the frame's result is checked. A bad result
(non-finite, too fast, torn) is never returned: the last good state comes back with zero
velocity and a warning. The model's rest shape is in the object's space and ``step`` is given
the object's matrix every frame; the state, pins, colliders and results are in world space.
Inside, the state is ``(N, 4)`` rows (x, y, z, 0): float32 for XPBD, float64 for the classic
solver.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .classic.solver import ClassicSolver
from .collide.colliders import Collider, begin_substep
from .guard import ExplosionGuard
from .model import ClothModel
from .rigid_carry import best_rigid_transform, carry, jump_too_far
from .self_collide.self_collision import self_collision_for
from .settings import SimSettings
from .soft_body import pull_toward, substep_fraction, transformed
from .xpbd.build import Report
from .xpbd.solver import XpbdSolver

MAX_WARNINGS = 50


class StepResult(NamedTuple):
    """One frame's outcome: positions ``(N, 3)`` float32 C-contiguous in world space (a new
    array) and what went wrong during the frame (recoveries, refused input), in order."""

    positions: np.ndarray
    warnings: list[str]


@dataclass
class FramePlan:
    """One frame's fixed inputs: simulated seconds, substeps, the pinned points' path
    ``(P, 3)`` from ``pin_start`` to ``pin_end`` (None: they stay), soft-body targets and
    pull weights ``(N, 4)`` (None for cloth)."""

    sim_dt: float
    substeps: int
    pin_start: np.ndarray | None
    pin_end: np.ndarray | None
    revert: np.ndarray | None
    weights: np.ndarray | None

    @property
    def sub_dt(self) -> float:
        return self.sim_dt / self.substeps

    def pins_at(self, k: int, dtype: type) -> np.ndarray | None:
        """Where the pinned points are after substep ``k`` (1-based), constant speed."""
        if self.pin_start is None or self.pin_end is None:
            return None
        t = k / self.substeps
        return (self.pin_start + (self.pin_end - self.pin_start) * t).astype(dtype)


def make_solver(
    model: ClothModel, settings: SimSettings, report: Report | None = None
) -> XpbdSolver | ClassicSolver:
    """The solver ``settings.solver`` names, built for ``model`` (``report``: told each
    build stage of the XPBD solver as it starts)."""
    if settings.solver == "CLASSIC":
        return ClassicSolver(model, settings)
    return XpbdSolver(model, settings, report)


class Simulator:
    """Steps a ``ClothModel`` with ``SimSettings``; see ``addon.sim`` for the contract."""

    def __init__(
        self,
        model: ClothModel,
        settings: SimSettings | None = None,
        report: Report | None = None,
        triangles: np.ndarray | None = None,
    ) -> None:
        """``report`` (optional, e.g. a progress bar's step) is told each build stage;
        ``triangles`` ``(T, 3)``: the cloth's own, for self-collision."""
        self.model = model
        self.settings, notes = (settings or SimSettings()).validated()
        self.warnings: list[str] = list(model.warnings) + notes
        self._triangles = triangles
        self._self_hits = self_collision_for(model, self.settings, triangles, self.warnings)
        self.solver: XpbdSolver | ClassicSolver = make_solver(model, self.settings, report)
        self.warnings += self.solver.notes
        self.dtype = self.solver.dtype
        self.guard = ExplosionGuard(model, self.settings.max_speed, self.settings.max_stretch)
        self.movable = ~model.pinned
        self.pinned_ids = np.flatnonzero(model.pinned)
        self.recoveries = 0
        self._fresh: list[str] = []  # this frame's warnings (``StepResult.warnings``)
        self.reset()

    @property
    def merges(self) -> bool:
        """Whether a ``World`` solves it in one merged pass with others (XPBD); a classic
        solver steps alone."""
        return isinstance(self.solver, XpbdSolver)

    @property
    def self_colliding(self) -> bool:
        """Whether it collides with itself (a ``World`` steps such an object on its own)."""
        return bool(self._self_hits)

    def update_settings(self, settings: SimSettings) -> None:
        """Use ``settings`` from the next step on, keeping the state. Values (stiffness,
        damping, gravity, wind ...) are swapped in place; only a change of what the
        constraints are (``xpbd/build.py``'s ``topology_key``) or of the solver builds a new one."""
        new, notes = settings.validated()
        self.warnings += notes
        old = self.settings
        reuse = isinstance(self.solver, XpbdSolver) and self.solver.update_settings(new)
        if not reuse:
            pos, vel = self.state()
            self.solver = make_solver(self.model, new)
            self.dtype = self.solver.dtype
            self._set(pos, vel)
        self.warnings += self.solver.notes
        if (new.max_speed, new.max_stretch) != (old.max_speed, old.max_stretch):
            self.guard = ExplosionGuard(self.model, new.max_speed, new.max_stretch)
        if (new.self_collision, new.self_distance, new.solver) != (
            old.self_collision,
            old.self_distance,
            old.solver,
        ):
            self._self_hits = self_collision_for(self.model, new, self._triangles, self.warnings)
        self.settings = new

    # state -----------------------------------------------------------------------------

    def reset(self, positions: np.ndarray | None = None) -> None:
        """Back to ``positions`` (world space; default: the rest shape where the model's
        matrix places it) at rest."""
        start = self.model.rest_world if positions is None else positions
        pos = self._points(start, "positions")
        if pos is None:
            pos = np.asarray(self.model.rest_world)
        self._set(pos, np.zeros_like(pos))

    def state(self) -> tuple[np.ndarray, np.ndarray]:
        """Copies of positions and velocities, each ``(N, 3)`` C-contiguous."""
        return np.ascontiguousarray(self.pos[:, :3]), np.ascontiguousarray(self.vel[:, :3])

    def set_state(self, positions: np.ndarray, velocities: np.ndarray) -> None:
        """Resume from a saved state (e.g. a cached frame); non-finite input is refused."""
        pos = self._points(positions, "positions")
        vel = self._points(velocities, "velocities")
        if pos is None or vel is None:
            return
        self._set(pos, vel)

    def positions(self) -> np.ndarray:
        """Current positions ``(N, 3)`` float32 C-contiguous (a copy)."""
        return np.ascontiguousarray(self.pos[:, :3], dtype=np.float32)

    # stepping ----------------------------------------------------------------------------

    def step(
        self,
        frame_dt: float | None = None,
        pinned_targets: np.ndarray | None = None,
        object_matrix: np.ndarray | None = None,
        colliders: Sequence[Collider] = (),
        shape_targets: np.ndarray | None = None,
    ) -> StepResult:
        """Advance one frame: positions ``(N, 3)`` float32 C-contiguous and the frame's
        warnings (see ``addon.sim`` for the arguments)."""
        plan = self.begin_frame(frame_dt, pinned_targets, object_matrix, shape_targets)
        if plan is None:
            return self.result()
        # self-collision last: a collider's push can lay two layers of a fold on its surface
        # together, and self-collision then keeps them from crossing there
        hits = tuple(colliders) + self._self_hits
        with np.errstate(all="ignore"):
            for k in range(1, plan.substeps + 1):
                begin_substep(hits, (k - 1) / plan.substeps, k / plan.substeps)
                pins = plan.pins_at(k, self.dtype)
                self.solver.substep(self.pos, self.vel, plan.sub_dt, pins, hits, k - 1)
                self.pull_to_shape(plan)
        self.finish_frame(plan)
        return self.result()

    def result(self) -> StepResult:
        """The positions now and the warnings since the frame began (taken: the next
        frame starts with none)."""
        fresh, self._fresh = self._fresh, []
        return StepResult(self.positions(), fresh)

    def frame_begins(self) -> None:
        """A frame starts: warnings from now on are this frame's."""
        self._fresh = []

    def begin_frame(
        self,
        frame_dt: float | None = None,
        pinned_targets: np.ndarray | None = None,
        object_matrix: np.ndarray | None = None,
        shape_targets: np.ndarray | None = None,
    ) -> FramePlan | None:
        """Everything fixed for one frame: substeps, pin path, soft-body targets (None: the
        frame step is unusable, warned). Pins that jump too far carry the cloth first."""
        self.frame_begins()
        s = self.settings
        dt = 1.0 / s.fps if frame_dt is None else float(frame_dt)
        if not np.isfinite(dt) or dt <= 0.0:
            self.warn(f"frame step {frame_dt!r} ignored")
            return None
        matrix = self._matrix(object_matrix)
        pin_end = self._pin_targets(pinned_targets, matrix)
        sim_dt = dt * s.time_scale  # simulated seconds this frame
        substeps = self.solver.substeps_for(sim_dt)
        revert = weights = None
        if s.kind == "SOFT":
            goal = self._goal(shape_targets)
            if goal is None:
                goal = self._placed(matrix)
            revert = self.solver.make_state(goal)
            fraction = substep_fraction(s.shape_stiffness, substeps, s.time_scale)
            weights = np.repeat((self.movable * fraction).astype(self.dtype)[:, None], 4, 1)
        pin_start = self.pos[self.pinned_ids, :3] if pin_end is not None else None
        if (
            pin_start is not None
            and pin_end is not None
            and jump_too_far(pin_start, pin_end, sim_dt, s.max_speed)
        ):
            self._carry_with_pins(pin_end)
            self.warn("pins jumped farther than the cloth can follow: carried with them")
            pin_start = self.pos[self.pinned_ids, :3]
        return FramePlan(sim_dt, substeps, pin_start, pin_end, revert, weights)

    def pull_to_shape(self, plan: FramePlan) -> None:
        """A soft body's pull back to its shape after a substep (nothing for cloth)."""
        if plan.revert is not None and plan.weights is not None:
            pull_toward(self.pos, self.vel, plan.revert, plan.weights, self._pull_work)

    def finish_frame(self, plan: FramePlan) -> np.ndarray:
        """Check the frame's result (restoring the last good state if it is bad) and return
        positions ``(N, 3)`` float32."""
        with np.errstate(all="ignore"):
            problem = self.guard.problem(self.pos, self.vel, self.good_pos, plan.sim_dt)
        if problem is None:
            self._remember_good()
        else:
            self._recover(problem, plan.pin_end)
        return self.positions()

    # helpers -----------------------------------------------------------------------------

    def _set(self, pos: np.ndarray, vel: np.ndarray) -> None:
        """Load ``(N, 3)`` positions and velocities, into the existing storage when it has the
        solver's dtype (a ``World`` keeps it as a view of its shared arrays)."""
        current: np.ndarray | None = getattr(self, "pos", None)
        speeds: np.ndarray | None = getattr(self, "vel", None)
        if current is not None and speeds is not None and current.dtype == self.solver.dtype:
            for storage, values in ((current, pos), (speeds, vel)):
                storage[:, :3] = values
                storage[:, 3] = 0.0
        else:
            self.pos = self.solver.make_state(pos)
            self.vel = self.solver.make_state(vel)
            self._pull_work = np.empty_like(self.pos)
        self._remember_good()

    def _remember_good(self) -> None:
        good = getattr(self, "good_pos", None)
        if good is not None and good.shape == self.pos.shape and good.dtype == self.pos.dtype:
            np.copyto(good, self.pos)  # in place: a World may keep it as a view
        else:
            self.good_pos = self.pos.copy()

    def _recover(self, problem: str, pin_end: np.ndarray | None) -> None:
        self.recoveries += 1
        self.warn(f"simulation unstable ({problem}): restored the last good state")
        np.copyto(self.pos, self.good_pos)
        self.vel.fill(0.0)
        if pin_end is not None:
            self._carry_with_pins(pin_end)
        self._remember_good()

    def _carry_with_pins(self, pin_end: np.ndarray) -> None:
        """Move every point rigidly as the pins move to ``pin_end``, pins exactly there.

        The moved state is the new reference of the guard (a rigid move is no explosion).
        """
        old = self.pos[self.pinned_ids, :3].astype(np.float64)
        rotation, translation = best_rigid_transform(old, pin_end)
        with np.errstate(all="ignore"):
            carry(self.pos, self.vel, rotation, translation)
        self.pos[self.pinned_ids, :3] = pin_end
        if not (np.isfinite(self.pos).all() and np.isfinite(self.vel).all()):
            np.copyto(self.pos, self.good_pos)  # beyond float range: stay, pins included
            self.vel.fill(0.0)
        self._remember_good()

    def warn(self, text: str) -> None:
        """Report ``text`` with this frame's warnings (a World says so of its helper)."""
        if len(self.warnings) < MAX_WARNINGS:
            self.warnings.append(text)
        if len(self._fresh) < MAX_WARNINGS:
            self._fresh.append(text)

    def _placed(self, matrix: np.ndarray | None, ids: np.ndarray | None = None) -> np.ndarray:
        """The rest shape (rows ``ids``, default all) through the object's ``matrix`` this
        frame, float64 (None: where the model's matrix placed it)."""
        model = self.model
        if matrix is None:
            world = model.rest_world
            return np.array(world if ids is None else world[ids], dtype=np.float64)
        rest = model.rest_positions if ids is None else model.rest_positions[ids]
        return transformed(rest, matrix)

    def _points(self, values: np.ndarray, name: str) -> np.ndarray | None:
        arr = np.asarray(values, dtype=np.float64)
        if arr.shape != (self.model.point_count, 3):
            raise ValueError(f"{name} must be ({self.model.point_count}, 3), got {arr.shape}")
        if not np.isfinite(arr).all():
            self.warn(f"non-finite {name} refused")
            return None
        return arr

    def _matrix(self, matrix: np.ndarray | None) -> np.ndarray | None:
        if matrix is None:
            return None
        m = np.asarray(matrix, dtype=np.float64)
        if m.shape != (4, 4):
            raise ValueError(f"object matrix must be (4, 4), got {m.shape}")
        if not np.isfinite(m).all():
            self.warn("non-finite object matrix ignored")
            return None
        return m

    def _goal(self, targets: np.ndarray | None) -> np.ndarray | None:
        """The soft body's pull targets ``(N, 3)``, or None (absent or not finite)."""
        if targets is None:
            return None
        arr = np.asarray(targets, dtype=np.float64)
        if arr.shape != (self.model.point_count, 3):
            raise ValueError(f"shape targets must be ({self.model.point_count}, 3)")
        if not np.isfinite(arr).all():
            self.warn("non-finite shape targets ignored")
            return None
        return arr

    def _pin_targets(
        self, targets: np.ndarray | None, matrix: np.ndarray | None
    ) -> np.ndarray | None:
        """(P, 3) end positions of the pinned points for this frame, or None to keep them."""
        pins = self.pinned_ids
        if not pins.size:
            return None
        if targets is None:
            if matrix is None:
                return None
            return self._placed(matrix, pins)
        chosen = np.array(targets, dtype=np.float64)
        if chosen.shape != (pins.size, 3):
            raise ValueError(f"pinned targets must be ({pins.size}, 3): one per pinned point")
        bad = ~np.isfinite(chosen).all(axis=1)
        if bad.any():
            self.warn(f"{int(bad.sum())} non-finite pinned targets ignored")
            chosen[bad] = self.pos[pins[bad], :3]
        return chosen
