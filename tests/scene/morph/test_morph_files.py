"""Morph files end to end: written .X text -> reader -> importer -> evaluated mesh."""

from __future__ import annotations

import dataclasses

import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene import importer  # noqa: E402
from xof.addon.scene.imp.options import MorphImportOptions  # noqa: E402

from ..morph_fixtures import MorphFixture, dance, four_keys, mismatched, shared_sets  # noqa: E402
from .test_morph_build import assert_plays  # noqa: E402

pytestmark = pytest.mark.blender


@pytest.fixture
def scene():
    bpy.ops.wm.read_homefile(use_empty=True)
    sc = bpy.context.scene
    sc.render.fps, sc.render.fps_base = 24, 1.0
    sc.frame_start = 1
    return sc


def import_fixture(fixture: MorphFixture, tmp_path, **extra) -> importer.ImportResult:
    path = fixture.write(tmp_path / "morph.x")
    return importer.import_files([path], importer.ImportOptions(morphs=MorphImportOptions(**extra)))


@pytest.mark.parametrize("loop_variant", [False, True])
def test_views_give_the_sets_as_written(tmp_path, loop_variant):
    fixture = shared_sets() if loop_variant else four_keys()
    path = fixture.write(tmp_path / "morph.x")
    data = importer.scene_of(importer.read(str(path)))
    got = [(s.name, s.loop, [(k.time_ms, k.mesh_name) for k in s.keys]) for s in data.morph_sets]
    want = [
        (n, loop and loop_variant, [(float(t), m) for t, m in k]) for n, loop, k in fixture.sets
    ]
    assert got == want


@pytest.mark.parametrize(
    ("loop_variant", "loop", "declared"),
    [(False, False, True), (True, False, True), (True, True, True), (False, False, False)],
)
def test_dance_file_plays(scene, tmp_path, loop_variant, loop, declared):
    fixture = dataclasses.replace(
        dance(loop_variant=loop_variant, loop=loop), declare_templates=declared
    )
    result = import_fixture(fixture, tmp_path)
    assert [o.name for o in result.objects if o.type == "MESH"] == ["Figure1"]
    obj = bpy.data.objects["Figure1"]
    assert_plays(fixture, obj, "Dance", [1, 5, 13, 19.5, 25, 31, 40], loop, scene)


def test_four_keys_and_shared_sets_files_play(scene, tmp_path):
    fixture = four_keys()
    import_fixture(fixture, tmp_path)
    assert_plays(
        fixture, bpy.data.objects["Pose0"], "Walk", [1, 4, 9, 20, 30, 45, 49], False, scene
    )

    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base, scene.frame_start = 24, 1.0, 1
    fixture = shared_sets()
    result = import_fixture(fixture, tmp_path)
    assert sorted(o.name for o in result.objects) == ["Other", "Rest"]
    assert_plays(fixture, bpy.data.objects["Rest"], "Happy", [1, 7, 13.3, 20], False, scene)


def test_mismatched_file_warns_and_plays_the_rest(scene, tmp_path):
    fixture = mismatched()
    result = import_fixture(fixture, tmp_path)
    assert any("'Bad'" in w and "'Base'" in w for w in result.warnings)
    assert "Bad" in bpy.data.objects  # not consumed: it became no key
    played = MorphFixture(fixture.meshes, [("Mixed", False, [(0, "Base"), (1000, "Good")])])
    assert_plays(played, bpy.data.objects["Base"], "Mixed", [1, 9, 25], False, scene)


def test_import_operator_morph_options(scene, tmp_path):
    from xof.operators import import_x

    fixture = dance()
    path = fixture.write(tmp_path / "dance.x")
    registered = hasattr(bpy.types, import_x.IMPORT_SCENE_OT_x.__name__)
    if not registered:
        import_x.register()
    try:
        result = bpy.ops.import_scene.x(
            filepath=str(path), morph_keep_targets=True, morph_loop=True
        )
    finally:
        if not registered:
            import_x.unregister()
    assert result == {"FINISHED"}
    assert sorted(o.name for o in scene.objects) == ["Figure1", "Figure2"]
    assert_plays(fixture, bpy.data.objects["Figure1"], "Dance", [7, 31, 43.5], True, scene)
