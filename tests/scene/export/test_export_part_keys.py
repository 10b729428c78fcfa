"""Per-part key times of spline sets (pure numpy): what the importer keys from a file whose
position and rotation keys sit at different times gives each part its own keys back."""

from __future__ import annotations

import numpy as np
from xof.addon.scene.anim import position_spline
from xof.addon.scene.anim.key_sampling import KeyParts, refine_times, sample_parts
from xof.addon.scene.export.plan.part_keys import part_keys, path_keys, spline_position_keys

POS_TIMES = [0.0, 480.0, 800.0, 1920.0]  # uneven: 3, 2 and 7 frames at 30 fps
POSITIONS = [[0.2, 0.1, 0.0], [0.6, 0.4, -0.3], [0.1, 0.7, 0.2], [0.5, 0.1, 0.4]]
ROT_TIMES = [0.0, 960.0, 1920.0]


def quat_y(degrees: float) -> np.ndarray:
    half = np.radians(degrees) / 2
    return np.array([np.cos(half), 0.0, np.sin(half), 0.0])


def imported(degrees: list[float]):
    """Blender's keys for the file: the union times plus slerp samples, each part there, and
    the curve half-way between keys (the importer's Bezier traces the spline exactly)."""
    parts = KeyParts(
        pos=(np.array(POS_TIMES), np.array(POSITIONS)),
        rot=(np.array(ROT_TIMES), np.array([quat_y(d) for d in degrees])),
        scale=(np.array([0.0]), np.ones((1, 3))),
    )
    at = refine_times(parts)
    got = sample_parts(parts, np.eye(4), at, spline=True)
    mid, _ = position_spline.evaluate(parts.pos[0], parts.pos[1], (at[:-1] + at[1:]) / 2)
    return at, got.pos, got.rot, got.scale, mid


def test_each_part_gets_its_own_times_back() -> None:
    at, pos, quat, scale, mid = imported([10, 30, 10])
    assert set(POS_TIMES + ROT_TIMES) < set(at.tolist())  # the union and slerp samples
    split = part_keys(at, pos, quat, scale, mid)
    assert split is not None
    np.testing.assert_array_equal(at[split.pos], POS_TIMES)
    np.testing.assert_array_equal(at[split.rot], ROT_TIMES)
    np.testing.assert_array_equal(at[split.scale], [0.0, 1920.0])


def test_slerp_samples_of_wide_spans_are_left_out_per_part() -> None:
    at, pos, quat, scale, mid = imported([0, 90, 170])
    assert len(at) > 5 + 20  # 90 and 80 degrees: ceil(angle / 4) steps each
    split = part_keys(at, pos, quat, scale, mid)
    assert split is not None
    np.testing.assert_array_equal(at[split.pos], POS_TIMES)
    np.testing.assert_array_equal(at[split.rot], ROT_TIMES)


def test_a_curve_that_is_not_the_spline_keeps_its_keys() -> None:
    """A half-way value off the file's spline (an edited handle): no per-part split."""
    at, pos, quat, scale, mid = imported([10, 30, 10])
    mid = mid.copy()
    mid[1, 0] += 1e-3
    assert part_keys(at, pos, quat, scale, mid) is None
    kept = spline_position_keys(at, pos, mid, 1e-6)
    assert {1, 2} <= set(kept.tolist())  # both ends of the bent span look like piece changes


def test_path_keys_keep_a_turn_and_drop_points_on_the_path() -> None:
    times = np.array([0.0, 1.0, 2.0, 3.0, 4.0])
    quats = np.array([quat_y(a) for a in (0, 10, 20, 25, 30)])  # turn rate changes at t=2
    np.testing.assert_array_equal(path_keys(times, quats, rotation=True), [0, 2, 4])
    line = np.array([[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 1, 0], [4, 2, 0]], float)
    np.testing.assert_array_equal(path_keys(times, line, rotation=False), [0, 2, 4])
