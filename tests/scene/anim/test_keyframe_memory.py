"""Linear keys written straight into the key array equal RNA's ``foreach_set`` of ``co`` and
interpolation, every keyframe field bit for bit; a layout that fails the proof is left as
it was and written through RNA."""

from __future__ import annotations

import bpy
import numpy as np
import pytest
from xof.addon.scene.anim import actions, keyframe_memory
from xof.addon.scene.anim.key_sampling import Channels

_FLOATS = ("co", "handle_left", "handle_right", "back", "amplitude", "period")
_ENUMS = ("interpolation", "handle_left_type", "handle_right_type", "easing", "type")
_FLAGS = ("select_control_point", "select_left_handle", "select_right_handle")


def _keys(fcurve: bpy.types.FCurve) -> dict[str, bytes]:
    """Every keyframe field, as bytes."""
    points = fcurve.keyframe_points
    n = len(points)
    out = {}
    for name in _FLOATS:
        width = 2 if name in ("co", "handle_left", "handle_right") else 1
        a = np.empty(n * width, np.float32)
        points.foreach_get(name, a)
        out[name] = a.tobytes()
    for name in _ENUMS + _FLAGS:
        a = np.empty(n, np.int32)
        points.foreach_get(name, a)
        out[name] = a.tobytes()
    return out


def _bag() -> bpy.types.ActionChannelbag:
    action = bpy.data.actions.new("keys")
    slot = action.slots.new("OBJECT", "target")
    strip = action.layers.new("Layer").strips.new(type="KEYFRAME")
    return strip.channelbag(slot, ensure=True)


def _co(rng: np.random.Generator, k: int) -> np.ndarray:
    co = np.empty((k, 2), np.float32)
    co[:, 0] = np.cumsum(rng.uniform(0.1, 3.0, k)) - 5.0
    co[:, 1] = rng.normal(0, 10, k)
    co[::7, 1] = -0.0
    co[3::11, 1] = np.float32(3.0e38)
    co[5::13, 1] = np.float32(1e-42)  # subnormal
    return co.ravel()


def _write_both(route_direct: bool | None, monkeypatch, rng, sizes) -> list[dict[str, bytes]]:
    monkeypatch.setattr(keyframe_memory, "direct", route_direct)
    bag = _bag()
    written = []
    for i, k in enumerate(sizes):
        co = _co(rng, k)
        ipo = np.full(k, int(rng.integers(0, 3)), np.uint8)
        ipo[::3] = 1
        fcurve = bag.fcurves.new("location", index=i)
        fcurve.keyframe_points.add(k)
        keyframe_memory.write_keys(fcurve.keyframe_points, co, ipo)
        written.append(_keys(fcurve))
        # and RNA's route on a curve of its own, for the reference
        ref = bag.fcurves.new("rotation_euler", index=i)
        ref.keyframe_points.add(k)
        ref.keyframe_points.foreach_set("co", co)
        ref.keyframe_points.foreach_set("interpolation", ipo)
        assert written[-1] == _keys(ref), (route_direct, i, k)
    return written


@pytest.mark.parametrize("start", [None, True, False])
def test_direct_keys_equal_rna_keys(monkeypatch, start) -> None:
    bpy.ops.wm.read_homefile(use_empty=True)
    rng = np.random.default_rng(31)
    _write_both(start, monkeypatch, rng, [1, 2, 3, 17, 1000, 2, 250])
    if start is None:
        assert keyframe_memory.direct is True  # proven on this bpy (5.0 and 4.5 alike)


def test_a_wrong_layout_is_restored_and_written_through_rna(monkeypatch) -> None:
    bpy.ops.wm.read_homefile(use_empty=True)
    wrong = np.dtype(
        {"names": ["co", "ipo"], "formats": ["=u8", "u1"], "offsets": [0, 51],
         "itemsize": keyframe_memory.KEY_BYTES}
    )  # fmt: skip
    monkeypatch.setattr(keyframe_memory, "RECORD", wrong)
    rng = np.random.default_rng(32)
    _write_both(None, monkeypatch, rng, [40, 40])
    assert keyframe_memory.direct is False


def test_keys_that_are_not_72_bytes_apart_are_never_touched(monkeypatch) -> None:
    bpy.ops.wm.read_homefile(use_empty=True)
    monkeypatch.setattr(keyframe_memory, "KEY_BYTES", 80)
    rng = np.random.default_rng(33)
    _write_both(None, monkeypatch, rng, [10, 10])
    assert keyframe_memory.direct is False


def test_builder_curves_equal_with_and_without_the_direct_route(monkeypatch) -> None:
    bpy.ops.wm.read_homefile(use_empty=True)
    ob = bpy.data.objects.new("target", None)
    rng = np.random.default_rng(34)
    k = 300
    frames = np.cumsum(rng.uniform(0.2, 2.0, k))
    rot = rng.normal(size=(k, 4))
    rot /= np.linalg.norm(rot, axis=1)[:, None]
    channels = Channels(frames, rng.normal(size=(k, 3)), rot, rng.uniform(0.5, 2, (k, 3)))
    spline = Channels(frames, rng.normal(size=(k, 3)), rot, np.ones((k, 3)),
                      location_slope=rng.normal(size=(k, 3)))  # fmt: skip
    built = []
    for flag in (False, None):
        monkeypatch.setattr(keyframe_memory, "direct", flag)
        builder = actions.ActionBuilder(f"set {flag}")
        slot = builder.slot_for(ob)
        builder.write(slot, actions.bone_path("hip"), channels, "hip", cyclic=True)
        builder.write(slot, actions.bone_path("leg"), spline, "leg")
        built.append(
            [(f.data_path, f.array_index, f.group.name, len(f.modifiers), _keys(f))
             for f in builder.action.layers[0].strips[0].channelbags[0].fcurves]
        )  # fmt: skip
    assert keyframe_memory.direct is True
    assert built[0] == built[1]


def test_a_curve_with_other_keys_goes_through_rna(monkeypatch) -> None:
    # only a curve's whole key array is written directly; co and interpolation are those of
    # the curve's keys as foreach_set addresses them
    bpy.ops.wm.read_homefile(use_empty=True)
    monkeypatch.setattr(keyframe_memory, "direct", True)
    bag = _bag()
    fcurve = bag.fcurves.new("location", index=0)
    fcurve.keyframe_points.add(8)
    co = _co(np.random.default_rng(35), 8)
    with pytest.raises(RuntimeError):  # foreach_set refuses a size that is not the curve's
        keyframe_memory.write_keys(fcurve.keyframe_points, co[:8], np.ones(4, np.uint8))
