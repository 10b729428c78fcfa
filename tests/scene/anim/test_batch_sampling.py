"""The batched key sampling of a whole set equals the per-track functions, track by track.

The reference is :func:`refine_times` + :func:`sample_parts` called on each track alone (the
path the import took before the batch); random tracks with different key counts and times,
single-key tracks, missing parts, wide rotation spans (refined), spline positions, matrix keys
and scale keys.
"""

from __future__ import annotations

import numpy as np
import pytest
from xof.addon.scene.anim.batch_sampling import (
    Segments,
    at_keys,
    lerp_at,
    refine_all,
    sample_all,
    segment_continuous,
    slerp_at,
)
from xof.addon.scene.anim.key_sampling import refine_times, sample_parts, split_keys
from xof.addon.scene.rig.rig_math import make_continuous, quat_multiply, row_compose
from xof.addon.xfile.views.model import AnimationData, KeyTrack


def _quats(rng: np.random.Generator, k: int, wide: bool) -> np.ndarray:
    if wide:  # large random steps: spans wider than max_step, sign flips
        return rng.normal(size=(k, 4))
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    angle = np.cumsum(rng.normal(0, 0.02, k))
    return np.concatenate([np.cos(angle)[:, None], np.sin(angle)[:, None] * axis], axis=1)


def _times(rng: np.random.Generator, k: int) -> np.ndarray:
    kind = rng.integers(3)
    if kind == 0:
        return np.arange(k) * 160.0
    if kind == 1:  # unsorted, repeated times (split_keys sorts them, last key wins)
        return rng.integers(0, 4 * k + 1, k).astype(float)
    return np.sort(rng.uniform(-50.0, 5000.0, k))


def _random_animation(rng: np.random.Generator, linear: bool) -> AnimationData:
    tracks = []
    counts = [1, 1, 2, 3, 5, 40]
    if rng.random() < 0.25:  # matrix keys: position, rotation and scale at once
        k = int(rng.choice(counts))
        pos = rng.normal(size=(k, 3))
        scale = rng.uniform(0.5, 2.0, (k, 3))
        m = row_compose(pos, _quats(rng, k, rng.random() < 0.5), scale)
        return AnimationData("M", [KeyTrack(4, _times(rng, k), m.reshape(k, 16))], linear=linear)
    if rng.random() < 0.8:
        k = int(rng.choice(counts))
        tracks.append(KeyTrack(0, _times(rng, k), _quats(rng, k, rng.random() < 0.5)))
    if rng.random() < 0.8:
        k = int(rng.choice(counts))
        tracks.append(KeyTrack(2, _times(rng, k), rng.normal(size=(k, 3))))
    if rng.random() < 0.5:
        k = int(rng.choice(counts))
        tracks.append(KeyTrack(1, _times(rng, k), rng.uniform(0.1, 3.0, (k, 3))))
    return AnimationData("A", tracks, linear=linear)


def _rest(rng: np.random.Generator) -> np.ndarray:
    return row_compose(rng.normal(size=3), _quats(rng, 1, True)[0], rng.uniform(0.5, 2.0, 3))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("max_step", [np.radians(4.0), 0.0])
