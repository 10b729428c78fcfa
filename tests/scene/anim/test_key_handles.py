"""Imported linear keys carry the handles Blender's own key insertion gives them, so a user
who switches them to Bezier in the Graph Editor sees the motion as it was, not a swing to the
origin (the keys' handles were left at (0, 0): a constant 1.0 read 0.89 between keys)."""

from __future__ import annotations

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene import importer  # noqa: E402

from ..skin_fixtures import character_text, write  # noqa: E402

pytestmark = [pytest.mark.blender, pytest.mark.usefixtures("empty_scene")]


def _curves(action) -> list:
    if hasattr(action, "fcurves") and len(action.fcurves):
        return list(action.fcurves)
    return [
        fc
        for layer in action.layers
        for strip in layer.strips
        for bag in strip.channelbags
        for fc in bag.fcurves
    ]


def _handles(points) -> tuple[np.ndarray, np.ndarray]:
    left = np.empty(2 * len(points), dtype=np.float32)
    right = np.empty(2 * len(points), dtype=np.float32)
    points.foreach_get("handle_left", left)
    points.foreach_get("handle_right", right)
    return left.reshape(-1, 2), right.reshape(-1, 2)


def _inserted_like(curve):
    """The same keys put in by Blender's own insertion, one by one (the reference)."""
    holder = bpy.data.objects.new("reference", None)
    bpy.context.scene.collection.objects.link(holder)
    holder.animation_data_create()
    action = bpy.data.actions.new("reference")
    holder.animation_data.action = action
    ref = action.fcurve_ensure_for_datablock(holder, "location", index=0)
    for modifier in curve.modifiers:  # a cyclic curve's ends take their handles across
        ref.modifiers.new(modifier.type)
    for key in curve.keyframe_points:
        ref.keyframe_points.insert(key.co[0], key.co[1], options={"FAST"})
    ref.update()
    return ref


def test_linear_keys_have_the_handles_blender_gives_them(tmp_path) -> None:
    importer.import_files([write(tmp_path / "character.x", character_text())])
    curves = [c for a in bpy.data.actions for c in _curves(a) if len(c.keyframe_points) > 2]
    assert curves
    checked = 0
    for curve in curves[:12]:
        points = curve.keyframe_points
        assert {k.interpolation for k in points} == {"LINEAR"}
        left, right = _handles(points)
        assert not np.all(left == 0.0)  # set, not left at (0, 0)
        ref_left, ref_right = _handles(_inserted_like(curve).keyframe_points)
        np.testing.assert_allclose(left, ref_left, atol=1e-5)
        np.testing.assert_allclose(right, ref_right, atol=1e-5)
        checked += 1
    assert checked


def test_switched_to_bezier_the_motion_stays_between_its_keys(tmp_path) -> None:
    importer.import_files([write(tmp_path / "character.x", character_text())])
    for action in bpy.data.actions:
        for curve in _curves(action):
            points = curve.keyframe_points
            if len(points) < 2:
                continue
            values = np.array([k.co[1] for k in points])
            for key in points:  # what Graph Editor > Key > Interpolation Mode > Bezier sets
                key.interpolation = "BEZIER"
            first, last = points[0].co[0], points[-1].co[0]
            between = [curve.evaluate(f) for f in np.linspace(first, last, 41)]
            span = float(values.max() - values.min())
            slack = 0.5 * span + 1e-6  # an auto-clamped Bezier stays near its keys' range
            assert min(between) >= values.min() - slack and max(between) <= values.max() + slack
