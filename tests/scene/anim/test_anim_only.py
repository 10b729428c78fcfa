"""An animation-only file applied to the imported character's armature, by bone name."""

from __future__ import annotations

import math

import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene import importer  # noqa: E402
from xof.addon.scene.anim.animation_only import import_animation_file  # noqa: E402
from xof.addon.xfile import read, scene_of  # noqa: E402
from xof.operators import import_x_animation  # noqa: E402

from ..cloth_fixtures import fcurves  # noqa: E402
from ..rig.test_skin_fixture import assert_matches  # noqa: E402
from ..skin_fixtures import anim_only_text, character_text, write  # noqa: E402

pytestmark = pytest.mark.blender


@pytest.fixture
def rigged(tmp_path):
    bpy.ops.wm.read_homefile(use_empty=True)
    character = write(tmp_path / "character.x", character_text())
    importer.import_files([character], importer.ImportOptions())
    anim = write(tmp_path / "nod.x", anim_only_text())
    return bpy.data.objects["character"], anim, scene_of(read(str(character)))


def test_nod_plays_on_the_character(rigged):
    arm, anim_path, character = rigged
    result = import_animation_file(anim_path, arm)
    assert [a.name for a in result.actions] == ["Nod"]
    assert result.matched == ["Head"] and result.unmatched == ["Tail"]
    assert any("Tail" in w for w in result.warnings)
    assert arm.animation_data.action.name == "Nod"
    # what played before is kept on a muted track
    assert {t.name for t in arm.animation_data.nla_tracks} >= {"Walk", "Wave"}
    nod = scene_of(read(str(anim_path))).animation_sets[0]
    for frame in (0, 3, 6, 4.5, 10):  # keys at 0, 6, 12 frames (30 fps)
        assert_matches(character, nod, frame, skip={"SpinnerMesh"})


def test_operator_needs_an_armature_and_reports(rigged):
    arm, anim_path, _ = rigged
    import_x_animation.register()
    try:
        bpy.context.view_layer.objects.active = bpy.data.objects["Body"]
        assert not bpy.ops.import_anim.x_onto_armature.poll()
        bpy.context.view_layer.objects.active = arm
        assert bpy.ops.import_anim.x_onto_armature(filepath=str(anim_path)) == {"FINISHED"}
        assert arm.animation_data.action.name == "Nod"
    finally:
        import_x_animation.unregister()


SQUASHED_ROOT = """xof 0303txt 0032
Frame Root {
 FrameTransformMatrix { 1,0,0,0, 0,0,0,0, 0,0,1,0, 0,0,0,1;; }
 Frame Child {
  FrameTransformMatrix { 1,0,0,0, 0,1,0,0, 0,0,1,0, 1,2,3,1;; }
  Mesh Tri { 3; 0;0;0;, 1;0;0;, 0;1;0;; 1; 3;0,1,2;;
   XSkinMeshHeader { 1; 1; 1; }
   SkinWeights { "Child"; 3; 0,1,2; 1,1,1; 1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1;; } }
 }
}
"""

WAVE = """xof 0303txt 0032
AnimTicksPerSecond { 30; }
AnimationSet Wave {
 Animation { { Child } AnimationKey { 2; 2; 0;3;0,0,0;;, 30;3;1,0,0;;; } }
}
"""


def test_animation_onto_a_bone_whose_parent_is_scaled_to_zero(tmp_path):
    """LinAlgError (Singular matrix) from targets_from_armature (found after an export
    fuzz finding): an animation-only file's bone takes its rest from its parent's bind,
    here a frame with a zero y scale; the pseudo-inverse stands in, as the export does."""
    bpy.ops.wm.read_homefile(use_empty=True)
    rig = write(tmp_path / "squashed.x", SQUASHED_ROOT)
    importer.import_files([rig], importer.ImportOptions())
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    result = import_animation_file(write(tmp_path / "wave.x", WAVE), arm)
    assert [a.name for a in result.actions] == ["Wave"] and result.matched == ["Child"]
    assert arm.animation_data.action.name == "Wave"
    values = [v for fc in fcurves(arm) for k in fc.keyframe_points
              for v in k.co]  # fmt: skip
    assert values and all(math.isfinite(v) for v in values)
