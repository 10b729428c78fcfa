"""Contact resolution against Coulomb's rule and the book's response, evaluated point by point."""

from __future__ import annotations

import numpy as np
import pytest

from addon.sim.collide.colliders import (
    Plane,
    Scratch,
    Sphere,
    resolve_positions,
    resolve_velocities,
)
from addon.sim.mesh.rows import put_columns, take_columns
from addon.sim.xpbd.solver import XpbdSolver

from .helpers import storage_rows

CENTRE = np.array([0.0, 0.0, 0.0])
RADIUS, MARGIN, MU = 1.0, 0.01, 0.3


def _expected_position(p: np.ndarray, before: np.ndarray) -> np.ndarray:
    """Pushed to the surface, tangential slip cut to mu * push (static below it)."""
    d = p - CENTRE
    dist = np.linalg.norm(d)
    if dist >= RADIUS + MARGIN:
        return p
    n = d / dist
    push = RADIUS + MARGIN - dist
    out = p + n * push
    moved = out - before
    tangential = moved - n * (moved @ n)
    slip = np.linalg.norm(tangential)
    cut = 1.0 if slip <= MU * push else MU * push / slip
    return out - tangential * cut


def test_sphere_positions_match_the_rule_point_by_point() -> None:
    before = np.array(
        [[0.0, 0.0, 1.2], [0.3, 0.1, 1.0], [2.0, 0.0, 0.0], [0.5, 0.5, 0.6], [0.0, 0.9, 0.0]]
    )
    after = before + np.array(
        [[0.0, 0.0, -0.3], [0.2, 0.0, -0.3], [0.0, 0.0, 0.0], [0.01, 0.0, -0.02], [0, 0, 0]]
    )
    pos, prev = XpbdSolver.make_state(after), XpbdSolver.make_state(before)
    movable = np.array([True, True, True, True, False])
    count = resolve_positions((Sphere(CENTRE, RADIUS),), pos, prev, movable, MARGIN, MU)
    assert count == 3  # points 0, 1 and 3 are inside; 4 is inside but pinned
    for i in range(4):
        expected = _expected_position(after[i], before[i])
        assert np.allclose(pos[i, :3], expected, atol=2e-6), i
    assert (pos[4, :3] == after[4].astype(np.float32)).all()
    assert (pos[:, 3] == 0).all()


def test_plane_velocities_follow_the_book() -> None:
    pos = np.array([[0.0, 0.0, -0.2, 0.0], [1.0, 1.0, 0.5, 0.0], [0.0, 2.0, 0.001, 0.0]])
    vel = np.array([[1.0, 0.0, -2.0, 0.0], [0.0, 0.0, -1.0, 0.0], [0.5, 0.5, 3.0, 0.0]])
    movable = np.ones(3, dtype=bool)
    resolve_velocities((Plane((0, 0, 0), (0, 0, 1)),), pos, vel, movable, MARGIN, MU)
    # 0: pushed to z = margin, inward z velocity removed, tangential x scaled by 1 - mu
    assert np.allclose(pos[0], [0.0, 0.0, MARGIN, 0.0])
    assert np.allclose(vel[0], [0.7, 0.0, 0.0, 0.0])
    assert np.allclose(pos[1], [1.0, 1.0, 0.5, 0.0]) and np.allclose(vel[1], [0, 0, -1, 0])
    # 2: inside the margin, moving out: outward normal velocity kept, tangential scaled
    assert np.allclose(pos[2], [0.0, 2.0, MARGIN, 0.0])
    assert np.allclose(vel[2], [0.35, 0.35, 3.0, 0.0])


def test_columns_round_trip_for_both_storages() -> None:
    for dtype in (np.float32, np.float64):
        rows = np.arange(24, dtype=dtype).reshape(6, 4)
        rows[:, 3] = 0
        idx = np.array([4, 1, 5])
        cols = take_columns(rows, idx)
        assert cols.shape == (3, 3) and cols.flags.c_contiguous
        assert (cols == rows[idx, :3].T).all()
        put_columns(rows, idx, cols * 2)
        assert (rows[idx, :3] == 2 * np.arange(24, dtype=dtype).reshape(6, 4)[idx, :3]).all()
        assert (rows[:, 3] == 0).all()


