"""Spline positions (positionquality 0) and the Bezier handles that make Blender draw them.

Expected values are worked out by hand: on a segment the Hermite curve is the cubic with the
keys' values and tangents at its ends, solved for its coefficients below.
"""

from __future__ import annotations

import numpy as np
import pytest
from xof.addon.scene.anim import bezier_keys, position_spline

TIMES = np.array([0.0, 1.0, 3.0])
VALUES = np.array([[0.0], [1.0], [5.0]])


def test_tangents_are_neighbour_chords_inside_and_zero_at_the_ends():
    got = position_spline.hermite_tangents(TIMES, VALUES)
    assert np.allclose(got[:, 0], [0.0, 5.0 / 3.0, 0.0])


@pytest.mark.parametrize(
    ("t", "value", "slope"),
    [
        # [0, 1]: p(0)=0, p'(0)=0, p(1)=1, p'(1)=5/3 -> p = -s^3/3 + 4 s^2/3
        (0.5, 7.0 / 24.0, 13.0 / 12.0),
        (1.0, 1.0, 5.0 / 3.0),
        # [1, 3], s = (t-1)/2: q = 1 + 10 s/3 + 16 s^2/3 - 14 s^3/3; slope dq/ds / 2
        (2.0, 41.0 / 12.0, 31.0 / 12.0),  # dq/ds = 10/3 + 32 s/3 - 14 s^2 at s=1/2, over 2
        (3.0, 5.0, 0.0),
        (-1.0, 0.0, 0.0),  # outside: the end keys' values, standing still
        (4.0, 5.0, 0.0),
    ],
)
def test_spline_value_and_slope(t, value, slope):
    got, got_slope = position_spline.evaluate(TIMES, VALUES, np.array([t]))
    assert got[0, 0] == pytest.approx(value, abs=1e-12)
    assert got_slope[0, 0] == pytest.approx(slope, abs=1e-12)


def test_evenly_spaced_points_on_a_line_stay_on_it_at_constant_speed():
    times = np.arange(5.0)
    values = np.stack([2.0 * times + 1.0, -times], axis=1)
    at = np.array([1.25, 1.5, 2.75])
    got, slope = position_spline.evaluate(times, values, at)
    assert np.allclose(got, np.stack([2.0 * at + 1.0, -at], axis=1), atol=1e-12)
    assert np.allclose(slope, [[2.0, -1.0]] * 3, atol=1e-12)


def test_single_key_is_constant():
    got, slope = position_spline.evaluate(np.array([3.0]), np.array([[1.0, 2.0, 3.0]]), [0, 9])
    assert np.array_equal(got, [[1, 2, 3], [1, 2, 3]]) and not slope.any()


def bezier(p0, p1, p2, p3, u):
    return (1 - u) ** 3 * p0 + 3 * (1 - u) ** 2 * u * p1 + 3 * (1 - u) * u**2 * p2 + u**3 * p3


def test_free_handles_trace_the_spline_also_across_a_split_span():
    # keys at the spline's key times plus 2.0 inside [1, 3] (another part's key time);
    # handles are float32, as Blender stores them
    frames = np.array([0.0, 1.0, 2.0, 3.0])
    values, slopes = position_spline.evaluate(TIMES, VALUES, frames)
    left, right = (h[0].reshape(-1, 2) for h in bezier_keys.handles(frames, values, slopes))
    # handles a third of the neighbouring spans away in time, at the ends the one neighbour's
    assert np.allclose(left[:, 0], [-1 / 3, 2 / 3, 5 / 3, 8 / 3])
    assert np.allclose(right[:, 0], [1 / 3, 4 / 3, 7 / 3, 10 / 3])
    for k, (x, want) in enumerate([(0.5, 7 / 24), (1.5, None), (2.5, None)]):
        u = x - frames[k]  # time runs linearly: handles at thirds
        xs = bezier(frames[k], right[k, 0], left[k + 1, 0], frames[k + 1], u)
        assert xs == pytest.approx(x, abs=1e-6)
        ys = bezier(values[k, 0], right[k, 1], left[k + 1, 1], values[k + 1, 0], u)
        expected = position_spline.evaluate(TIMES, VALUES, np.array([x]))[0][0, 0]
        assert ys == pytest.approx(expected if want is None else want, abs=1e-6)
    # the [1, 3] cubic by hand at t = 2.5 (s = 3/4): 1 + 10/3 s + 16/3 s^2 - 14/3 s^3
    s = 0.75
    hand = 1 + 10 / 3 * s + 16 / 3 * s**2 - 14 / 3 * s**3
    ys = bezier(values[2, 0], right[2, 1], left[3, 1], values[3, 0], 0.5)
    assert ys == pytest.approx(hand, abs=1e-6)


def test_linear_curves_get_handles_a_third_of_the_way_to_their_neighbours():
    values = np.array([[0.0, 1.0], [3.0, 1.0], [-3.0, 4.0]])  # two channels
    left, right = bezier_keys.handles(np.array([0.0, 3.0, 9.0]), values)
    assert left.dtype == np.float32 and left.shape == (2, 6)
    assert np.allclose(left[0].reshape(-1, 2), [[-1.0, 0.0], [2.0, 2.0], [7.0, -1.0]])
    assert np.allclose(right[0].reshape(-1, 2), [[1.0, 1.0], [5.0, 1.0], [11.0, -3.0]])
    assert np.allclose(left[1].reshape(-1, 2), [[-1.0, 1.0], [2.0, 1.0], [7.0, 3.0]])
    assert np.allclose(right[1].reshape(-1, 2), [[1.0, 1.0], [5.0, 2.0], [11.0, 4.0]])


def test_interleave_gives_float32_co_pairs_per_channel():
    got = bezier_keys.interleave(np.array([1.0, 2.0]), np.array([[3.0, 4.0], [5.0, 6.0]]))
    assert got.dtype == np.float32
    assert got.tolist() == [[1.0, 3.0, 2.0, 5.0], [1.0, 4.0, 2.0, 6.0]]
