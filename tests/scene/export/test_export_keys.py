"""Export key reduction (pure numpy): the importer's slerp samples are recognised and left out,
the file's own keys never are."""

from __future__ import annotations

import numpy as np
from xof.addon.scene.anim.key_sampling import KeyParts, refine_times, sample_local
from xof.addon.scene.export.plan.key_reduction import file_keys, is_constant
from xof.addon.scene.rig.rig_math import row_decompose


def _quat_y(degrees: float) -> np.ndarray:
    half = np.radians(degrees) / 2
    return np.array([np.cos(half), 0.0, -np.sin(half), 0.0])


def _imported(times: list[float], degrees: list[float], positions: list[list[float]]):
    """What the importer keys for these file keys: times (with its samples) and the parts."""
    parts = KeyParts(
        pos=(np.array(times, float), np.array(positions, float)),
        rot=(np.array(times, float), np.array([_quat_y(d) for d in degrees])),
    )
    at = refine_times(parts)
    pos, quat, scale = row_decompose(sample_local(parts, np.eye(4), at))
    return at, pos, quat, scale


def test_samples_of_a_wide_span_are_left_out() -> None:
    # 0 -> 90 degrees in one span: ceil(90 / 4) = 23 steps, 22 samples; then 5 degrees: 2 steps
    positions = [[0, 0, 0], [1, 2, 3], [1, 2, 4]]
    at, pos, quat, scale = _imported([0, 1600, 2400], [0, 90, 95], positions)
    assert len(at) == 3 + 22 + 1
    kept = file_keys(at, pos, quat, scale)
    np.testing.assert_array_equal(at[kept], [0, 1600, 2400])


def test_a_key_off_the_path_is_kept() -> None:
    """Three file keys where the middle one is 1e-4 rad off the slerp between its neighbours."""
    times = np.array([0.0, 10.0, 20.0])
    off = np.radians(3.0) + 1e-4  # 6 degrees total: ceil(6 / 4) = 2 would allow a merge
    quat = np.array([_quat_y(0), np.array([np.cos(off / 2), 0, -np.sin(off / 2), 0]), _quat_y(6)])
    zeros, ones = np.zeros((3, 3)), np.ones((3, 3))
    np.testing.assert_array_equal(file_keys(times, zeros, quat, ones), [0, 1, 2])


def test_a_position_off_the_line_is_kept() -> None:
    at, pos, quat, scale = _imported([0, 1600], [0, 30], [[0, 0, 0], [3, 0, 0]])
    assert len(at) == 9  # ceil(30 / 4) = 8 steps
    pos = pos.copy()
    pos[4, 0] += 1e-3
    kept = file_keys(at, pos, quat, scale)
    assert 4 in kept.tolist() and len(kept) < len(at)


def test_uneven_spacing_is_kept() -> None:
    """Evenly turning keys at uneven times are not what the importer inserts."""
    times = np.array([0.0, 9.0, 20.0])
    quat = np.array([_quat_y(0), _quat_y(2.7), _quat_y(6)])
    zeros, ones = np.zeros((3, 3)), np.ones((3, 3))
    np.testing.assert_array_equal(file_keys(times, zeros, quat, ones), [0, 1, 2])


def test_small_turns_are_all_kept() -> None:
    """Spans under the step are never refined by the importer, so nothing is dropped."""
    times = np.arange(6, dtype=float)
    quat = np.array([_quat_y(1.0 * k) for k in range(6)])
    zeros, ones = np.zeros((6, 3)), np.ones((6, 3))
    np.testing.assert_array_equal(file_keys(times, zeros, quat, ones), np.arange(6))


def test_constant_parts() -> None:
    assert is_constant(np.array([[1.0, 2.0, 3.0]] * 4), 1e-6)
    assert not is_constant(np.array([[1.0, 2.0, 3.0], [1.0, 2.0, 3.001]]), 1e-6)
    assert is_constant(np.zeros((1, 3)), 1e-6)
