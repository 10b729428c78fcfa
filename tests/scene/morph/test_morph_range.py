"""Morph sets set the scene's frame range, as skeletal sets do (Set Scene Timing)."""

from __future__ import annotations

import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene import importer  # noqa: E402

from ..morph_fixtures import dance  # noqa: E402

pytestmark = pytest.mark.blender


@pytest.fixture
def scene():
    bpy.ops.wm.read_homefile(use_empty=True)
    sc = bpy.context.scene
    sc.render.fps, sc.render.fps_base = 24, 1.0
    sc.frame_start, sc.frame_end = 1, 250
    return sc


def test_the_range_is_the_morph_sets(scene, tmp_path):
    path = dance().write(tmp_path / "dance.x")  # keys at 0, 500 and 1000 ms
    importer.import_files([path], importer.ImportOptions())
    assert (scene.frame_start, scene.frame_end) == (1, 25)  # 1000 ms at 24 fps after frame 1


def test_without_scene_timing_the_range_only_grows(scene, tmp_path):
    scene.frame_end = 10
    path = dance().write(tmp_path / "dance.x")
    importer.import_files([path], importer.ImportOptions(scene_timing=False))
    assert (scene.frame_start, scene.frame_end) == (1, 25)
    scene.frame_end = 250
    importer.import_files([path], importer.ImportOptions(scene_timing=False))
    assert scene.frame_end == 250