def test_batch_equals_per_track(seed: int, max_step: float) -> None:
    rng = np.random.default_rng(seed)
    n = 60
    linear = [bool(rng.random() < 0.6) for _ in range(n)]
    anims = [_random_animation(rng, lin) for lin in linear]
    anims.append(AnimationData("empty", [], linear=False))
    linear.append(False)
    rests = np.stack([_rest(rng) for _ in anims])
    parts = [split_keys(a) for a in anims]
    ticks, rotations = refine_all(parts, max_step)
    got = sample_all(parts, rests, ticks, [not lin for lin in linear], rotations)
    plain = sample_all(parts, rests, ticks, [not lin for lin in linear])
    refined = 0
    for i, p in enumerate(parts):
        want_t = refine_times(p, max_step) if max_step > 0 else p.times()
        refined += len(want_t) > len(p.times())
        t = ticks.values[ticks.start[i] : ticks.start[i] + ticks.count[i]]
        np.testing.assert_array_equal(t, want_t)
        want = sample_parts(p, rests[i], want_t, spline=not linear[i])
        np.testing.assert_array_equal(got[i].rot, plain[i].rot)  # reused == sampled again
        for name in ("pos", "rot", "scale"):
            np.testing.assert_allclose(
                getattr(got[i], name), getattr(want, name), rtol=0, atol=1e-12, err_msg=name
            )
        if want.pos_slope is None:
            assert got[i].pos_slope is None
        else:
            assert got[i].pos_slope is not None
            np.testing.assert_allclose(got[i].pos_slope, want.pos_slope, rtol=0, atol=1e-12)
    if max_step > 0:
        assert refined > 5  # the wide rotation spans were refined
    kinds = {t.key_type for a in anims for t in a.tracks}
    assert kinds == {0, 1, 2, 4}
    assert not all(linear) and any(linear)


def test_segment_continuous_restarts_per_track() -> None:
    q = np.array([[1.0, 0, 0, 0], [-1.0, 0, 0, 0], [-1.0, 0, 0, 0], [1.0, 0, 0, 0], [0, 1.0, 0, 0]])
    seg = Segments.of([q[:2], q[2:]], 4)
    got = segment_continuous(seg)
    # each track keeps its first quaternion's sign and flips the rest to follow it
    np.testing.assert_array_equal(got[:2], [[1, 0, 0, 0], [1, 0, 0, 0]])
    np.testing.assert_array_equal(got[2:], make_continuous(q[2:]))
    np.testing.assert_array_equal(got[2:4], [[-1, 0, 0, 0], [-1, 0, 0, 0]])


def test_all_zero_rotation_keys_leave_the_rest_rotation() -> None:
    # zero quaternions key nothing; before, an empty rotation part failed the sampling
    anim = AnimationData(
        "B",
        [
            KeyTrack(0, np.array([0.0, 10.0]), np.zeros((2, 4))),
            KeyTrack(2, np.array([0.0, 10.0]), np.array([[0.0, 0, 0], [2.0, 0, 0]])),
        ],
    )
    parts = split_keys(anim)
    assert parts.rot is None
    rest = row_compose(np.zeros(3), np.array([0.0, 0.0, 0.0, 1.0]), np.ones(3))
    out = sample_parts(parts, rest, np.array([0.0, 5.0, 10.0]))
    np.testing.assert_allclose(out.pos[:, 0], [0.0, 1.0, 2.0])
    np.testing.assert_allclose(np.abs(out.rot), [[0, 0, 0, 1.0]] * 3, atol=1e-12)


def test_channels_of_equals_per_track_decompose() -> None:
    # the batch skips the shear check on conformal samples: the channels stay those of the
    # plain per-track decompose + sign continuity
    from xof.addon.scene.anim.animation import SampledAnimation, channels_of
    from xof.addon.scene.anim.key_sampling import LocalSamples
    from xof.addon.scene.rig.rig_math import compose, decompose

    rng = np.random.default_rng(3)
    mirror = np.diag([1.0, -1.0, 1.0, 1.0])
    sampled = []
    for i in range(40):
        k = int(rng.integers(1, 30))
        kind = i % 4
        scale = np.ones((k, 3)) if kind < 2 else rng.uniform(0.5, 2.0, (k, 3))
        if kind == 3:
            scale[:] = scale[:, :1]  # uniform, not 1
        samples = LocalSamples(rng.normal(size=(k, 3)), _quats(rng, k, True), scale)
        left = compose(rng.normal(size=3), _quats(rng, 1, True)[0], np.full(3, 1.5))
        right = compose(rng.normal(size=3), _quats(rng, 1, True)[0], np.ones(3))
        if kind == 1:
            left = left @ mirror
        if kind == 0 and i % 3 == 0:  # both sides mirror (the space conversion's): rigid
            left, right = left @ mirror, mirror @ right
        if i % 5 == 0:
            right = right @ np.diag([1.0, 2.0, 1.0, 1.0])  # sides that scale unevenly
        sides = np.stack([left, right])
        sampled.append(SampledAnimation(np.arange(k) * 1.0, samples, sides, None))
    got = channels_of(sampled)
    rigid = [n for n in range(40) if not (n % 5 == 0 or n % 4 in (1, 2))]
    alone = channels_of([sampled[n] for n in rigid])  # every sample in closed form
    for n, ch in zip(rigid, alone, strict=True):
        np.testing.assert_array_equal(ch.rotation, got[n].rotation)
        np.testing.assert_array_equal(ch.location, got[n].location)
    for i, (s, ch) in enumerate(zip(sampled, got, strict=True)):
        basis = s.sides[0] @ np.swapaxes(s.samples.matrices(), -1, -2) @ s.sides[1]
        loc, quat, scale = decompose(basis)
        # rigid sides and positive uniform scales take the closed form: equal to rounding
        # (another order of the same products); the others are the decompose bit for bit
        exact = i % 5 == 0 or i % 4 in (1, 2)
        check = np.testing.assert_array_equal if exact else _close
        check(ch.location, loc)
        check(ch.rotation, make_continuous(quat))
        check(ch.scale, scale)


