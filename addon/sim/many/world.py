"""Many simulated objects stepped together: one solver pass a frame instead of one each.

A ``World`` holds one ``Simulator`` per object (each built, validated and guarded as it
would be alone) and solves the XPBD ones that share a substep length in one merged solver
(``xpbd/merge.py``): their states live in shared arrays that each object's ``Simulator``
sees as a view of its rows, so per-object calls (``reset``, ``set_state``, ``state``,
``update_settings``, the guard and its recovery) keep working and stay per object. Each
object keeps its own settings, pins, object matrix and colliders; the result for an object
is the same, bit for bit, as stepping its ``Simulator`` alone. Classic-solver objects are
stepped alone (their substeps follow their own stability bound).
"""

from __future__ import annotations

import time
from collections.abc import Generator, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..collide.colliders import Collider, begin_substep
from ..guard import ExplosionGuard
from ..rigid_carry import FOLLOWABLE_SPEED_FRACTION
from ..settings import SimSettings
from ..simulator import FramePlan, Simulator, StepResult
from ..xpbd.merge import ContactSet, MergedXpbd
from ..xpbd.solver import XpbdSolver
from . import parallel
from .parallel import Pace, Partition, StepWorker, WorkerError, split, workers
from .parallel import processes as helper_processes


@dataclass
class ObjectFrame:
    """One object's inputs for a frame, as ``Simulator.step`` takes them (``pinned_targets``
    ``(P, 3)``, one per pinned point; ``object_matrix``: its ``matrix_world`` now)."""

    pinned_targets: np.ndarray | None = None
    object_matrix: np.ndarray | None = None
    colliders: Sequence[Collider] = field(default_factory=tuple)
    shape_targets: np.ndarray | None = None


@dataclass
class _Frame:
    """What a batch's frame needs once its members' plans are made."""

    plans: list[FramePlan]
    substeps: int
    sub_dt: float
    start: np.ndarray | None
    end: np.ndarray | None
    pulls: list[tuple[Simulator, FramePlan]]
    moving: tuple[Collider, ...]
    sets: list[ContactSet]


def run_substeps(
    solver: XpbdSolver,
    pos: np.ndarray,
    vel: np.ndarray,
    substeps: int,
    sub_dt: float,
    start: np.ndarray | None,
    end: np.ndarray | None,
    moving: tuple[Collider, ...],
    pulls: Sequence[tuple[Simulator, FramePlan]] = (),
) -> None:
    """A frame's substeps of a (merged) solver: pins along ``start``..``end`` ``(P, 3)``,
    ``moving`` told of each substep, the soft bodies in ``pulls`` pulled after each."""
    with np.errstate(all="ignore"):
        for k in range(1, substeps + 1):
            begin_substep(moving, (k - 1) / substeps, k / substeps)
            pins = None
            if start is not None and end is not None:
                pins = (start + (end - start) * (k / substeps)).astype(np.float32)
            solver.substep(pos, vel, sub_dt, pins, (), k - 1)
            for sim, plan in pulls:
                sim.pull_to_shape(plan)


