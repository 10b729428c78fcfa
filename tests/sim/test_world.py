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
from addon.sim.world import ObjectFrame, World

from .grids import quad_grid

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
    ]


def _frames(frame: int, models: list[ClothModel]) -> list[ObjectFrame]:
    moving = models[1].rest_positions.copy()
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
    ]


def test_world_equals_each_object_alone() -> None:
    scene = _scene()
    models = [m for m, _ in scene]
    alone = [Simulator(m, s) for m, s in scene]
    world = World([Simulator(m, s) for m, s in scene])
    for frame in range(1, 31):
        inputs = _frames(frame, models)
        together = world.step(inputs)
        for sim, f, result in zip(alone, inputs, together, strict=True):
            solo = sim.step(None, f.pinned_targets, f.object_matrix, f.colliders)
            assert np.array_equal(solo, result)
    assert len(world._batches or []) == 2  # 12 and 6 substeps; the classic one alone
    moved = np.linalg.norm(together[0] - models[0].rest_positions, axis=1).max()
    assert moved > 0.3


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
        together = world.step(inputs)
        for sim, result in zip(alone, together, strict=True):
            assert np.array_equal(sim.step(colliders=(FLOOR,)), result)
    assert np.array_equal(world.sims[0].state()[0], alone[0].state()[0])


def test_an_exploding_object_recovers_alone() -> None:
    scene = _scene()[:2]
    world = World([Simulator(m, s) for m, s in scene])
    world.step()
    good = world.sims[0].state()[0]
    bad = world.sims[1].state()[0].copy()
    world.sims[1].vel[3, :3] = np.nan  # a broken point in object 1 only
    out = world.step()
    assert world.sims[1].recoveries == 1 and world.sims[0].recoveries == 0
    assert np.abs(out[1]).max() < 100.0 and np.allclose(out[1], bad, atol=1e-6)
    assert not np.array_equal(out[0], good)  # object 0 went on moving
