"""Self-collision against numbers computed here: the shared correction of one contact, and
a cloth folded onto itself that must not pass through itself (counted by an independent
triangle-triangle test)."""

from __future__ import annotations

import numpy as np

from addon.sim import ClothModel, SimSettings, Simulator
from addon.sim.self_collision import SelfCollision
from addon.sim.solver_xpbd import XpbdSolver
from addon.sim.springs import bend_springs, face_edges, merge_with_kinds, shear_springs

from .grids import quad_grid
from .meshes import grid_triangles, intersecting_pairs

D = 0.015


def _one_contact(inverse_masses: np.ndarray, depth: float) -> np.ndarray:
    """Point 3 above the centroid of triangle 0-1-2 (in z = 0) at ``D - depth``."""
    tri = np.array([[0.0, 0.0, 0.0], [0.3, 0.0, 0.0], [0.0, 0.3, 0.0]])
    point = np.array([[0.1, 0.1, D - depth]])
    rest = np.vstack([tri, point + np.array([5.0, 0.0, 0.0])])  # apart at rest: not excluded
    collision = SelfCollision(np.array([[0, 1, 2]]), rest, inverse_masses, D)
    now = np.vstack([tri, point])
    pos = XpbdSolver.make_state(now)
    prev = pos.copy()
    count = collision.resolve_positions(pos, prev, inverse_masses > 0, 0.0, 0.0)
    assert count == 1
    return pos[:, :3].astype(float) - now


def test_one_contact_is_shared_by_inverse_mass_and_barycentric_weight() -> None:
    depth = 0.006
    # equal masses, the point over the centroid (weights 1/3): the point takes
    # 1 / (1 + 3 / 9) = 3/4 of the depth, each corner 1/3 of that the other way
    moved = _one_contact(np.ones(4), depth)
    assert np.allclose(moved[3], [0, 0, 0.75 * depth], atol=1e-6)
    assert np.allclose(moved[:3], [[0, 0, -0.25 * depth]] * 3, atol=1e-6)
    # a pinned triangle: the point takes all of it; a pinned point: the triangle does
    moved = _one_contact(np.array([0.0, 0.0, 0.0, 1.0]), depth)
    assert np.allclose(moved[3], [0, 0, depth], atol=1e-6)
    assert np.allclose(moved[:3], 0, atol=1e-6)
    moved = _one_contact(np.array([1.0, 1.0, 1.0, 0.0]), depth)
    assert np.allclose(moved[:3], [[0, 0, -depth]] * 3, atol=1e-6)
    assert np.allclose(moved[3], 0, atol=1e-6)


def _folded_sheet(nx: int = 15, ny: int = 31, h: float = 0.04, r: float = 0.03):
    """A strip folded onto itself: rows along y go out flat (z = 0), round a half circle of
    radius ``r`` and come back over the first part at z = 2 r. The flat part is pinned."""
    positions, sizes, corners = quad_grid(nx, ny, h * (nx - 1))
    s = positions[:, 1].copy()  # arc length along the strip
    fold = 0.52
    arc = np.pi * r
    y, z = s.copy(), np.zeros_like(s)
    bend = (s > fold) & (s < fold + arc)
    angle = (s[bend] - fold) / r
    y[bend] = fold + r * np.sin(angle)
    z[bend] = r - r * np.cos(angle)
    top = s >= fold + arc
    y[top] = fold - (s[top] - fold - arc)
    z[top] = 2 * r
    positions[:, 1], positions[:, 2] = y, z
    springs, kinds = merge_with_kinds(
        face_edges(sizes, corners),
        shear_springs(sizes, corners),
        bend_springs(sizes, corners, positions),
    )
    masses = np.where(s <= fold, 0.0, 0.3 / (nx * ny))
    return ClothModel(positions, masses, springs, kinds), grid_triangles(nx, ny)


def _run(self_collision: bool, frames: int = 36) -> tuple[list[int], np.ndarray, ClothModel]:
    model, triangles = _folded_sheet()
    settings = SimSettings.cloth(self_collision=self_collision, self_distance=D, substeps=12)
    sim = Simulator(model, settings, triangles=triangles)
    counts, out = [], model.rest_positions
    for frame in range(frames):
        out = sim.step()
        if frame % 3 == 2:
            counts.append(intersecting_pairs(out, triangles))
    assert sim.recoveries == 0
    return counts, out, model


def test_a_folded_cloth_does_not_pass_through_itself() -> None:
    counts, out, model = _run(True)
    assert counts == [0] * len(counts)
    # the flap came down and lies on the pinned part, about the distance above it
    flap = model.rest_positions[:, 2] > 0.059
    middle = flap & (np.abs(model.rest_positions[:, 1] - 0.25) < 0.05)
    assert out[flap, 2].max() < 0.059
    assert out[middle, 2].min() > 0.5 * D  # never closer than half the distance
    assert out[middle, 2].mean() < 0.035  # came down from 0.06


def test_without_self_collision_the_same_fold_passes_through() -> None:
    counts, out, model = _run(False)
    assert max(counts) > 0  # the control: the scene above needs self-collision
    flap = model.rest_positions[:, 2] > 0.059
    assert out[flap, 2].min() < -0.05


def test_self_collision_setting_needs_triangles_and_the_xpbd_solver() -> None:
    model, triangles = _folded_sheet(5, 9)
    sim = Simulator(model, SimSettings.cloth(self_collision=True))
    assert any("needs the cloth's triangles" in w for w in sim.warnings)
    sim = Simulator(model, SimSettings.cloth(self_collision=True, solver="CLASSIC"), triangles)
    assert any("needs the XPBD solver" in w for w in sim.warnings)