def _expected_on_plane(
    p: np.ndarray, before: np.ndarray, point: np.ndarray, normal: np.ndarray
) -> np.ndarray:
    """The plane's version of ``_expected_position``: push along the normal, Coulomb slip."""
    n = normal / np.linalg.norm(normal)
    height = (p - point) @ n
    if height >= MARGIN:
        return p
    push = MARGIN - height
    out = p + n * push
    moved = out - before
    tangential = moved - n * (moved @ n)
    slip = np.linalg.norm(tangential)
    cut = 1.0 if slip <= MU * push else MU * push / slip
    return out - tangential * cut


def test_plane_positions_match_the_rule_for_level_and_tilted_planes() -> None:
    rng = np.random.default_rng(7)
    before = rng.uniform(-1.0, 1.0, (40, 3))
    after = before + rng.normal(0.0, 0.05, (40, 3))
    after[::3] += [0.3, -0.2, 0.0]  # slipping beyond the static limit
    for point, normal in (([0, 0, 0.1], [0, 0, 1]), ([0.1, 0.2, 0], [0.3, -0.4, 0.8])):
        plane = Plane(point, normal)
        pos, prev = XpbdSolver.make_state(after), XpbdSolver.make_state(before)
        movable = np.ones(len(after), dtype=bool)
        movable[5] = False
        count = resolve_positions((plane,), pos, prev, movable, MARGIN, MU)
        n = np.asarray(normal, float) / np.linalg.norm(normal)
        inside = ((after - np.asarray(point, float)) @ n < MARGIN) & movable
        assert count == int(inside.sum()) and count > 5
        for i in range(len(after)):
            expected = (
                after[i]
                if not movable[i]
                else _expected_on_plane(
                    after[i], before[i], np.asarray(point, float), np.asarray(normal, float)
                )
            )
            assert np.allclose(pos[i, :3], expected, atol=2e-6), i
        assert (pos[:, 3] == 0).all()


# -- the plane rule point by point, and no contacts ------------------------------------------


def _expected_plane(
    p: np.ndarray,
    before: np.ndarray,
    point: np.ndarray,
    normal: np.ndarray,
    margin: float,
    mu: float,
) -> np.ndarray:
    n = normal / np.linalg.norm(normal)
    height = p @ n - (point @ n + margin)
    if height >= 0.0:
        return p
    push = -height
    out = p + n * push
    moved = out - before
    tangential = moved - n * (moved @ n)
    slip = np.linalg.norm(tangential)
    cut = 1.0 if slip <= mu * push else mu * push / slip
    return out - tangential * cut


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "normal", [(0.0, 0.0, 1.0), (0.0, 0.0, -1.0), (1e-9, 0.0, 1.0), (0.3, -0.4, 0.8)]
)
def test_plane_contacts_match_the_rule_point_by_point(dtype: type, normal: tuple) -> None:
    rng = np.random.default_rng(8)
    before = rng.normal(0.0, 0.5, (40, 3))
    after = before + rng.normal(0.0, 0.1, (40, 3))
    movable = rng.random(40) < 0.8
    point = np.array([0.1, -0.2, 0.05])
    pos, prev = storage_rows(after, dtype), storage_rows(before, dtype)
    plane = Plane(point, normal)
    scratch = Scratch(40, dtype)
    count = resolve_positions((plane,), pos, prev, movable, 0.01, 0.4, scratch)
    tol = 2e-5 if dtype == np.float32 else 1e-12
    expected_count = 0
    for i in range(40):
        if not movable[i]:
            np.testing.assert_array_equal(pos[i], storage_rows(after[i : i + 1], dtype)[0])
            continue
        want = _expected_plane(after[i], before[i], point, np.array(normal), 0.01, 0.4)
        expected_count += int(not np.array_equal(want, after[i]))
        np.testing.assert_allclose(pos[i, :3], want, atol=tol)
    assert count == expected_count and np.all(pos[:, 3] == 0.0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_no_contacts_change_nothing(dtype: type) -> None:
    pos = storage_rows(np.full((5, 3), 3.0), dtype)
    keep = pos.copy()
    colliders = (Plane([0, 0, 0], [0, 0, 1]), Sphere([0, 0, 0], 1.0))
    assert resolve_positions(colliders, pos, pos.copy(), np.ones(5, bool), 0.01, 0.5) == 0
    assert np.array_equal(pos, keep)
    pos[:, 2] = -3.0  # below the plane, but none may move
    keep = pos.copy()
    assert resolve_positions(colliders, pos, pos.copy(), np.zeros(5, bool), 0.01, 0.5) == 0
    assert np.array_equal(pos, keep)
