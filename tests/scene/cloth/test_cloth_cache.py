"""The per-frame cache (pure numpy): storage, resuming state, serialisation."""

from __future__ import annotations

import numpy as np
import pytest
from xof.addon.scene.cloth.cache import FrameCache
from xof.addon.sim.mesh.affine import transform_points


def _cache() -> FrameCache:
    cache = FrameCache(4)
    for f in (1, 2, 3):
        pos = np.arange(12, dtype=np.float32).reshape(4, 3) + f
        vel = -pos
        m = np.eye(4)
        m[:3, 3] = (f, 0, 0)
        cache.store(f, pos, vel, m)
    return cache


def test_transform_points_by_hand() -> None:
    m = np.array([[0, -1, 0, 1], [1, 0, 0, 2], [0, 0, 2, 3], [0, 0, 0, 1]], dtype=np.float64)
    pts = np.array([[1, 0, 0], [0, 1, 1]], dtype=np.float32)
    # rotation 90 degrees about Z, z scaled by 2, then translated by (1, 2, 3)
    expected = np.array([[1, 3, 3], [0, 2, 5]], dtype=np.float32)
    np.testing.assert_array_equal(transform_points(m, pts), expected)
    np.testing.assert_array_equal(transform_points(np.eye(4), pts), pts)


def test_world_positions_apply_the_frame_matrix() -> None:
    cache = _cache()
    entry = cache.get(2)
    assert entry is not None
    np.testing.assert_array_equal(entry.world_positions()[0], [2 + 2, 1 + 2, 2 + 2])


def test_round_trip_keeps_every_frame_exactly() -> None:
    cache = _cache()
    again = FrameCache.from_bytes(cache.to_bytes())
    assert sorted(again.frames) == [1, 2, 3]
    for f in (1, 2, 3):
        a, b = cache.frames[f], again.frames[f]
        np.testing.assert_array_equal(a.positions, b.positions)
        np.testing.assert_array_equal(a.velocities, b.velocities)
        np.testing.assert_array_equal(a.matrix, b.matrix)
    again.frames[1].positions[0, 0] = 99.0  # writable, owned copies
    # header 16 + json + 3 frames x 2 arrays x 4 points x 3 floats x 4 bytes
    assert len(cache.to_bytes()) > 3 * 2 * 4 * 3 * 4


def test_drop_after_and_range() -> None:
    cache = _cache()
    cache.drop_after(1)
    assert sorted(cache.frames) == [1]
    assert cache.frame_range() == (1, 1)
    cache.clear()
    assert cache.frame_range() is None


def test_wrong_sizes_and_bad_blobs_are_refused() -> None:
    cache = _cache()
    with pytest.raises(ValueError):
        cache.store(9, np.zeros((5, 3)), np.zeros((5, 3)), np.eye(4))
    blob = cache.to_bytes()
    for bad in (b"", b"junk" * 10, blob[:-4], b"XOFCACHX" + blob[8:]):
        with pytest.raises(ValueError):
            FrameCache.from_bytes(bad)


def test_frames_with_nan_or_inf_are_dropped_on_loading() -> None:
    """Issue 34, item 19: a tampered saved cache with NaN frames was shown as is."""
    cache = _cache()
    cache.frames[2].positions[1, 0] = np.nan
    cache.frames[3].matrix[0, 3] = np.inf
    again = FrameCache.from_bytes(cache.to_bytes())
    assert sorted(again.frames) == [1]
    assert again.dropped == [2, 3]
    np.testing.assert_array_equal(again.frames[1].positions, cache.frames[1].positions)
    assert FrameCache.from_bytes(_cache().to_bytes()).dropped == []
