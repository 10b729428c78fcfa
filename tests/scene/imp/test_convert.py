"""The D3D -> Blender conversion maths (numpy only)."""

from __future__ import annotations

import numpy as np
import pytest
from xof.addon.scene.imp.convert import Conversion, mirror_for_axes, reversed_winding_order

from ..scene_fixtures import P3, trs


def test_default_is_the_y_z_swap():
    conv = Conversion.from_options()
    np.testing.assert_array_equal(conv.mirror, P3)
    np.testing.assert_array_equal(conv.positions(np.array([[1.0, 2.0, 3.0]])), [[1.0, 3.0, 2.0]])


@pytest.mark.parametrize("forward", ["X", "Y", "Z", "-X", "-Y", "-Z"])
@pytest.mark.parametrize("up", ["X", "Y", "Z", "-X", "-Y", "-Z"])
def test_every_axis_choice_is_a_mirror_sending_up_to_z_and_forward_to_y(forward, up):
    if forward[-1] == up[-1]:
        with pytest.raises(ValueError):
            mirror_for_axes(forward, up)
        return
    m = mirror_for_axes(forward, up)
    unit = {"X": [1, 0, 0], "Y": [0, 1, 0], "Z": [0, 0, 1]}
    f = np.array(unit[forward[-1]]) * (-1 if forward.startswith("-") else 1)
    u = np.array(unit[up[-1]]) * (-1 if up.startswith("-") else 1)
    np.testing.assert_allclose(m @ f, [0, 1, 0])
    np.testing.assert_allclose(m @ u, [0, 0, 1])
    assert np.linalg.det(m) == pytest.approx(-1.0)


def test_matrix_conversion_commutes_with_positions():
    """Transforming then converting equals converting then applying the converted matrix."""
    conv = Conversion.from_options(scale=2.5)
    m = trs((1.0, -2.0, 3.0), 30.0, (1.0, 2.0, 0.5))
    pts = np.array([[0.1, 0.2, 0.3], [-1.0, 4.0, 2.0]])
    file_world = pts @ m[:3, :3] + m[3, :3]  # D3D row vectors
    mb = conv.matrix(m)
    got = conv.positions(pts) @ mb[:3, :3].T + mb[:3, 3]
    np.testing.assert_allclose(got, conv.positions(file_world), atol=1e-12)
    # and the explicit formula P * M^T * P (no scale)
    plain = Conversion.from_options().matrix(m)
    p4 = np.eye(4)
    p4[:3, :3] = P3
    np.testing.assert_allclose(plain, p4 @ m.T @ p4, atol=1e-12)


def test_uv_v_flips():
    np.testing.assert_allclose(
        Conversion.uvs(np.array([[0.25, 0.0], [0.5, 0.75]])), [[0.25, 1.0], [0.5, 0.25]]
    )


def test_reversed_winding_keeps_first_corner():
    corners = np.array([10, 11, 12, 20, 21, 22, 23, 30, 31, 32, 33, 34])
    order = reversed_winding_order(np.array([3, 4, 5]))
    assert corners[order].tolist() == [10, 12, 11, 20, 23, 22, 21, 30, 34, 33, 32, 31]
    assert reversed_winding_order(np.array([], dtype=np.int64)).tolist() == []


@pytest.mark.parametrize(
    ("forward", "up", "scale"),
    [("Z", "Y", 1.0), ("-Z", "Y", 1.0), ("X", "-Z", 2.5), ("Y", "Z", 0.01)],
)
def test_single_precision_is_the_double_result_rounded_once(forward, up, scale):
    """``single=True`` (the importer's float32 arrays, no float64 pass) gives the float64
    result rounded once: the exact product of the signed permutation, computed here."""
    conv = Conversion.from_options(forward, up, scale)
    rng = np.random.default_rng(4)
    v = rng.normal(size=(500, 3)) * 10.0 ** rng.integers(-8, 8, size=(500, 1))
    exact = v @ conv.mirror.T  # a signed permutation: exact in float64
    positions = conv.positions(v, single=True)
    assert positions.dtype == np.float32
    np.testing.assert_array_equal(positions, (exact * scale).astype(np.float32))
    np.testing.assert_array_equal(conv.directions(v, single=True), exact.astype(np.float32))
    uv = rng.uniform(-2, 3, size=(200, 2))
    flipped = Conversion.uvs(uv, single=True)
    assert flipped.dtype == np.float32
    np.testing.assert_array_equal(flipped, np.c_[uv[:, 0], 1.0 - uv[:, 1]].astype(np.float32))
