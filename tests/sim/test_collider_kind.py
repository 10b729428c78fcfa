"""A collider kind written outside the package works everywhere a built-in one does: alone,
merged in a World, and in a World's helper process, through ``Collider``'s methods only.

``Box`` (an axis-aligned box, defined here and nowhere else) pushes a point inside it (grown
by the margin) out through its nearest face. Twenty sheets stepped in a World whose second
half a helper process steps get the same positions, bit for bit, as each sheet stepped
alone with its own boxes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np
import pytest

from addon.sim import Collider, SimSettings, Simulator
from addon.sim.collide.colliders import Contacts, Scratch
from addon.sim.many import parallel
from addon.sim.many.world import ObjectFrame, World

from .test_parallel import _sheets


@pytest.fixture(autouse=True)
def _no_helpers_left():
    yield
    parallel.shutdown()
    assert parallel.running() == 0


@dataclass
class Box(Collider):
    """Points kept ``margin`` outside the box ``low``..``high``. ``move_to`` moves it in place
    (its ``version`` counts the moves: a helper's copy is sent the new corners alone)."""

    low: np.ndarray
    high: np.ndarray
    friction: float | None = None
    moves: int = 0

    def contacts(self, pos: np.ndarray, margin: float, scratch: Scratch | None = None) -> Contacts:
        del scratch
        xyz = pos[:, :3].astype(np.float64)
        below = xyz - (self.low - margin)  # > 0 inside, per axis
        above = (self.high + margin) - xyz
        inside = np.flatnonzero(((below > 0.0) & (above > 0.0)).all(axis=1))
        depth = np.concatenate([below[inside], above[inside]], axis=1)  # (k, 6)
        face = np.argmin(depth, axis=1)  # 0-2: out through a low face, 3-5: a high one
        normals = np.zeros((3, inside.size), dtype=pos.dtype)
        normals[face % 3, np.arange(inside.size)] = np.where(face < 3, -1.0, 1.0)
        push = depth[np.arange(inside.size), face].astype(pos.dtype)
        return inside, normals, push

    def reach(self, margin: float) -> np.ndarray | None:
        return np.array([self.low - margin, self.high + margin])

    def move_to(self, low: np.ndarray, high: np.ndarray) -> None:
        self.low, self.high = np.asarray(low, float), np.asarray(high, float)
        self.moves += 1

    @property
    def version(self) -> int:
        return self.moves

    def update_since(self, version: int) -> object | None:
        return (self.low, self.high) if version + 1 == self.moves else None

    def apply_update(self, update: object) -> None:
        low, high = cast(tuple[np.ndarray, np.ndarray], update)
        self.move_to(low, high)


def _floor(frame: int) -> tuple[np.ndarray, np.ndarray]:
    """A slab under all the sheets (which hang from z = 1 down to 0.5) rising to 0.8."""
    return np.array([-1.0, -1.0, -1.0]), np.array([13.0, 2.0, 0.2 + 0.03 * frame])


def _block(frame: int) -> tuple[np.ndarray, np.ndarray]:
    """A block sliding along x through the sheets' lower parts."""
    x = -0.5 + 0.4 * frame
    return np.array([x, 0.1, 0.4]), np.array([x + 0.6, 0.4, 0.8])


def test_a_new_collider_kind_in_a_world_with_a_helper_equals_each_sheet_alone() -> None:
    scene = _sheets(20)
    alone = [Simulator(m, s) for m, s in scene]
    own = [(Box(*_floor(0)), Box(*_block(0))) for _ in alone]
    world = World([Simulator(m, s) for m, s in scene], processes=1)
    world.pace.helpers = lambda: True  # type: ignore[method-assign]  # busy machine or not
    floor, block = Box(*_floor(0)), Box(*_block(0), friction=0.4)
    for frame in range(1, 21):
        floor.move_to(*_floor(frame))  # moved in place: the helper's copy gets the corners
        if frame == 12:  # moved twice between two frames: the helper gets a new copy
            floor.move_to(*_floor(frame))
        block = Box(*_block(frame), friction=0.4)  # a new one each frame: sent whole
        together = world.step([ObjectFrame(colliders=(floor, block))] * len(scene))
        for sim, (f, b), result in zip(alone, own, together, strict=True):
            f.move_to(*_floor(frame))
            b.move_to(*_block(frame))
            b.friction = 0.4
            assert np.array_equal(sim.step(colliders=(f, b)).positions, result.positions)
    assert world._batches is not None and len(world._batches) == 2
    helped = world._batches[1]
    assert helped.remote is not None and helped.remote.helper_cpu > 0.0  # the helper stepped
    assert not any(w for sim in world.sims for w in sim.warnings)
    # the boxes acted: every sheet rests on the risen slab, its margin above it
    lowest = min(float(r.positions[:, 2].min()) for r in together)
    margin = SimSettings.cloth().collision_margin
    assert abs(lowest - (_floor(20)[1][2] + margin)) < 1e-3
    world.close()
