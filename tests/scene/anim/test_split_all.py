"""``split_all`` (every track's keys checked in one pass) equals ``split_keys`` track by track.

Clean sets (sorted, distinct, finite keys; what files hold) take the one-pass route; any
unusual key sends the whole set track by track. Either way the parts are bit-equal.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from xof.addon.scene.anim.key_sampling import KeyParts, split_all, split_keys
from xof.addon.xfile.views.model import AnimationData, KeyTrack


def _clean_set(rng: np.random.Generator, n: int) -> list[AnimationData]:
    anims = []
    for _ in range(n):
        tracks = []
        for key_type, width in ((0, 4), (1, 3), (2, 3)):
            k = int(rng.choice([0, 1, 2, 7, 30]))
            times = np.sort(rng.choice(np.arange(1000.0), k, replace=False))
            tracks.append(KeyTrack(key_type, times, rng.normal(size=(k, width))))
        anims.append(AnimationData("b", [tracks[i] for i in rng.permutation(3)]))
    anims.append(AnimationData("empty", []))
    return anims


def _assert_equal(got: list[KeyParts], want: list[KeyParts]) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.warnings == w.warnings
        for name in ("pos", "rot", "scale"):
            a, b = getattr(g, name), getattr(w, name)
            assert (a is None) == (b is None), name
            if a is not None:
                assert a[0].tobytes() == b[0].tobytes() and a[1].tobytes() == b[1].tobytes()


@pytest.mark.parametrize("seed", range(4))
def test_clean_sets_equal_track_by_track(seed: int) -> None:
    anims = _clean_set(np.random.default_rng(seed), 40)
    got = split_all(anims)
    _assert_equal(got, [split_keys(a) for a in anims])
    some = next(p.rot for p in got if p.rot is not None and len(p.rot[0]) > 1)
    assert np.allclose(np.linalg.norm(some[1], axis=1), 1.0)  # rotations normalised


@pytest.mark.filterwarnings("ignore:overflow encountered")  # the "huge" keys' squares
@pytest.mark.parametrize(
    "spoil",
    ["nan_time", "unsorted", "repeated", "inf_value", "zero_quat", "matrix", "narrow", "huge"],
)
def test_unusual_keys_fall_back(spoil: str) -> None:
    anims = _clean_set(np.random.default_rng(7), 10)
    track = next(t for a in anims for t in a.tracks if t.key_type == 0 and len(t.times) >= 7)
    if spoil == "nan_time":
        track.times[3] = np.nan
    elif spoil == "unsorted":
        track.times[[2, 4]] = track.times[[4, 2]]
    elif spoil == "repeated":
        track.times[3] = track.times[2]
    elif spoil == "inf_value":
        pos = next(t for a in anims for t in a.tracks if t.key_type == 2 and len(t.times))
        pos.values[0, 1] = np.inf
    elif spoil == "zero_quat":
        track.values[1] = 0.0
    elif spoil == "matrix":
        anims[0].tracks.append(KeyTrack(4, np.array([0.0]), np.eye(4).reshape(1, 16)))
    elif spoil == "narrow":
        anims[0].tracks.append(KeyTrack(2, np.array([0.0]), np.zeros((1, 2))))
    else:  # finite but the sum overflows: the slow route, which keeps them
        track.values[0] = (1e308, 1e308, 0.0, 0.0)
    want = [split_keys(a) for a in anims]
    assert any(p.warnings for p in want) == (spoil in ("nan_time", "inf_value", "narrow"))
    _assert_equal(split_all(anims), want)


def test_a_rotation_key_past_1e154_is_normalised_without_a_numpy_warning() -> None:
    # found by the import fuzz: its squares overflowed (numpy's warning on the console) and
    # the key became (0, 0, 0, 0), no rotation at all; its direction is (1, 0, 0, 1) / sqrt 2
    quats = np.array([[1.0, 0.0, 0.0, 0.0], [1e200, 0.0, 0.0, -1e200]])
    anims = [AnimationData("b", [KeyTrack(0, np.array([0.0, 10.0]), quats)])]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = split_all(anims)
    times, unit = got[0].rot
    np.testing.assert_array_equal(times, [0.0, 10.0])
    np.testing.assert_allclose(unit, [[1, 0, 0, 0], [0.5**0.5, 0, 0, -(0.5**0.5)]], rtol=1e-15)
    _assert_equal(got, [split_keys(a) for a in anims])
