"""A World split between this process and helper processes gives every object exactly what
one process gives (and so what stepping it alone gives), and leaves no process behind."""

from __future__ import annotations

import numpy as np
import pytest

from addon.sim import Plane, SimSettings, Simulator, Sphere
from addon.sim.collide.mesh_collider import MeshCollider
from addon.sim.many import parallel
from addon.sim.many.world import ObjectFrame, World

from .test_world import FLOOR_TRIANGLES, _cloth, _floor


@pytest.fixture(autouse=True)
def _no_helpers_left():
    yield
    parallel.shutdown()
    assert parallel.running() == 0


def _sheets(count: int) -> list[tuple[object, SimSettings]]:
    """``count`` 20 x 20 sheets side by side (8,000 points for 20: split in two)."""
    out = []
    for i in range(count):
        settings = SimSettings.cloth(stiffness=2e4 + 1e4 * (i % 3), damping=0.1 * (i % 2))
        out.append((_cloth(20, 0.5, 0.6 * i, (380, 399)), settings))
    return out


def _rising(frame: int) -> float:
    """A floor below the sheets (which hang from z = 1 down to 0.5) that rises into them."""
    return 0.2 + 0.03 * frame


def test_split_keeps_members_in_order_with_about_equal_points() -> None:
    assert parallel.split([400] * 40, 1) == [list(range(20)), list(range(20, 40))]
    assert parallel.split([400] * 40, 3) == [list(range(i, i + 10)) for i in (0, 10, 20, 30)]
    assert parallel.split([6000, 100, 100, 3000], 1) == [[0], [1, 2, 3]]
    assert parallel.split([400] * 9, 1) == [list(range(9))]  # 3,600 points: not worth it
    assert parallel.split([400] * 40, 0) == [list(range(40))]
    assert parallel.split([5000], 1) == [[0]]
    # this process's part smaller than a helper's (it also reads and shows every object)
    assert parallel.split([400] * 40, 1, 0.8) == [list(range(18)), list(range(18, 40))]
    assert parallel.split([400] * 40, 3, 0.5) == [
        list(range(6)),
        list(range(6, 18)),
        list(range(18, 29)),
        list(range(29, 40)),
    ]


def test_helpers_give_the_same_positions_as_one_process() -> None:
    scene = _sheets(20)
    here = World([Simulator(m, s) for m, s in scene], processes=0)
    split = World([Simulator(m, s) for m, s in scene], processes=1)
    ball = Sphere((3.0, 0.25, 0.6), 0.3)
    own = MeshCollider(_floor(_rising(0), -1.0, 13.0), FLOOR_TRIANGLES)
    mirrored = MeshCollider(_floor(_rising(0), -1.0, 13.0), FLOOR_TRIANGLES)
    turns = iter([True] * 9 + [False, False, True, False] + [True] * 20)
    split.pace.helpers = lambda: next(turns)  # type: ignore[method-assign]  # here at 10, 11, 13
    for frame in range(1, 21):
        for surface in (own, mirrored):
            surface.move_to(_floor(_rising(frame), -1.0, 13.0))
            if frame == 12:  # posed twice between two frames: the helper gets a new copy
                surface.move_to(_floor(_rising(frame), -1.0, 13.0))
        floor = Plane((0.0, 0.0, 0.1 if frame < 8 else 0.2), (0.0, 0.0, 1.0))  # a new one
        a = [
            r.positions for r in here.step([ObjectFrame(colliders=(own, ball, floor))] * len(scene))
        ]
        b = [
            r.positions
            for r in split.step([ObjectFrame(colliders=(mirrored, ball, floor))] * len(scene))
        ]
        for x, y in zip(a, b, strict=True):
            assert np.array_equal(x, y)
        if frame == 6:  # per-object calls reach the shared state
            for world in (here, split):
                world.sims[15].reset()
                world.sims[3].set_state(world.sims[4].state()[0], np.zeros((400, 3)))
        if frame == 14:  # a setting change merges (and splits) again
            for world in (here, split):
                world.update_settings(17, SimSettings.cloth(stiffness=5e3))
    assert split._batches is not None and len(split._batches) == 2
    assert split._batches[1].remote is not None and parallel.running() == 1
    assert mirrored.rebuilds > 0  # the surface rose into the sheets here too
    gap = np.concatenate([np.abs(p[:, 2] - _rising(20)) for p in b])
    assert gap.min() > 0.025 - 1e-3 and np.sum(gap < 0.026) > 10  # kept outer + margin away
    split.close()


def test_pace_takes_the_faster_way_and_tries_the_other_again() -> None:
    pace = parallel.Pace()
    turns = []
    for _ in range(63):
        turns.append(pace.helpers())
        pace.record(turns[-1], 0.030 if turns[-1] else 0.020)  # slower with the helpers
    # two frames with the helpers and two without (the first of each warms up), then
    # without them but for probes at frames 16, 32 and 48
    assert turns[:4] == [True, True, False, False]
    assert [f + 1 for f, t in enumerate(turns) if t][2:] == [16, 32, 48]
    for _ in range(12):  # the helpers got faster (a core came free): they take over
        pace.record(True, 0.010)
    assert [pace.helpers() for _ in range(3)] == [False, True, True]  # 64: a probe


