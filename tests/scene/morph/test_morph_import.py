"""The morph step inside the importer: Basis on the importer's object, targets consumed."""

from __future__ import annotations

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")
importer = pytest.importorskip("xof.addon.scene.importer")

from ..morph_fixtures import dance, shared_sets  # noqa: E402
from .test_morph_build import assert_plays, evaluated_positions, ms_at  # noqa: E402

pytestmark = pytest.mark.blender


@pytest.fixture
def scene():
    bpy.ops.wm.read_homefile(use_empty=True)
    sc = bpy.context.scene
    sc.render.fps, sc.render.fps_base = 24, 1.0
    sc.frame_start = 1
    return sc


def mesh_objects(scene):
    return sorted(o.name for o in scene.objects if o.type == "MESH")


def test_import_consumes_targets_and_plays(scene):
    fixture = shared_sets()
    ctx = importer.build_scene(fixture.scene_data(), importer.ImportOptions())
    assert mesh_objects(scene) == ["Other", "Rest"]
    assert sorted(o.name for o in ctx.result.objects) == ["Other", "Rest"]
    assert all(o.name in ("Other", "Rest") for o in ctx.mesh_objects.values())
    assert [m.name for m in ctx.result.meshes if m.users] == [m.name for m in ctx.result.meshes]
    rest = bpy.data.objects["Rest"]
    assert [b.name for b in rest.data.shape_keys.key_blocks] == ["Rest", "Smile", "Frown"]
    assert_plays(fixture, rest, "Happy", [1, 6, 10.6, 20], False, scene)
    assert {"Happy", "Sad", "Lone"} <= {a.name for a in ctx.result.created}


def test_import_options_keep_targets_loop_and_scale(scene):
    fixture = dance()
    options = importer.ImportOptions(global_scale=2.0, keep_targets=True, loop_all=True)
    importer.build_scene(fixture.scene_data(), options)
    assert mesh_objects(scene) == ["Figure1", "Figure2"]
    obj = bpy.data.objects["Figure1"]
    for frame in (4, 13, 31, 43.5):  # 31 and 43.5: the second cycle
        want = 2.0 * fixture.expected("Dance", ms_at(frame, scene), loop=True)
        np.testing.assert_allclose(evaluated_positions(obj, frame), want, atol=2e-5)
