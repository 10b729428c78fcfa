"""The classic solver's stability bound, against single oscillators worked out by hand, and
the classic solver at its defaults and with the book's constants on a colliding cloth."""

from __future__ import annotations

import math

import numpy as np
import pytest

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
from addon.sim.classic.stability import largest_substep, point_rates

from .grids import quad_grid
from .helpers import grid_model


def _hanging(mass: float) -> ClothModel:
    """One free point hanging from a pinned one by a spring of rest length 1."""
    return ClothModel([[0.0, 0.0, 1.0], [0.0, 0.0, 0.0]], [0.0, mass], [[0, 1]])


def test_bound_of_one_spring_to_a_pin_is_two_over_omega() -> None:
    # free end of mass 0.5 on a pinned spring k = 50: w^2 = 100, bound 2 / 10 = 0.2 s
    inv = np.array([0.0, 2.0])
    rates = point_rates(np.array([[0, 1]]), np.array([50.0]), np.zeros(1), inv, np.zeros(2), 0.0)
    assert largest_substep(*rates) == pytest.approx(0.2, rel=1e-12)
    # with a damper kd = 2: g = 4, bound (sqrt(16 + 400) - 4) / 100
    rates = point_rates(np.array([[0, 1]]), np.array([50.0]), np.array([2.0]), inv, np.zeros(2), 0)
    assert largest_substep(*rates) == pytest.approx((math.sqrt(416.0) - 4.0) / 100.0, rel=1e-12)


def test_bound_of_two_free_masses_is_gershgorin() -> None:
    # masses 1 and 2, k = 10: rows 10 (1 + 1/sqrt 2) and 10 (1/2 + 1/sqrt 2); the true
    # w^2 = k (1/m1 + 1/m2) = 15 lies below the larger row, 17.07
    inv = np.array([1.0, 0.5])
    rates = point_rates(np.array([[0, 1]]), np.array([10.0]), np.zeros(1), inv, np.zeros(2), 0.0)
    w2 = 10.0 * (1.0 + 1.0 / math.sqrt(2.0))
    assert largest_substep(*rates) == pytest.approx(2.0 / math.sqrt(w2), rel=1e-12)
    assert 2.0 / math.sqrt(15.0) > largest_substep(*rates)


@pytest.mark.parametrize("kd", [0.0, 1.0])
def test_the_bound_separates_stable_from_exploding(kd: float) -> None:
    """Stepping the real solver just below the bound stays bounded, just above it grows."""
    k, mass = 400.0, 1.0
    g = kd / mass
    bound = (math.sqrt(g * g + 4.0 * k / mass) - g) / (k / mass)  # by hand, as in the docstring
    for factor, stable in ((0.98, True), (1.02, False)):
        settings = SimSettings.cloth(
            solver="CLASSIC",
            stiffness=k,
            spring_damping=kd,
            drag=0.0,
            damping=0.0,
            gravity=(0.0, 0.0, 0.0),
            substeps=1,
            fps=1.0 / (factor * bound),
            max_speed=1e30,
            max_stretch=1e30,
        )
        sim = Simulator(_hanging(mass), settings)
        sim.reset(np.array([[0.0, 0.0, 1.0], [0.0, 0.0, -0.1]]))  # stretched by 0.1
        sim.solver.substeps_for = lambda step: 1  # type: ignore[method-assign]
        for _ in range(3000):
            out = sim.step().positions
        assert (abs(float(out[1, 2])) < 1.2) == stable


def _colliding_run(
    settings: SimSettings, frames: int = 250, scale: float = 1.0, mass: float = 0.3
) -> Simulator:
    """The bench scene (a sheet pinned at two corners falls onto a sphere and the floor),
    16 x 16 points, ``scale`` x 2 m wide, with its faces (for the face wind)."""
    n = 16
    positions, sizes, corners = quad_grid(n, n, 2.0 * scale, scale)
    parts = [face_edges(sizes, corners), shear_springs(sizes, corners)]
    parts.append(bend_springs(sizes, corners, positions))
    springs, kinds = merge_with_kinds(*parts)
    masses = np.full(n * n, mass)
    masses[[0, n - 1]] = 0.0
    model = ClothModel(positions, masses, springs, kinds, face_sizes=sizes, face_corners=corners)
    sim = Simulator(model, settings)
    colliders = (
        Sphere((scale, 0.5 * scale, 0.3 * scale), 0.3 * scale),
        Plane((0.0, 0.0, 0.0), (0.0, 0.0, 1.0)),
    )
    for _ in range(frames):
        out = sim.step(colliders=colliders).positions
    assert np.isfinite(out).all()
    return sim


def test_classic_defaults_run_250_frames_without_the_guard() -> None:
    sim = _colliding_run(SimSettings.cloth(solver="CLASSIC"))
    assert sim.recoveries == 0
    assert not [w for w in sim.warnings if "unstable" in w or "softened" in w]
    assert sim.solver.substeps_for(1.0 / 24.0) > 12  # the bound asked for more than the setting
    assert sim.positions()[:, 2].min() > -0.01  # the floor held the cloth


def test_book_constants_run_250_frames_without_the_guard() -> None:
    # at the scale of the book's meshes: D3D units as metres, 150 across, mass 1 a point
    sim = _colliding_run(SimSettings.book(wind=(0.0, 3.0, 0.0)), scale=75.0, mass=1.0)
    assert sim.recoveries == 0
    assert not [w for w in sim.warnings if "unstable" in w or "softened" in w]


def test_book_constants_move_as_the_book_says() -> None:
    """A mass of 1 on one of the book's springs (Ks 8, Kd 0.5, gravity 9.8) drops to its first
    turning point after half a damped period and settles at the extension m g / k."""
    model = _hanging(1.0)
    sim = Simulator(model, SimSettings.book(substeps=40))
    k, kd, m, g = 8.0, 0.5, 1.0, 9.8
    omega = math.sqrt(k / m)
    zeta = kd / (2.0 * math.sqrt(k * m))
    omega_d = omega * math.sqrt(1.0 - zeta * zeta)
    heights = [float(sim.step().positions[1, 2]) for _ in range(24 * 30)]
    lowest = int(np.argmin(heights[:48]))
    assert (lowest + 1) / 24.0 == pytest.approx(math.pi / omega_d, abs=1.5 / 24.0)
    # first swing: overshoot 1 + exp(-zeta pi / sqrt(1 - zeta^2)) times the static extension
    overshoot = 1.0 + math.exp(-zeta * math.pi / math.sqrt(1.0 - zeta * zeta))
    assert -heights[lowest] == pytest.approx(overshoot * m * g / k, rel=0.02)
    assert -heights[-1] == pytest.approx(m * g / k, rel=1e-3)  # settled after 30 s


def test_stiffness_beyond_the_substep_cap_is_softened_and_reported() -> None:
    model = grid_model(6, pins=(0, 5))
    sim = Simulator(model, SimSettings.cloth(solver="CLASSIC", stiffness=1e9, max_substeps=50))
    assert sim.solver.substeps_for(1.0 / 24.0) == 50
    assert any("softened" in w for w in sim.warnings)
    for _ in range(50):
        sim.step()
    assert sim.recoveries == 0