def test_an_exploding_object_in_a_helper_recovers_alone() -> None:
    scene = _sheets(20)
    here = World([Simulator(m, s) for m, s in scene], processes=0)
    split = World([Simulator(m, s) for m, s in scene], processes=1)
    split.pace.helpers = lambda: True  # type: ignore[method-assign]
    for world in (here, split):
        world.step()
        world.sims[18].vel[7, :3] = np.nan  # in the helper's part
    a, b = [r.positions for r in here.step()], [r.positions for r in split.step()]
    assert split.sims[18].recoveries == 1 and split.sims[2].recoveries == 0
    for x, y in zip(a, b, strict=True):
        assert np.array_equal(x, y)


def test_a_helper_that_dies_is_replaced_by_stepping_here() -> None:
    scene = _sheets(20)
    here = World([Simulator(m, s) for m, s in scene], processes=0)
    split = World([Simulator(m, s) for m, s in scene], processes=1)
    split.pace.helpers = lambda: True  # type: ignore[method-assign]  # busy machine or not
    for frame in range(6):
        if frame == 3:
            parallel._WORKERS[0].proc.kill()
            parallel._WORKERS[0].proc.wait()
        for x, y in zip(here.step(), split.step(), strict=True):
            assert np.array_equal(x.positions, y.positions)
    assert split._batches is not None and split._batches[1].remote is None
    assert any("helper process failed" in w for w in split.sims[10].warnings)


def test_shutdown_stops_the_helpers_and_the_world_steps_here() -> None:
    scene = _sheets(20)
    here = World([Simulator(m, s) for m, s in scene], processes=0)
    split = World([Simulator(m, s) for m, s in scene], processes=1)
    for x, y in zip(here.step(), split.step(), strict=True):
        assert np.array_equal(x.positions, y.positions)
    assert parallel.running() == 1
    process = parallel._WORKERS[0].proc
    parallel.shutdown()
    assert parallel.running() == 0 and process.poll() is not None
    for _ in range(2):
        for x, y in zip(here.step(), split.step(), strict=True):
            assert np.array_equal(x.positions, y.positions)
    assert parallel.running() == 0  # not restarted by the World already split


def test_small_worlds_and_processes_zero_start_no_helper() -> None:
    World([Simulator(m, s) for m, s in _sheets(8)]).step()  # 3,200 points
    World([Simulator(m, s) for m, s in _sheets(20)], processes=0).step()
    parallel.configure(0)
    try:
        World([Simulator(m, s) for m, s in _sheets(20)]).step()
    finally:
        parallel.configure(None)
    assert parallel.running() == 0


def test_steps_left_early_still_reads_the_helpers_answers() -> None:
    """A caller that fails after the first results (``World.steps`` closed early): the
    helper's answer is read, so the next frames stay in step and bit-equal."""
    scene = _sheets(20)
    here = World([Simulator(m, s) for m, s in scene], processes=0)
    split = World([Simulator(m, s) for m, s in scene], processes=1)
    split.pace.helpers = lambda: True  # type: ignore[method-assign]
    for frame in range(4):
        expected = [r.positions for r in here.step()]
        if frame == 1:
            steps = split.steps()
            members, _ = next(steps)
            assert split._batches is not None and split._batches[0].remote is None
            assert members == split._batches[0].members  # this process's part comes first
            steps.close()
            got = [sim.positions() for sim in split.sims]
        else:
            got = [r.positions for r in split.step()]
        for x, y in zip(expected, got, strict=True):
            assert np.array_equal(x, y)
    assert split._batches is not None and split._batches[1].remote is not None


class _EveryPose(MeshCollider):
    """A mesh collider that takes every pose in full (never skips a still one)."""

    def _still_again(self, previous: np.ndarray, current: np.ndarray) -> bool:
        return False


def test_a_still_surface_in_contact_gives_the_same_positions_with_helpers() -> None:
    # the floor rises into the sheets, stands still under them (its poses skipped here and
    # no pose sent to the helper's copy), then rises again: the same positions as one
    # process whose floor takes every pose in full
    scene = _sheets(20)
    here = World([Simulator(m, s) for m, s in scene], processes=0)
    split = World([Simulator(m, s) for m, s in scene], processes=1)
    split.pace.helpers = lambda: True  # type: ignore[method-assign]
    full = _EveryPose(_floor(_rising(0), -1.0, 13.0), FLOOR_TRIANGLES)
    skipping = MeshCollider(_floor(_rising(0), -1.0, 13.0), FLOOR_TRIANGLES)
    for frame in range(1, 21):
        level = _rising(min(frame, 11)) if frame <= 16 else _rising(frame - 5)
        full.move_to(_floor(level, -1.0, 13.0))
        skipping.move_to(_floor(level, -1.0, 13.0))
        a = [r.positions for r in here.step([ObjectFrame(colliders=(full,))] * len(scene))]
        b = [r.positions for r in split.step([ObjectFrame(colliders=(skipping,))] * len(scene))]
        for x, y in zip(a, b, strict=True):
            assert np.array_equal(x, y)
    assert full.poses == 21 and skipping.poses == 21 - 4  # still from frame 12: 13-16 skipped
    gap = np.concatenate([np.abs(p[:, 2] - _rising(15)) for p in b])
    assert gap.min() > 0.025 - 1e-3 and np.sum(gap < 0.026) > 10  # resting on the floor
    split.close()
