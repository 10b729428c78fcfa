"""The shortcuts of the animation step (sets sampled at their keys, tracks of one length,
one-key tracks, samples used in place, curves created in their group) give what the general
routes give, bit for bit."""

from __future__ import annotations

import bpy
import numpy as np
import pytest
from xof.addon.scene.anim import actions
from xof.addon.scene.anim.animation import (
    SampledAnimation,
    _rigid_channels,
    _rigid_sides,
    channels_of,
    joined,
)
from xof.addon.scene.anim.batch_sampling import (
    Segments,
    at_keys,
    lerp_at,
    segment_continuous,
    slerp_at,
)
from xof.addon.scene.anim.key_sampling import Channels, LocalSamples, _distinct
from xof.addon.scene.rig.rig_math import compose, make_continuous


def _unit(q: np.ndarray) -> np.ndarray:
    return q / np.linalg.norm(q, axis=1)[:, None]


def _smooth_quats(rng: np.random.Generator, k: int) -> np.ndarray:
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    angle = np.cumsum(rng.normal(0, 0.02, k))
    return np.concatenate([np.cos(angle)[:, None], np.sin(angle)[:, None] * axis], axis=1)


@pytest.mark.parametrize("sample", [slerp_at, lerp_at])
def test_every_track_at_its_keys_equals_the_lookup(sample) -> None:
    # every track queried exactly at its keys: the keys come back without the gathers
    rng = np.random.default_rng(11)
    times, values = [], []
    for _ in range(12):
        k = int(rng.integers(2, 25))
        times.append(np.cumsum(rng.uniform(1.0, 50.0, k)))
        values.append(
            _unit(rng.normal(size=(k, 4))) if sample is slerp_at else rng.normal(size=(k, 3))
        )
    width = values[0].shape[1]
    seg_t, seg_v = Segments.of(times), Segments.of(values, width)
    at = Segments.of(times)
    np.testing.assert_array_equal(at_keys(sample, seg_t, seg_v, at), sample(seg_t, seg_v, at))


def test_one_key_tracks_give_their_key_everywhere() -> None:
    rng = np.random.default_rng(12)
    times = [rng.uniform(-5, 5, 1) for _ in range(6)]
    values = [rng.normal(size=(1, 3)) for _ in range(6)]
    queries = [np.sort(rng.uniform(-10, 10, int(rng.integers(0, 9)))) for _ in range(6)]
    got = lerp_at(Segments.of(times), Segments.of(values, 3), Segments.of(queries))
    want = [
        np.stack([np.interp(q, t, v[:, c]) for c in range(3)], axis=1).reshape(-1, 3)
        for t, v, q in zip(times, values, queries, strict=True)
    ]
    np.testing.assert_array_equal(got, np.concatenate(want))


def test_continuous_tracks_are_copied_unchanged() -> None:
    rng = np.random.default_rng(13)
    tracks = [_smooth_quats(rng, int(rng.integers(1, 30))) for _ in range(8)]
    seg = Segments.of(tracks, 4)
    got = segment_continuous(seg)
    assert got is not seg.values
    np.testing.assert_array_equal(got, np.concatenate([make_continuous(q) for q in tracks]))


def test_joined_is_concatenate_and_a_view_only_of_adjacent_rows() -> None:
    base = np.arange(40.0).reshape(10, 4).copy()  # its own buffer (no base)
    parts = np.split(base, [3, 3, 7])
    got = joined(parts)
    np.testing.assert_array_equal(got, np.concatenate(parts))
    assert got.base is base
    gap = [base[:3], base[4:7]]  # not adjacent: a copy
    np.testing.assert_array_equal(joined(gap), np.concatenate(gap))
    assert joined(gap).base is not base
    other = [base[:2], np.ones((2, 4))]
    np.testing.assert_array_equal(joined(other), np.concatenate(other))


