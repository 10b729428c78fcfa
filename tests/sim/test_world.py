"""A world of objects gives each object exactly what stepping it alone gives."""

from __future__ import annotations

import numpy as np

from addon.sim import (
    ClothModel,
    Plane,
    SimSettings,
    Simulator,
    Sphere,
    bend_springs,
    face_edges,
    merge_with_kinds,
    shear_springs,
)
from addon.sim.collide.mesh_collider import MeshCollider
from addon.sim.many.world import ObjectFrame, World
from addon.sim.xpbd.merge import points_box, reach_box

from .grids import quad_grid
from .meshes import grid_triangles

FLOOR = Plane((0.0, 0.0, 0.0), (0.0, 0.0, 1.0))
BALL = Sphere((0.5, 0.4, 0.3), 0.3)


def _cloth(n: int, size: float, x: float, pins: tuple[int, ...]) -> ClothModel:
    positions, sizes, corners = quad_grid(n, n, size, 1.0)
    positions[:, 0] += x
    parts = [face_edges(sizes, corners), shear_springs(sizes, corners)]
    parts.append(bend_springs(sizes, corners, positions))
    springs, kinds = merge_with_kinds(*parts)
    masses = np.full(n * n, 0.3)
    masses[list(pins)] = 0.0
    return ClothModel(positions, masses, springs, kinds, face_sizes=sizes, face_corners=corners)


def _scene() -> list[tuple[ClothModel, SimSettings]]:
    return [
        (_cloth(30, 1.0, 0.0, (0, 29)), SimSettings.cloth()),
        (_cloth(8, 0.5, 2.0, (0, 7)), SimSettings.cloth(stiffness=3e4, gravity=(0, 1, -9))),
        (
            _cloth(10, 0.6, 3.0, (0,)),
            SimSettings.cloth(wind=(0, 4, 1), wind_model="FACE", damping=0.3, drag=2.0),
        ),
        (_cloth(9, 0.5, 4.0, ()), SimSettings.cloth(tethers=False, bend_stiffness=0.0)),
        (_cloth(8, 0.5, 5.0, (0, 7)), SimSettings.soft_body(substeps=12)),
        (_cloth(6, 0.5, 6.0, (0, 5)), SimSettings.cloth(solver="CLASSIC", stiffness=2e3)),
        (_cloth(7, 0.5, 7.0, (0, 6)), SimSettings.cloth(substeps=6)),  # its own batch
        (_cloth(6, 0.5, 8.0, (0, 5)), SimSettings.cloth(wind=(3, 0, 0.5), wind_model="FACE")),
    ]


def _frames(frame: int, models: list[ClothModel]) -> list[ObjectFrame]:
    moving = models[1].rest_positions[models[1].pinned].copy()  # (P, 3)
    moving[:, 2] += 0.02 * frame  # its pins are lifted a little each frame
    turn = np.eye(4)
    turn[0, 3] = 0.01 * frame
    return [
        ObjectFrame(colliders=(BALL, FLOOR)),
        ObjectFrame(pinned_targets=moving, colliders=(FLOOR,)),
        ObjectFrame(colliders=(FLOOR,)),
        ObjectFrame(colliders=()),
        ObjectFrame(object_matrix=turn, colliders=(FLOOR,)),
        ObjectFrame(colliders=(FLOOR,)),
        ObjectFrame(colliders=(BALL, FLOOR)),
        ObjectFrame(colliders=(FLOOR,)),
    ]


def test_world_equals_each_object_alone() -> None:
    scene = _scene()
    models = [m for m, _ in scene]
    alone = [Simulator(m, s) for m, s in scene]
    world = World([Simulator(m, s) for m, s in scene])
    for frame in range(1, 31):
        inputs = _frames(frame, models)
        together = [r.positions for r in world.step(inputs)]
        for sim, f, result in zip(alone, inputs, together, strict=True):
            solo = sim.step(None, f.pinned_targets, f.object_matrix, f.colliders).positions
            assert np.array_equal(solo, result)
    assert len(world._batches or []) == 2  # 12 and 6 substeps; the classic one alone
    moved = np.linalg.norm(together[0] - models[0].rest_positions, axis=1).max()
    assert moved > 0.3


