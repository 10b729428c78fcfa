"""``guess_frame_rate`` takes the gaps of all tracks in one pass when every track's times are
strictly increasing; the gaps are those of ``np.diff`` track by track (none across tracks)."""

from __future__ import annotations

import numpy as np
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