def test_tracks_of_one_length_equal_the_repeated_sides() -> None:
    rng = np.random.default_rng(14)
    mirror = np.diag([1.0, -1.0, 1.0, 1.0])
    t, k = 9, 17
    sides = []
    for _ in range(t):
        left = compose(rng.normal(size=3), _unit(rng.normal(size=(1, 4)))[0], np.full(3, 1.5))
        right = compose(rng.normal(size=3), _unit(rng.normal(size=(1, 4)))[0], np.ones(3))
        sides.append(np.stack([left @ mirror, mirror @ right]))
    all_sides = np.stack(sides)
    pos = rng.normal(size=(t * k, 3))
    rot = rng.normal(size=(t * k, 4))
    scale = np.repeat(rng.uniform(0.5, 2.0, (t * k, 1)), 3, axis=1)
    rigid, size, quats = _rigid_sides(all_sides)
    assert rigid.all()
    counts = np.full(t, k)
    want = _rigid_channels(
        pos, rot, scale, lambda a: np.repeat(a, counts), all_sides, size, quats
    )  # the route of tracks of different lengths
    sampled = [
        SampledAnimation(
            np.arange(k) * 1.0,
            LocalSamples(
                pos[i * k : (i + 1) * k], rot[i * k : (i + 1) * k], scale[i * k : (i + 1) * k]
            ),
            all_sides[i],
            None,
        )
        for i in range(t)
    ]
    got = channels_of(sampled)
    quat = segment_continuous(Segments(want[1], np.arange(t) * k, counts))
    for i, ch in enumerate(got):
        part = slice(i * k, (i + 1) * k)
        np.testing.assert_array_equal(ch.location, want[0][part])
        np.testing.assert_array_equal(ch.rotation, quat[part])
        np.testing.assert_array_equal(ch.scale, want[2][part])


def test_distinct_times_are_np_unique() -> None:
    rng = np.random.default_rng(15)
    for times in (
        np.cumsum(rng.uniform(1, 5, 20)),
        rng.uniform(0, 10, 20),
        np.array([0.0, 1.0, 1.0, 2.0]),
        np.array([0.0, np.nan, 2.0]),
        np.array([3.0]),
    ):
        np.testing.assert_array_equal(_distinct(times), np.unique(times))


def _curves(builder: actions.ActionBuilder) -> list[tuple[str, int, str, tuple[float, ...]]]:
    out = []
    for layer in builder.action.layers:
        for strip in layer.strips:
            for bag in strip.channelbags:
                for fc in bag.fcurves:
                    co = np.empty(2 * len(fc.keyframe_points), np.float32)
                    fc.keyframe_points.foreach_get("co", co)
                    group = fc.group.name if fc.group else ""
                    out.append((fc.data_path, fc.array_index, group, tuple(co.tolist())))
    return out


def test_curves_created_in_their_group_equal_the_assigned_group(monkeypatch) -> None:
    if not actions.NEW_TAKES_GROUP:
        pytest.skip("this bpy's fcurves.new takes no group_name")
    bpy.ops.wm.read_homefile(use_empty=True)
    ob = bpy.data.objects.new("target", None)
    frames = np.arange(5.0)
    rng = np.random.default_rng(16)
    channels = Channels(frames, rng.normal(size=(5, 3)), _unit(rng.normal(size=(5, 4))),
                        np.ones((5, 3)))  # fmt: skip
    built = []
    for flag in (True, False):
        monkeypatch.setattr(actions, "NEW_TAKES_GROUP", flag)
        builder = actions.ActionBuilder(f"set {flag}")
        slot = builder.slot_for(ob)
        for bone in ("hip", "leg", "arm"):
            builder.write(slot, actions.bone_path(bone), channels, bone)
        builder.write(slot, "", channels, "target")
        built.append(builder)
    a, b = (_curves(x) for x in built)
    assert a == b
    groups = [[g.name for g in bag.groups] for x in built
              for bag in x.action.layers[0].strips[0].channelbags]  # fmt: skip
    assert groups[0] == groups[1] == ["hip", "leg", "arm", "target"]