class _Batch:
    """XPBD members with one substep length, their states in one pair of arrays (mapped
    by a helper process too when ``worker`` steps them)."""

    def __init__(
        self, members: list[int], sims: list[Simulator], worker: StepWorker | None = None
    ) -> None:
        self.members = members
        self.sims = [sims[i] for i in members]
        solvers = [s.solver for s in self.sims]
        assert all(isinstance(s, XpbdSolver) for s in solvers)
        self.solver = MergedXpbd(solvers)  # type: ignore[arg-type]
        self.pos = np.concatenate([s.pos for s in self.sims])
        self.vel = np.concatenate([s.vel for s in self.sims])
        self.remote: Partition | None = None
        if worker is not None:
            try:
                self.remote = Partition(worker, self.solver, self.pos, self.vel)
                self.pos, self.vel = self.remote.pos, self.remote.vel
            except WorkerError:
                self.remote = None
        self.good = np.concatenate([s.good_pos for s in self.sims])
        for i, sim in enumerate(self.sims):
            rows = self.solver.rows(i)
            sim.pos, sim.vel, sim.good_pos = self.pos[rows], self.vel[rows], self.good[rows]
        offsets = [int(o) for o in self.solver.offsets[:-1]]
        self.guard = ExplosionGuard.merged([s.guard for s in self.sims], offsets)
        pinned = [s.pinned_ids + o for s, o in zip(self.sims, offsets, strict=True)]
        self.pinned = np.concatenate(pinned) if pinned else np.zeros(0, dtype=np.intp)
        self.pin_ends = np.cumsum([s.pinned_ids.size for s in self.sims])
        self._contacts: dict[tuple[object, ...], list[ContactSet]] = {}

    def contact_sets(self, frames: list[ObjectFrame]) -> list[ContactSet]:
        """Members grouped by their colliders, margin and friction (cached per pattern)."""
        keys = []
        for sim, frame in zip(self.sims, frames, strict=True):
            s = sim.settings
            keys.append((tuple(id(c) for c in frame.colliders), s.collision_margin, s.friction))
        pattern = tuple(keys)
        cached = self._contacts.get(pattern)
        if cached is not None:
            return cached
        sets: dict[tuple[object, ...], ContactSet] = {}
        for i, (key, frame) in enumerate(zip(keys, frames, strict=True)):
            if not key[0]:
                continue
            if key not in sets:
                mask = np.zeros(self.solver.n, dtype=bool)
                sets[key] = ContactSet(tuple(frame.colliders), mask, key[1], key[2])
            rows = self.solver.rows(i)
            sets[key].movable[rows] = self.solver.movable[rows]
        out = list(sets.values())
        self._contacts = {pattern: out}  # colliders that move between frames stay new objects
        return out

    def begin(self, frame_dt: float | None, frames: list[ObjectFrame]) -> _Frame | None:
        """The frame's plans, pin path and contacts (None: a member cannot step, nothing
        moves)."""
        quick = self._begin_quick(frame_dt, frames)
        if quick is not None:
            ready, start, end = quick
        else:
            plans: list[FramePlan | None] = [
                sim.begin_frame(frame_dt, f.pinned_targets, f.object_matrix, f.shape_targets)
                for sim, f in zip(self.sims, frames, strict=True)
            ]
            ready = [p for p in plans if p is not None]
            if len(ready) != len(plans) or not ready:
                return None
            start, end = self._pin_path(ready)
        sets = self.contact_sets(frames)
        self.solver.contact_sets = sets
        for contact in sets:
            contact.begin_frame()
        pulls = [(sim, p) for sim, p in zip(self.sims, ready, strict=True) if p.revert is not None]
        moving = tuple({id(c): c for f in frames for c in f.colliders}.values())
        return _Frame(ready, ready[0].substeps, ready[0].sub_dt, start, end, pulls, moving, sets)

    def _begin_quick(
        self, frame_dt: float | None, frames: list[ObjectFrame]
    ) -> tuple[list[FramePlan], np.ndarray | None, np.ndarray | None] | None:
        """``Simulator.begin_frame`` of every member at once, for the common frame: cloth,
        every pinned member given its targets, all finite, no pin jumping too far (None:
        anything else, which the members' own ``begin_frame`` handle and warn of). The
        same plans and pin path, the same values."""
        sims = self.sims
        s = sims[0].settings
        dt = 1.0 / s.fps if frame_dt is None else float(frame_dt)
        if not np.isfinite(dt) or dt <= 0.0 or any(m.settings.kind == "SOFT" for m in sims):
            return None
        chosen = []
        for sim in sims:
            sim.frame_begins()
        for sim, f in zip(sims, frames, strict=True):
            m = f.object_matrix
            if m is not None and not (
                isinstance(m, np.ndarray) and m.shape == (4, 4) and np.isfinite(m).all()
            ):
                return None
            if sim.pinned_ids.size:
                t = f.pinned_targets
                if not isinstance(t, np.ndarray) or t.shape != (sim.pinned_ids.size, 3):
                    return None
                chosen.append(t)
        sim_dt = dt * s.time_scale
        substeps = [sim.solver.substeps_for(sim_dt) for sim in sims]
        if not chosen:
            return [FramePlan(sim_dt, k, None, None, None, None) for k in substeps], None, None
        end = np.concatenate(chosen).astype(np.float64, copy=False)
        if not np.isfinite(end).all():
            return None
        start = self.pos[self.pinned, :3]
        step = end - start.astype(np.float64)
        moved = (step * step).sum(axis=1)
        if not np.isfinite(moved).all():
            return None  # a member's max would be NaN (never carried) but not the others'
        if float(np.sqrt(moved.max())) > FOLLOWABLE_SPEED_FRACTION * s.max_speed * sim_dt:
            return None  # some member's pins jumped: it is carried (and warned) by itself
        plans = []
        first = 0
        for sim, k, last in zip(sims, substeps, self.pin_ends, strict=True):
            if sim.pinned_ids.size:
                pins = slice(first, int(last))
                plans.append(FramePlan(sim_dt, k, start[pins], end[pins], None, None))
            else:
                plans.append(FramePlan(sim_dt, k, None, None, None, None))
            first = int(last)
        return plans, start, end

    def run(self, job: _Frame) -> None:
        """The frame's substeps here."""
        run_substeps(
            self.solver,
            self.pos,
            self.vel,
            job.substeps,
            job.sub_dt,
            job.start,
            job.end,
            job.moving,
            job.pulls,
        )

    def send(self, job: _Frame) -> bool:
        """Start the frame's substeps in this batch's helper (False: step it here)."""
        if self.remote is None or job.pulls:
            return False
        try:
            return self.remote.send(job, job.sets, job.moving)
        except WorkerError as exc:
            self.lose(exc)
            return False

    def leave_helper(self) -> None:
        """In a forked child: the members' state in this process's own memory (the mapping
        is the parent's), the helper's part forgotten."""
        if self.remote is not None:
            self.pos, self.vel = self.remote.private_state()
            self.remote = None
            for i, sim in enumerate(self.sims):
                rows = self.solver.rows(i)
                sim.pos, sim.vel = self.pos[rows], self.vel[rows]

    def lose(self, exc: WorkerError) -> None:
        """The helper failed: this batch steps here from now on (its members are told)."""
        self.remote = None
        for sim in self.sims:
            sim.warn(f"helper process failed, stepping here: {str(exc).splitlines()[0]}")

    def finish(self, job: _Frame | None) -> list[StepResult]:
        """Each member's positions after the frame (checked by the guard) and warnings."""
        if job is not None:
            ready = job.plans
            with np.errstate(all="ignore"):
                problem = self.guard.problem(self.pos, self.vel, self.good, ready[0].sim_dt)
            if problem is None:  # no member has one: remember every good state at once
                np.copyto(self.good, self.pos)
            else:
                for sim, p in zip(self.sims, ready, strict=True):
                    sim.finish_frame(p)
        return [sim.result() for sim in self.sims]

    def _pin_path(self, plans: list[FramePlan]) -> tuple[np.ndarray | None, np.ndarray | None]:
        """All members' pins ``(P, 3)`` at the start and end of the frame (members whose pins
        stay: where they are)."""
        starts, ends = [], []
        for sim, plan in zip(self.sims, plans, strict=True):
            if plan.pin_start is not None and plan.pin_end is not None:
                starts.append(plan.pin_start)
                ends.append(plan.pin_end)
            elif sim.pinned_ids.size:
                here = sim.pos[sim.pinned_ids, :3].astype(np.float64)
                starts.append(here)
                ends.append(here)
        if not starts:
            return None, None
        return np.concatenate(starts), np.concatenate(ends)


