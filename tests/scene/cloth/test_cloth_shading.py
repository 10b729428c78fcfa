"""Simulated cloth shades from its own deformed geometry (issue: the demo cape kept its rest
normals, from the file's custom normals, and showed flat, stair-stepped bands)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

pytestmark = pytest.mark.blender
CAPE = Path(__file__).resolve().parents[3] / "examples" / "cape.x"


def corner_face_angles(obj) -> np.ndarray:
    """Degrees between each evaluated corner normal and its face's normal."""
    dg = bpy.context.evaluated_depsgraph_get()
    ev = obj.evaluated_get(dg)
    mesh = ev.to_mesh()
    try:
        corners = np.empty(len(mesh.loops) * 3, dtype=np.float32)
        mesh.corner_normals.foreach_get("vector", corners)
        faces = np.empty(len(mesh.polygons) * 3, dtype=np.float32)
        mesh.polygons.foreach_get("normal", faces)
        sizes = np.empty(len(mesh.polygons), dtype=np.int32)
        mesh.polygons.foreach_get("loop_total", sizes)
    finally:
        ev.to_mesh_clear()
    per_corner = np.repeat(faces.reshape(-1, 3), sizes, axis=0)
    cos = np.einsum("ij,ij->i", corners.reshape(-1, 3), per_corner)
    return np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))


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