def _close(got: np.ndarray, want: np.ndarray) -> None:
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_quaternion_products_and_rotations_match_matrices() -> None:
    from xof.addon.scene.rig.rig_math import quat_multiply, quat_rotate, quat_to_mat3

    rng = np.random.default_rng(8)
    p, q = _quats(rng, 50, True), _quats(rng, 50, True)
    p, q = p / np.linalg.norm(p, axis=1)[:, None], q / np.linalg.norm(q, axis=1)[:, None]
    v = rng.normal(size=(50, 3))
    np.testing.assert_allclose(
        quat_to_mat3(quat_multiply(p, q)), quat_to_mat3(p) @ quat_to_mat3(q), atol=1e-14
    )
    np.testing.assert_allclose(
        quat_rotate(p, v), np.einsum("nij,nj->ni", quat_to_mat3(p), v), atol=1e-14
    )
    # the basis: a quarter turn about z by (cos 45, 0, 0, sin 45) takes x to y
    turn = np.array([np.sqrt(0.5), 0.0, 0.0, np.sqrt(0.5)])
    np.testing.assert_allclose(quat_rotate(turn, np.array([1.0, 0, 0])), [0, 1.0, 0], atol=1e-15)


def test_split_keys_cleans_sorted_and_unsorted_keys_alike() -> None:
    # keys in order (the fast path) and the same keys shuffled with a repeat and non-finite
    # entries give the same parts; the repeat keeps its last value
    times = np.array([0.0, 10.0, 20.0, 30.0])
    pos = np.arange(12.0).reshape(4, 3)
    plain = split_keys(AnimationData("P", [KeyTrack(2, times, pos)]))
    messy_t = np.array([30.0, np.inf, 10.0, 0.0, 20.0, 10.0, -np.inf])
    messy_v = np.array([pos[3], pos[0], [9.0, 9, 9], pos[0], pos[2], pos[1], pos[1]])
    messy = split_keys(AnimationData("P", [KeyTrack(2, messy_t, messy_v)]))
    assert plain.pos is not None and messy.pos is not None
    np.testing.assert_array_equal(plain.pos[0], times)
    np.testing.assert_array_equal(plain.pos[1], pos)
    np.testing.assert_array_equal(messy.pos[0], times)
    np.testing.assert_array_equal(messy.pos[1], pos)
    assert messy.warnings == ["animation of 'P': 2 unusable key(s) of type 2"]
    assert plain.warnings == []
    bad = split_keys(AnimationData("P", [KeyTrack(2, times, np.where(pos == 4.0, np.nan, pos))]))
    assert bad.pos is not None and len(bad.pos[0]) == 3


