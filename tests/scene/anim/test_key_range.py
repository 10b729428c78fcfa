"""Key values beyond the 32-bit float range that F-curves store."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene import importer  # noqa: E402
from xof.addon.scene.anim.actions import clamp_to_float32  # noqa: E402
from xof.addon.scene.anim.key_sampling import Channels  # noqa: E402

CRASHER = Path(__file__).parents[2] / "fuzz" / "crashers" / "import-crash-5fed7b30953c.x"
BIG = float(np.finfo(np.float32).max)


def test_channels_beyond_the_float_range_are_clamped_and_said() -> None:
    location = np.array([[1e300, -1e39, 2.0]])
    scale = np.array([[1.0, 1.0, 1.0]])
    channels = Channels(np.zeros(1), location, np.array([[1.0, 0, 0, 0]]), scale)
    assert clamp_to_float32(channels)
    assert channels.location.tolist() == [[BIG, -BIG, 2.0]]
    nan = Channels(
        np.zeros(2),
        np.array([[np.nan, 1.0, 2.0], [3.0, 4.0, 5.0]]),
        np.array([[np.nan, 0.0, 0.0, 1.0], [0.0, 1.0, 0.0, 0.0]]),
        np.array([[1.0, np.nan, 2.0], [1.0, 1.0, 1.0]]),
    )
    assert clamp_to_float32(nan)
    assert nan.location.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert nan.rotation.tolist() == [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]]
    assert nan.scale.tolist() == [[1.0, 1.0, 2.0], [1.0, 1.0, 1.0]]
    assert not clamp_to_float32(Channels(np.zeros(1), scale.copy(), np.ones((1, 4)), scale))


def test_a_file_with_huge_keys_imports_with_finite_fcurves_and_a_warning() -> None:
    # found by the import fuzzer: a cast to float32 overflowed (a RuntimeWarning) and the
    # F-curves held infinities and NaN; now they hold numbers and the report says so
    if not CRASHER.is_file():
        pytest.skip(f"{CRASHER} is missing")
    bpy.ops.wm.read_homefile(use_empty=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        result = importer.import_files([CRASHER])
    # its huge bone offset is set aside before the build (``imp/finite.py``), so the keys
    # sampled against that bone's bind stay in range too
    assert any("bone offset(s) not finite or past 32-bit floats" in w for w in result.warnings)
    for action in bpy.data.actions:
        for bag in (b for layer in action.layers for s in layer.strips for b in s.channelbags):
            for fcurve in bag.fcurves:
                co = np.zeros(2 * len(fcurve.keyframe_points), dtype=np.float32)
                fcurve.keyframe_points.foreach_get("co", co)
                assert np.isfinite(co).all(), fcurve.data_path
