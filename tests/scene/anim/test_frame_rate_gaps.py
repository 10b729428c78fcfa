"""``guess_frame_rate`` takes the gaps of all tracks in one pass when every track's times are
strictly increasing; the gaps are those of ``np.diff`` track by track (none across tracks)."""

from __future__ import annotations

import numpy as np
import pytest
from xof.addon.scene.anim.key_sampling import _sorted_gaps, guess_frame_rate


def test_gaps_in_one_pass_equal_per_track_diffs() -> None:
    rng = np.random.default_rng(5)
    tracks = [np.sort(rng.choice(np.arange(400.0) * 160.0, k, replace=False)) for k in (2, 9, 40)]
    tracks.append(np.array([0.0, 0.5, 7.25]))
    got = _sorted_gaps(tracks)
    assert got is not None
    assert got.tobytes() == np.concatenate([np.diff(t) for t in tracks]).tobytes()
    # a track starting before the previous one ended is no gap (no boundary pair checked)
    assert _sorted_gaps([np.array([100.0, 200.0]), np.array([0.0, 50.0])]).tolist() == [100, 50]
    assert _sorted_gaps([np.array([0.0, 2.0, 2.0])]) is None  # repeated: the np.unique route
    assert _sorted_gaps([np.array([0, 1])]) is None  # integer times: the np.unique route


def test_frame_rate_from_tracks_with_repeats_and_boundaries() -> None:
    every_160 = [np.arange(5) * 160.0, 1000.0 + np.arange(4) * 320.0]
    assert guess_frame_rate(every_160, 4800.0) == 30.0  # 4800 / 160
    repeated = [np.array([0.0, 160.0, 160.0, 320.0]), np.array([0.0, 480.0])]
    assert guess_frame_rate(repeated, 4800.0) == 30.0  # repeats dropped as np.unique does
    assert guess_frame_rate([np.array([0.0, 100.0, 170.0])], 4800.0) is None  # gcd 10: 480 fps


def _reference_rate(all_times: list[np.ndarray], ticks_per_second: float) -> float | None:
    """The rule written plainly: every distinct key's gap whole, their gcd a common rate."""
    gaps = [np.diff(np.unique(t)) for t in all_times if len(t) > 1]
    if not gaps:
        return None
    steps = np.concatenate(gaps)
    if np.any(np.abs(steps - np.rint(steps)) > 1e-6):
        return None
    step = int(np.gcd.reduce(np.rint(steps).astype(np.int64)))
    if step <= 0:
        return None
    rate = ticks_per_second / step
    common = (12, 15, 24, 25, 30, 48, 50, 60, 72, 90, 100, 120)
    return float(rate) if any(abs(rate - r) < 1e-9 for r in common) else None


def test_evenly_spaced_keys_equal_the_plain_rule() -> None:
    # the one-gap shortcut (every gap equal) against the rule on all gaps
    cases = [
        [np.arange(1000) * 160.0 for _ in range(30)],
        [np.arange(50) * 160.0 + 7.0, np.arange(3) * 160.0],
        [np.arange(10) * 160.5],  # not whole
        [np.arange(10) * (160.0 + 1e-7)],  # whole to 1e-6
        [np.arange(10) * 4800.0],  # 1 fps: not a common rate
        [np.arange(10) * 0.0 + 5.0, np.arange(4) * 200.0],  # repeats only, then 24 fps
        [np.array([3.0, 3.0])],  # one distinct key: no gaps
        [np.arange(10) * 160.0, np.arange(10) * 320.0],  # unequal gaps: gcd 160
        [np.arange(10) * -160.0],  # decreasing: np.unique's route
    ]
    for tracks in cases:
        for tps in (4800.0, 3840.0, 9600.0):
            assert guess_frame_rate(tracks, tps) == _reference_rate(tracks, tps), (tracks, tps)


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_gaps_past_whole_float64_numbers_guess_no_rate_quietly() -> None:
    # found by the import fuzz: gaps of 1e19 ticks (past int64) and inf - inf printed numpy's
    # invalid-value warnings; neither says anything of a frame rate
    assert guess_frame_rate([np.array([0.0, 1e19, 2e19])], 4800.0) is None
    assert guess_frame_rate([np.array([-1e308, 0.0, 1e308])], 4800.0) is None
    assert guess_frame_rate([np.array([0.0, 2.0**52, 2.0**53])], 2.0**52 * 30) == 30.0