def test_no_tracks_and_empty_tracks() -> None:
    seg = Segments.of([])
    assert len(seg.start) == len(seg.count) == 0
    ticks, rotations = refine_all([], np.radians(4.0))
    assert len(ticks.values) == 0 and rotations is None
    assert sample_all([], np.zeros((0, 4, 4)), ticks, []) == []
    parts = [split_keys(AnimationData("E", []))]
    ticks, _ = refine_all(parts, np.radians(4.0))
    (only,) = sample_all(parts, np.eye(4)[None], ticks, [False])
    assert only.pos.shape == (0, 3) and only.rot.shape == (0, 4)


def test_track_times_when_one_part_holds_the_others_times() -> None:
    """A part whose times hold every other part's (one scale key at a position key's time)
    gives the track's times as they are; a time outside them still takes the union."""
    rng = np.random.default_rng(3)
    t = np.arange(6) * 160.0
    anims = [
        AnimationData("in", [
            KeyTrack(2, t, rng.normal(size=(6, 3))),
            KeyTrack(0, t, _quats(rng, 6, False)),
            KeyTrack(1, np.array([320.0]), np.ones((1, 3))),
        ], linear=True),
        AnimationData("out", [
            KeyTrack(2, t, rng.normal(size=(6, 3))),
            KeyTrack(1, np.array([100.0, 800.0]), np.ones((2, 3))),
        ], linear=True),
    ]  # fmt: skip
    parts = [split_keys(a) for a in anims]
    ticks, _ = refine_all(parts, 0.0)
    got = ticks.split(ticks.values)
    np.testing.assert_array_equal(got[0], t)
    np.testing.assert_array_equal(got[1], np.sort(np.append(t, 100.0)))
    for g, p in zip(got, parts, strict=True):
        np.testing.assert_array_equal(g, p.times())


@pytest.mark.parametrize("sample", [slerp_at, lerp_at])
def test_at_keys_equals_sampling_at_the_keys(sample) -> None:
    """Tracks queried at exactly their keys (one key, two, many; wide spans and sign flips)
    beside tracks queried elsewhere: the same values as sampling them, bit for bit."""
    rng = np.random.default_rng(9)
    times, values, queries = [], [], []
    for k in (1, 2, 3, 40, 5, 1, 12):
        t = np.sort(rng.choice(10_000, k, replace=False)).astype(float)
        times.append(t)
        values.append(_quats(rng, k, True) if sample is slerp_at else rng.normal(size=(k, 3)))
        queries.append(t if rng.random() < 0.6 else np.sort(np.append(t, t[0] + 0.5)))
    queries[4] = np.sort(np.append(times[4], [-3.0, 7.5]))  # at least one track off its keys
    width = values[0].shape[1]
    args = Segments.of(times), Segments.of(values, width), Segments.of(queries)
    np.testing.assert_array_equal(at_keys(sample, *args), sample(*args))


def test_a_few_wide_spans_in_long_tracks_equal_per_track_refinement() -> None:
    # the characters' case: long smooth tracks, a few spans wide enough for extra ticks (the
    # extras are computed for those spans only and inserted); one track's wide span is a
    # subnormal gap, where np.linspace's step underflows to zero
    rng = np.random.default_rng(21)
    anims = []
    for i in range(12):
        k = 300
        times = np.arange(k) * 160.0
        quats = _quats(rng, k, False)
        for at in rng.choice(np.arange(1, k), 3, replace=False):  # a jump: a wide span
            turn = _quats(rng, 1, True)[0]
            quats[at:] = quat_multiply(turn / np.linalg.norm(turn), quats[at:])
        if i == 5:
            times = np.concatenate([[0.0, 5e-324, 1e-323], 1.0 + times[3:]])
            quats[1] = [0.0, 1.0, 0.0, 0.0]
        anims.append(AnimationData("A", [KeyTrack(0, times, quats)]))
    parts = [split_keys(a) for a in anims]
    ticks, _ = refine_all(parts, np.radians(4.0))
    refined = 0
    for i, p in enumerate(parts):
        want = refine_times(p, np.radians(4.0))
        refined += len(want) - len(p.times())
        got = ticks.values[ticks.start[i] : ticks.start[i] + ticks.count[i]]
        np.testing.assert_array_equal(got, want)
    assert refined >= 12 * 3