def test_an_object_of_unequal_masses_merged_with_even_ones_still_equals_each_alone() -> None:
    """Merged groups then hold rows of both kinds and take the per-end path, which must give
    an even-mass row the same bits as the shared-vector path its object takes alone."""
    uneven = _cloth(9, 0.5, 2.0, (0, 8))
    masses = np.linspace(0.1, 0.6, uneven.point_count)
    masses[[0, 8]] = 0.0
    uneven = ClothModel(
        uneven.rest_positions, masses, uneven.springs, uneven.kinds,
        face_sizes=uneven.face_sizes, face_corners=uneven.face_corners,
    )  # fmt: skip
    scene = [(_cloth(10, 0.5, 0.0, (0, 9)), SimSettings.cloth()), (uneven, SimSettings.cloth())]
    alone = [Simulator(m, s) for m, s in scene]
    world = World([Simulator(m, s) for m, s in scene])
    for frame in range(20):
        together = [r.positions for r in world.step([ObjectFrame(colliders=(FLOOR,))] * 2)]
        for sim, result in zip(alone, together, strict=True):
            assert np.array_equal(sim.step(colliders=(FLOOR,)).positions, result)
        if frame == 0:  # the coefficients are set at the first substep
            merged = world._batches[0].solver.groups if world._batches else []
            assert any(g.coefs is not None for g in merged)  # some merged group is per end
            assert all(g.coef is not None for g in alone[0].solver.groups)  # the even one
    moved = np.linalg.norm(together[1] - uneven.rest_positions, axis=1).max()
    assert moved > 0.1


def test_per_object_state_calls_and_setting_changes_stay_per_object() -> None:
    scene = _scene()[:3]
    alone = [Simulator(m, s) for m, s in scene]
    world = World([Simulator(m, s) for m, s in scene])
    inputs = [ObjectFrame(colliders=(FLOOR,))] * 3
    for _ in range(5):
        world.step(inputs)
        for sim in alone:
            sim.step(colliders=(FLOOR,))
    world.sims[1].reset()
    alone[1].reset()
    changed = SimSettings.cloth(stiffness=1e4, damping=0.5)
    world.update_settings(2, changed)
    alone[2].update_settings(changed)
    for _ in range(5):
        together = [r.positions for r in world.step(inputs)]
        for sim, result in zip(alone, together, strict=True):
            assert np.array_equal(sim.step(colliders=(FLOOR,)).positions, result)
    assert np.array_equal(world.sims[0].state()[0], alone[0].state()[0])


def test_an_exploding_object_recovers_alone() -> None:
    scene = _scene()[:2]
    world = World([Simulator(m, s) for m, s in scene])
    world.step()
    good = world.sims[0].state()[0]
    bad = world.sims[1].state()[0].copy()
    world.sims[1].vel[3, :3] = np.nan  # a broken point in object 1 only
    out = [r.positions for r in world.step()]
    assert world.sims[1].recoveries == 1 and world.sims[0].recoveries == 0
    assert np.abs(out[1]).max() < 100.0 and np.allclose(out[1], bad, atol=1e-6)
    assert not np.array_equal(out[0], good)  # object 0 went on moving


def _floor(z: float, x0: float, x1: float) -> np.ndarray:
    return np.array([(x0, -1.0, z), (x1, -1.0, z), (x1, 2.0, z), (x0, 2.0, z)], dtype=float)


FLOOR_TRIANGLES = np.array([[0, 1, 2], [0, 2, 3]])


def _rising(frame: int) -> float:
    """A floor far below the cloths for ten frames, then rising into them."""
    return -2.0 + 0.12 * max(frame - 10, 0)


def test_a_surface_far_away_is_skipped_and_one_rising_into_the_cloths_acts_as_alone() -> None:
    scene = _scene()[:3]
    models = [m for m, _ in scene]
    alone = [Simulator(m, s) for m, s in scene]
    world = World([Simulator(m, s) for m, s in scene])
    surfaces = [MeshCollider(_floor(_rising(0), -1.0, 3.0), FLOOR_TRIANGLES) for _ in alone]
    shared = MeshCollider(_floor(_rising(0), -1.0, 3.0), FLOOR_TRIANGLES)  # the world's
    ball = MeshCollider(_floor(5.0, 3.5, 4.0), FLOOR_TRIANGLES)  # above them all, never met
    for frame in range(1, 31):
        for surface in (*surfaces, shared):
            surface.move_to(_floor(_rising(frame), -1.0, 3.0))
        ball.move_to(_floor(5.0, 3.5, 4.0))
        together = [
            r.positions for r in world.step([ObjectFrame(colliders=(shared, ball)) for _ in models])
        ]
        for sim, own, result in zip(alone, surfaces, together, strict=True):
            assert np.array_equal(sim.step(None, colliders=(own, ball)).positions, result)
        if frame <= 10:
            assert shared.rebuilds == 0  # far below: never searched for pairs
    assert shared.rebuilds > 0
    lowest = min(float(r[:, 2].min()) for r in together)
    assert abs(lowest - (_rising(30) + 0.02 + 0.005)) < 1e-3  # carried, outer + margin above


def test_reach_box_holds_a_surface_at_both_poses_grown_by_its_reach() -> None:
    before, after = _floor(0.0, 0.0, 1.0), _floor(0.5, 0.2, 1.4)
    surface = MeshCollider(after, FLOOR_TRIANGLES, previous=before, outer=0.02, inner=0.05)
    box = reach_box((surface, BALL), margin=0.01)
    assert box is not None
    low = np.minimum(np.minimum(before.min(0), after.min(0)) - 0.05, BALL.center - 0.31)
    high = np.maximum(np.maximum(before.max(0), after.max(0)) + 0.05, BALL.center + 0.31)
    assert np.all(box[0] <= low) and np.all(box[0] > low - 1e-3)
    assert np.all(box[1] >= high) and np.all(box[1] < high + 1e-3)
    assert reach_box((surface, FLOOR), margin=0.01) is None  # a plane reaches everywhere


