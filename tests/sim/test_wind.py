"""The face wind model against forces worked out by hand on a quad and a triangle."""

from __future__ import annotations

import numpy as np
import pytest

from addon.sim import ClothModel, SimSettings, Simulator
from addon.sim.wind import FaceWind

# a unit quad in the XY plane (normal +z) and a triangle standing in the XZ plane sharing
# vertex 1: (1,0,0) x (0,0,1) from its first corner gives the normal (0, -1, 0)
POINTS = np.array(
    [[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [2, 0, 0], [1, 0, 1]], dtype=np.float64
)
SIZES = np.array([4, 3])
CORNERS = np.array([0, 1, 2, 3, 1, 4, 5])
WIND = np.array([1.0, 3.0, 2.0])
# quad: n = (0,0,1), dot = 2, push (0,0,2), a quarter per corner
# triangle: n = (0,-1,0), dot = -3, push (0,3,0), a third per corner
EXPECTED = np.array(
    [[0, 0, 0.5], [0, 1, 0.5], [0, 0, 0.5], [0, 0, 0.5], [0, 1, 0], [0, 1, 0]], dtype=np.float64
)


def test_face_forces_by_hand() -> None:
    wind = FaceWind(SIZES, CORNERS, 6)
    assert wind.forces(POINTS, WIND) == pytest.approx(EXPECTED, abs=1e-12)
    # the normal's sign does not matter: the push follows the wind's side
    flipped = FaceWind(SIZES, np.array([0, 3, 2, 1, 1, 5, 4]), 6)
    assert flipped.forces(POINTS, WIND) == pytest.approx(EXPECTED, abs=1e-12)


def test_edge_on_and_degenerate_faces_get_nothing() -> None:
    wind = FaceWind(SIZES, CORNERS, 6)
    # the quad is edge-on to a horizontal wind; the triangle takes (0, 1, 0), a third a corner
    third = np.array([0.0, 1.0 / 3.0, 0.0])
    expected = np.array([np.zeros(3), third, np.zeros(3), np.zeros(3), third, third])
    assert wind.forces(POINTS, np.array([1.0, 1.0, 0.0])) == pytest.approx(expected, abs=1e-15)
    flat = POINTS.copy()
    flat[5] = (1.5, 0.0, 0.0)  # the triangle collapsed onto a line
    assert np.abs(wind.forces(flat, WIND)[4:]).max() == 0.0


def _model() -> ClothModel:
    return ClothModel(
        POINTS, np.full(6, 2.0), np.empty((0, 2)), face_sizes=SIZES, face_corners=CORNERS
    )


@pytest.mark.parametrize("solver", ["CLASSIC", "XPBD"])
def test_one_step_moves_points_by_the_face_force(solver: str) -> None:
    settings = SimSettings.cloth(
        solver=solver,
        wind=WIND,
        wind_model="FACE",
        gravity=(0, 0, 0),
        drag=0.0,
        substeps=1,
        fps=10.0,
    )
    sim = Simulator(_model(), settings)
    sim.step()
    _, vel = sim.state()
    # v = F / m * dt with m = 2, dt = 0.1
    assert vel == pytest.approx(EXPECTED / 2.0 * 0.1, abs=1e-5)


def test_uniform_model_is_unchanged_and_face_needs_faces() -> None:
    uniform = SimSettings.cloth(wind=WIND, gravity=(0, 0, 0), drag=0.0, substeps=1, fps=10.0)
    sim = Simulator(_model(), uniform)
    sim.step()
    assert sim.state()[1] == pytest.approx(np.tile(WIND / 2.0 * 0.1, (6, 1)), abs=1e-5)
    faceless = ClothModel(POINTS, np.full(6, 2.0), np.empty((0, 2)))
    sim = Simulator(faceless, SimSettings.cloth(wind=WIND, wind_model="FACE"))
    assert any("face wind needs" in w for w in sim.warnings)


def test_bad_faces_and_wind_model_are_reported() -> None:
    model = ClothModel(
        POINTS, np.ones(6), np.empty((0, 2)), face_sizes=[4, 3], face_corners=[0, 1, 2, 9, 1, 4, 5]
    )
    assert model.face_sizes.tolist() == [3] and any("faces dropped" in w for w in model.warnings)
    _, notes = SimSettings.cloth(wind_model="GUST").validated()  # type: ignore[arg-type]
    assert any("wind model" in n for n in notes)