class World:
    """Steps several ``Simulator`` objects a frame at a time, the XPBD ones together.

    ``processes``: helper processes that may step parts of a large batch meanwhile (None:
    ``parallel.processes()``; 0: all here); the results do not depend on it."""

    def __init__(self, sims: Sequence[Simulator], processes: int | None = None) -> None:
        self.sims = list(sims)
        self.processes = processes
        self.pace = Pace()  # with the helpers or without, by the time they take
        self._batches: list[_Batch] | None = None
        self._alone: list[int] = []

    def update_settings(self, index: int, settings: SimSettings) -> None:
        """``Simulator.update_settings`` for object ``index``; the merge is redone at the
        next step."""
        self.sims[index].update_settings(settings)
        self.invalidate()

    def invalidate(self) -> None:
        """Redo the merge at the next step (after changing a member's solver or settings)."""
        self.close()

    def close(self) -> None:
        """Release the helpers' parts (the merge is redone at the next step)."""
        for batch in self._batches or ():
            if batch.remote is not None:
                batch.remote.close()
        self._batches = None

    def leave_helpers(self) -> None:
        """In a forked child (``parallel`` calls it): every object's state copied out of
        the memory the parent's helpers map; the merge is redone at the next step."""
        for batch in self._batches or ():
            batch.leave_helper()
        self._batches = None

    def _build(self) -> list[_Batch]:
        groups: dict[tuple[object, ...], list[int]] = {}
        self._alone = []
        for i, sim in enumerate(self.sims):
            s = sim.settings
            if isinstance(sim.solver, XpbdSolver) and not sim.self_colliding:
                key = (s.substeps, s.fps, s.time_scale, s.max_speed)
                groups.setdefault(key, []).append(i)
            else:
                self._alone.append(i)
        helpers = helper_processes() if self.processes is None else self.processes
        self._batches = []
        for members in groups.values():
            runs = split([self.sims[i].solver.n for i in members], helpers, parallel.LOCAL_SHARE)
            pool = self._workers(len(runs) - 1)
            for j, run in enumerate(runs):
                worker = pool[j - 1] if 0 < j <= len(pool) else None
                self._batches.append(_Batch([members[i] for i in run], self.sims, worker))
        if any(b.remote is not None for b in self._batches):
            parallel.hold(self)  # a forked child must not step what the helpers map
        return self._batches

    @staticmethod
    def _workers(count: int) -> list[StepWorker]:
        if count <= 0:
            return []
        try:
            return workers(count)
        except OSError:  # no process can be started here: step everything in this one
            return []

    def step(
        self, frames: Sequence[ObjectFrame] | None = None, frame_dt: float | None = None
    ) -> list[StepResult]:
        """Advance every object one frame; per object its ``StepResult`` (positions
        ``(N_i, 3)`` float32 and the frame's warnings).

        ``frames``: per object, its pins, matrix and colliders (None: none for all).
        """
        out: list[StepResult | None] = [None] * len(self.sims)
        for members, results in self.steps(frames, frame_dt):
            for i, r in zip(members, results, strict=True):
                out[i] = r
        return [r for r in out if r is not None]

    def steps(
        self, frames: Sequence[ObjectFrame] | None = None, frame_dt: float | None = None
    ) -> Generator[tuple[list[int], list[StepResult]], None, None]:
        """``step``, its results as they are ready: ``(object indices, results)`` for
        the batches stepped here first, then those of the helper processes (the caller's
        work on the first ones runs while the helpers still step theirs)."""
        inputs = list(frames) if frames is not None else [ObjectFrame() for _ in self.sims]
        if len(inputs) != len(self.sims):
            raise ValueError(f"{len(inputs)} frame inputs for {len(self.sims)} objects")
        batches = self._batches if self._batches is not None else self._build()
        parted = any(b.remote is not None for b in batches)
        helped = parted and self.pace.helpers()
        began = time.perf_counter()
        jobs: list[_Frame | None] = [None] * len(batches)
        away = [False] * len(batches)
        order = sorted(range(len(batches)), key=lambda b: batches[b].remote is None)
        try:
            for b in order:  # the helpers' batches first: they start while the rest is done here
                batch = batches[b]
                jobs[b] = job = batch.begin(frame_dt, [inputs[i] for i in batch.members])
                away[b] = job is not None and helped and batch.send(job)
                if not away[b]:
                    if job is not None:
                        batch.run(job)
                    yield batch.members, batch.finish(job)
            for i in self._alone:
                f = inputs[i]
                sim = self.sims[i]
                result = sim.step(
                    frame_dt, f.pinned_targets, f.object_matrix, f.colliders, f.shape_targets
                )
                yield [i], [result]
            sent = any(away)
            for b in order:
                job = jobs[b]
                if away[b] and job is not None:
                    away[b] = False
                    self._collect(batches[b], job)
                    yield batches[b].members, batches[b].finish(job)
            if parted:
                self.pace.record(helped and sent, time.perf_counter() - began)
        finally:  # left early (the caller failed): the helpers' answers are still read
            for b in order:
                job = jobs[b]
                if away[b] and job is not None:
                    self._collect(batches[b], job)
                    batches[b].finish(job)

    @staticmethod
    def _collect(batch: _Batch, job: _Frame) -> None:
        """The helper's answer; when it failed, the frame is stepped here from its start
        (restored) and the batch stays here from then on."""
        assert batch.remote is not None
        try:
            batch.remote.wait()
        except WorkerError as exc:
            batch.lose(exc)
            batch.run(job)