def test_points_box_is_the_box_of_both_states_and_propagates_a_nan() -> None:
    rng = np.random.default_rng(3)
    for n in (5, 64, 200):  # fewer than a row of 64, exactly one, and a tail
        pos = np.zeros((n, 4), np.float32)
        prev = np.zeros((n, 4), np.float32)
        pos[:, :3] = rng.normal(0.0, 2.0, (n, 3))
        prev[:, :3] = rng.normal(0.5, 2.0, (n, 3))
        both = np.concatenate([pos[:, :3], prev[:, :3]]).astype(np.float64)
        for work in (None, np.empty_like(pos)):
            box = points_box(pos, prev, work)
            assert np.array_equal(box, np.array([both.min(0), both.max(0)]))
        prev[n // 2, 1] = np.nan
        assert np.isnan(points_box(pos, prev, np.empty_like(pos))[:, 1]).all()


def test_the_batch_begins_its_members_frames_at_once_as_each_would() -> None:
    """``_Batch._begin_quick`` (every member's ``begin_frame`` in a few array calls) gives
    what the members' own ``begin_frame`` give: moving pins, a member without pins, pins
    that jump (carried), non-finite targets (warned), a frame step given."""
    from addon.sim.many import world as world_module

    def scene() -> list[Simulator]:
        sims = []
        for i in range(6):
            pins = () if i == 2 else (380, 399)
            sims.append(Simulator(_cloth(20, 0.5, 0.6 * i, pins), SimSettings.cloth()))
        return sims

    quick, slow = World(scene(), processes=0), World(scene(), processes=0)
    used = []
    real = world_module._Batch._begin_quick

    def counted(self, frame_dt, frames):  # type: ignore[no-untyped-def]
        out = real(self, frame_dt, frames)
        used.append(out is not None)
        return out

    for frame in range(1, 10):
        frames = []
        for i, sim in enumerate(quick.sims):
            targets = sim.model.rest_positions[sim.pinned_ids] + np.array([0.0, 0.02 * frame, 0.0])
            if frame >= 4 and i == 3:
                targets = targets + np.array(
                    [100.0, 0.0, 0.0]
                )  # a jump at 4: carried with the pins
            if frame == 6 and i == 1:
                targets[np.searchsorted(sim.pinned_ids, 380)] = np.nan
            frames.append(ObjectFrame(pinned_targets=targets))
        world_module._Batch._begin_quick = counted  # type: ignore[method-assign]
        try:
            a = quick.step(frames, 1.0 / 30.0 if frame % 2 else None)
        finally:
            world_module._Batch._begin_quick = lambda *args: None  # type: ignore[method-assign]
        try:
            b = slow.step(frames, 1.0 / 30.0 if frame % 2 else None)
        finally:
            world_module._Batch._begin_quick = real  # type: ignore[method-assign]
        for x, y in zip(a, b, strict=True):
            assert np.array_equal(x.positions, y.positions)
            assert x.warnings == y.warnings  # each member's own, this frame's only
        said = {i: r.warnings for i, r in enumerate(a) if r.warnings}
        if frame == 4:
            assert list(said) == [3] and "carried" in said[3][0]
        elif frame == 6:
            assert list(said) == [1] and said[1] == ["1 non-finite pinned targets ignored"]
        else:
            assert not said
    assert used == [True, True, True, False, True, False, True, True, True]
    assert [s.warnings for s in quick.sims] == [s.warnings for s in slow.sims]
    assert any("carried" in w for w in quick.sims[3].warnings)
    assert any("non-finite" in w for w in quick.sims[1].warnings)


def test_a_self_colliding_object_is_stepped_on_its_own_and_equals_it_alone() -> None:
    scene = [
        (_cloth(8, 0.5, 0.0, (0, 7)), SimSettings.cloth(self_collision=True)),
        (_cloth(8, 0.5, 1.0, (0, 7)), SimSettings.cloth()),
    ]
    own = [grid_triangles(8, 8), None]
    alone = [Simulator(m, s, triangles=t) for (m, s), t in zip(scene, own, strict=True)]
    world = World([Simulator(m, s, triangles=t) for (m, s), t in zip(scene, own, strict=True)])
    for _ in range(5):
        together = world.step([ObjectFrame(colliders=(FLOOR,))] * 2)
        for sim, result in zip(alone, together, strict=True):
            assert np.array_equal(sim.step(colliders=(FLOOR,)).positions, result.positions)
    assert world.sims[0].self_colliding and not world.sims[1].self_colliding
    assert world._alone == [0]  # the self-colliding one on its own, the other in a batch
