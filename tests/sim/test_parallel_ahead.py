"""A helper steps its parts a frame ahead while nothing moves (``step_worker._Ahead``): the
frames it takes are bit for bit what one process steps, and any change (a surface or a
pin moving, a per-object call on the state, a frame stepped here) is stepped as asked."""

from __future__ import annotations

import numpy as np
import pytest

from addon.sim import Simulator, parallel
from addon.sim.mesh_collider import MeshCollider
from addon.sim.world import ObjectFrame, World

from .test_parallel import _sheets
from .test_world import FLOOR_TRIANGLES, _floor

FLOOR_Z = 0.55  # the sheets hang from z = 1 to about 0.5: their lower rows rest on it


@pytest.fixture(autouse=True)
def _no_helpers_left():
    parallel.give_way(False)  # every step ahead finishes: which frames are taken is known
    yield
    parallel.give_way(True)
    parallel.shutdown()
    assert parallel.running() == 0


def test_split_ahead_keeps_a_share_of_the_helpers_points() -> None:
    # 18 sheets here, 22 in the helper: with 0.3 this process keeps 0.3 / 1.3 of 40
    assert parallel.split_ahead([400] * 18, 22 * 400, 0.3) == (list(range(9)), list(range(9, 18)))
    assert parallel.split_ahead([400] * 18, 22 * 400, 1.0) == (list(range(18)), [])
    assert parallel.split_ahead([400] * 9, 11 * 400, 0.3) == (list(range(9)), [])  # 3,600
    assert parallel.split_ahead([5000], 5000, 0.3) == ([0], [])
    assert parallel.split_ahead([3000, 3000], 6000, 0.0) == ([0], [1])  # one member kept


def _world(processes: int) -> World:
    return World([Simulator(m, s) for m, s in _sheets(40)], processes=processes)


def _taken(world: World) -> list[bool]:
    assert world._batches is not None
    return [b.remote is not None and b.remote.taken for b in world._batches]


def test_frames_stepped_ahead_are_what_one_process_steps() -> None:
    here, split = _world(0), _world(1)
    turns = iter([True] * 21 + [False, False] + [True] * 20)
    split.pace.helpers = lambda: next(turns)  # type: ignore[method-assign]  # here at 22, 23
    own = MeshCollider(_floor(FLOOR_Z, -1.0, 25.0), FLOOR_TRIANGLES)
    mirrored = MeshCollider(_floor(FLOOR_Z, -1.0, 25.0), FLOOR_TRIANGLES)
    targets = [sim.model.rest_positions.copy() for sim in here.sims]
    log = []
    for frame in range(1, 31):
        z = FLOOR_Z + (0.02 if frame >= 12 else 0.0)  # the floor rises once, at frame 12
        for surface in (own, mirrored):
            surface.move_to(_floor(z, -1.0, 25.0))
        if frame == 17:  # a pin of a sheet of the helper's own part moves (once)
            targets[30] = targets[30] + np.array([0.0, 0.05, 0.0])
        for batch in split._batches or ():  # the helper always seems to have the time
            batch.here_seconds = -1.0
        a = here.step([ObjectFrame(t, colliders=(own,)) for t in targets])
        b = split.step([ObjectFrame(t, colliders=(mirrored,)) for t in targets])
        for x, y in zip(a, b, strict=True):
            assert np.array_equal(x, y)
        log.append(_taken(split))
        if frame == 7:  # a per-object call on a helper's member between frames
            for world in (here, split):
                world.sims[35].set_state(world.sims[34].state()[0], np.zeros((400, 3)))
    assert split._batches is not None
    sizes = [len(b.members) for b in split._batches]
    partner = [b.partner is not None for b in split._batches]
    assert sizes == [9, 22, 9] and partner == [False, False, True]
    helper = [t[1] for t in log]  # the helper's own part, frame by frame (1-based below)
    middle = [t[2] for t in log]
    # its first two frames have no guess; from then on each frame is taken but those after a
    # change: the state set between 7 and 8, the floor risen at 12, a pin moved at 17 (18 is
    # the first frame of the pins standing still again), frames 22-23 here (24 fresh)
    missed = [f + 1 for f, t in enumerate(helper) if not t]
    assert missed == [1, 2, 8, 12, 13, 17, 18, 22, 23, 24]
    # the middle part (this process's run but for 9 sheets) goes to the helper the frame
    # after it took one (4, 10, 15, 20, 26 on), stepped there as asked at first, taken from
    # the frame after the first it stood still in the helper (a part's first frame has no
    # guess): 4 and 5 asked, 6-8 taken; 9 here (8 missed); 10 asked, 11 taken; ...
    assert [f + 1 for f, t in enumerate(middle) if t] == [6, 7, 8, 11, 16, 17, 21, 27, 28, 29, 30]
    gap = np.concatenate([p[:, 2] for p in b]) - (FLOOR_Z + 0.02)
    assert gap.min() > 0.02  # kept outer + margin away from the floor: contacts were active
    assert mirrored.rebuilds > 0


