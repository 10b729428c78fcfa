"""Simulated cloth shades from its own deformed geometry (issue: the demo cape kept its rest
normals, from the file's custom normals, and showed flat, stair-stepped bands)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from ..scene_fixtures import evaluated_corner_face_angles as corner_face_angles  # noqa: E402

pytestmark = pytest.mark.blender
CAPE = Path(__file__).resolve().parents[3] / "examples" / "cape.x"


def test_the_simulated_cape_shades_from_its_own_shape() -> None:
    import addon_utils

    bpy.ops.wm.read_homefile(use_empty=True)
    addon_utils.enable("xof", default_set=True)
    try:
        assert bpy.ops.import_scene.x(filepath=str(CAPE)) == {"FINISHED"}
        cape = next(o for o in bpy.data.objects if o.type == "MESH")
        props = cape.xof_physics
        assert props.enabled
        props.wind = (0.6, -0.8, 0.0)  # the demo's breeze
        scene = bpy.context.scene
        scene.frame_set(props.frame_start)
        at_rest = np.median(corner_face_angles(cape))
        for f in range(props.frame_start + 1, props.frame_start + 31):
            scene.frame_set(f)
        angles = corner_face_angles(cape)
        assert at_rest < 5.0  # flat at the start: either way the normals fit
        assert np.median(angles) < 35.0
        assert np.percentile(angles, 90) < 60.0
    finally:
        addon_utils.disable("xof")