def test_a_step_ahead_given_up_for_the_next_request_changes_nothing() -> None:
    """With the helper giving way (the default), a request coming during its step ahead ends
    it: frames back to back, some taken and some not, all equal to one process's."""
    parallel.give_way(True)
    here, split = _world(0), _world(1)
    split.pace.helpers = lambda: True  # type: ignore[method-assign]
    floor = MeshCollider(_floor(FLOOR_Z, -1.0, 25.0), FLOOR_TRIANGLES)
    mirrored = MeshCollider(_floor(FLOOR_Z, -1.0, 25.0), FLOOR_TRIANGLES)
    for _ in range(12):
        for surface in (floor, mirrored):
            surface.move_to(_floor(FLOOR_Z, -1.0, 25.0))
        a = here.step([ObjectFrame(colliders=(floor,))] * 40)
        b = split.step([ObjectFrame(colliders=(mirrored,))] * 40)
        for x, y in zip(a, b, strict=True):
            assert np.array_equal(x, y)


def _part(n_sheets: int = 3):
    """A helper's part built here, as ``step_worker`` builds it, on a temporary file."""
    import tempfile

    from addon.sim import step_worker
    from addon.sim.xpbd_merge import MergedXpbd

    sims = [Simulator(m, s) for m, s in _sheets(n_sheets)]
    solver = MergedXpbd([s.solver for s in sims])
    n = solver.n
    with tempfile.NamedTemporaryFile(delete=False) as handle:
        handle.truncate(2 * n * 16)
    part = step_worker._Part(MergedXpbd([s.solver for s in sims]), handle.name, n)
    part.pos[:] = np.concatenate([s.pos for s in sims])
    part.vel[:] = 0.0
    return part, solver, handle.name


@pytest.mark.parametrize("same", [True, False])
def test_a_request_read_during_a_step_ahead_lets_it_go_on_only_when_guessed(same) -> None:
    """The part (key 7) rests on a floor (key 11, posed each frame where it is): the step
    ahead goes on only for its own guessed request, and the frame it gives is the frame
    stepped as asked."""
    import copy
    import os

    part, _, path = _part()
    level = float(part.pos[:, 2].min()) + 0.01  # just over the flat sheets: in reach
    floor = MeshCollider(_floor(level, -1.0, 25.0), FLOOR_TRIANGLES)
    try:
        pins = part.solver.pinned_ids
        end = part.pos[pins, :3].astype(np.float64)
        movable = np.ones(part.solver.n, dtype=bool)
        movable[pins] = False
        spec = [((11,), movable, 0.005, 0.5)]
        vertices = floor._cur
        still = [(11, "pose", (vertices, vertices))]
        first = (12, 1.0 / 288, part.pos[pins, :3].copy(), end, spec, [], [11], [])

        def run(target, request, updates):
            substeps, dt, start, e, sp, _, moving, dropped = request
            if start is None:  # where the pins are now
                start = target.pos[pins, :3].copy()
            return target.step((substeps, dt, start, e, sp, updates, moving, dropped))

        run(part, first, [(11, "object", copy.deepcopy(floor))])  # no guess yet: the first
        assert part.guess is None
        second = (12, 1.0 / 288, None, end, None, [], [11], [])
        run(part, second, still)
        assert part.guess is not None  # the pins and the floor stood still over that frame
        nxt = (12, 1.0 / 288, part.pos[pins, :3].copy(), end if same else end + 0.01, None)
        nxt = (*nxt, still, [11], [])
        asked = []

        def incoming():  # the next request comes at the step ahead's first substep
            asked.append(1)
            return ("step", 7, *nxt) if len(asked) == 1 else None

        part.go_ahead(7, incoming)
        assert len(asked) == 1  # read once, then the step goes on (or ends) without asking
        assert (part.ahead is not None) == same
        assert part.step(nxt) == same  # taken when it went on
        again, _, other = _part()  # the same three frames stepped as asked
        try:
            run(again, first, [(11, "object", copy.deepcopy(floor))])
            run(again, second, still)
            assert not again.step(nxt)
            assert again.state.tobytes() == part.state.tobytes()
            assert part.colliders[11].rebuilds > 0  # the floor was asked about points
        finally:
            again.close()
            os.unlink(other)
    finally:
        part.close()
        os.unlink(path)
