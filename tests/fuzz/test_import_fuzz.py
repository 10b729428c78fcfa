"""Hostile files through ``bpy.ops.import_scene.x``: a scene or a clean error, never an
importer exception, and a failed import leaves every ``bpy.data`` collection as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

bpy = pytest.importorskip("bpy")

from .import_campaign import campaign, enable_addon, import_one  # noqa: E402

pytestmark = pytest.mark.blender

CRASHERS = sorted((Path(__file__).parent / "crashers").glob("import-*.x"))

SINGULAR_FRAME = b"""xof 0303txt 0032
Frame Root {
 FrameTransformMatrix { 0,0,0,0, 0,0,0,0, 0,0,0,0, 0,0,0,0;; }
 Frame Bone { FrameTransformMatrix { 1,0,0,0, 0,1,0,0, 0,0,1,0, 0,1,0,1;; } }
 Mesh Tri {
  3; 0;0;0;, 1;0;0;, 0;1;0;; 1; 3;0,1,2;;
  XSkinMeshHeader { 1; 1; 2; }
  SkinWeights { "Bone"; 3; 0,1,2; 1,1,1; 1,0,0,0, 0,1,0,0, 0,0,1,0, 0,-1,0,1;; }
 }
}
"""

DUPLICATION_RECORDS = b"""xof 0303txt 0032
template IndexPair { DWORD a; STRING s; }
template VertexDuplicationIndices { <B8D65549-D7C9-4995-89CF-53A9A8B031E3>
 DWORD nIndices; DWORD nOriginalVertices; array IndexPair indices[nIndices]; }
Mesh Tri {
 3; 0;0;0;, 1;0;0;, 0;1;0;; 1; 3;0,1,2;;
 VertexDuplicationIndices { 3; 3; 0;"a";, 1;"b";, 2;"c";; }
}
"""


HUGE_MORPH_TIME = b"""xof 0303txt 0032
Mesh A { 3; 0;0;0;, 1;0;0;, 0;1;0;; 1; 3;0,1,2;; }
Mesh B { 3; 0;0;1;, 1;0;1;, 0;1;1;; 1; 3;0,1,2;; }
MorphAnimationSet M { 2; 0; "A";, 3.5e38; "B";; }
"""

ORIGINAL_COUNT_RECORD = b"""xof 0303txt 0032
template Pair { DWORD a; DWORD b; }
template VertexDuplicationIndices { <B8D65549-D7C9-4995-89CF-53A9A8B031E3>
 DWORD nIndices; Pair nOriginalVertices; array DWORD indices[nIndices]; }
Mesh Tri {
 3; 0;0;0;, 1;0;0;, 0;1;0;; 1; 3;0,1,2;;
 VertexDuplicationIndices { 3; 1; 2;; 0, 1, 2; }
}
"""

LATE_KEY = b"""xof 0303txt 0032
AnimTicksPerSecond { 1; }
Frame F {
 FrameTransformMatrix { 1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1;; }
 Mesh M { 3; 0;0;0;, 1;0;0;, 0;1;0;; 1; 3;0,1,2;; }
}
AnimationSet A { Animation { { F } AnimationKey { 2; 2; 0;3;0,0,0;;, 4294967295;3;1,0,0;;; } } }
"""

HUGE_ORIGINAL_VERTICES = b"""xof 0303txt 0032
Mesh Tri { 3; 0;0;0;, 1;0;0;, 0;1;0;; 1; 3;0,1,2;;
 VertexDuplicationIndices { 3; 99999999999; 0,1,2; } }
"""

# a DeclData normal whose first float's bits are a signalling NaN (0x7f800001)
SIGNALLING_DECL_NORMAL = b"""xof 0303txt 0032
Mesh Tri {
 3; 0;0;0;, 1;0;0;, 0;1;0;; 1; 3;0,1,2;;
 DeclData { 1; 2;0;3;0;; 9; 2139095041,0,1065353216, 0,0,1065353216, 0,0,1065353216; }
}
"""


@pytest.fixture(scope="module", autouse=True)
def enabled():
    import addon_utils

    enable_addon()
    bpy.ops.wm.read_homefile(use_empty=True)
    yield
    addon_utils.disable("xof", default_set=True)


def test_singular_frame_matrix_of_a_bone_does_not_break_the_import(tmp_path: Path) -> None:
    """LinAlgError from armature.basis_sides: a bone whose bind (frame chain) is singular."""
    status, detail = import_one(bpy, SINGULAR_FRAME, tmp_path / "singular.x")
    assert status in ("ok", "error"), detail


def test_duplication_indices_of_a_declared_record_template_are_skipped(tmp_path: Path) -> None:
    """TypeError from meshes._set_duplication_indices: indices as a list of dicts."""
    status, detail = import_one(bpy, DUPLICATION_RECORDS, tmp_path / "dup.x")
    assert status == "ok", detail
    assert "Tri" in bpy.data.meshes or len(bpy.data.meshes) == 0  # read_homefile after ok


def test_an_original_vertex_count_that_is_a_record_is_not_stored(tmp_path: Path) -> None:
    """TypeError from meshes._set_duplication_indices (found by the import fuzz): a
    file-declared template made nOriginalVertices a record (a dict), not a count."""
    path = tmp_path / "dup.x"
    path.write_bytes(ORIGINAL_COUNT_RECORD)
    assert bpy.ops.import_scene.x(filepath=str(path)) == {"FINISHED"}
    mesh = bpy.data.meshes["Tri"]
    assert "xof_original_vertices" not in mesh
    values = [v.value for v in mesh.attributes["xof_duplication_index"].data]
    assert values == [0, 1, 2]
    bpy.ops.wm.read_homefile(use_empty=True)


def test_morph_key_at_3e38_ms_clamps_the_scene_end(tmp_path: Path) -> None:
    """ValueError from morphs.build_morphs: Scene.frame_end past Blender's int range."""
    path = tmp_path / "morph.x"
    path.write_bytes(HUGE_MORPH_TIME)
    assert bpy.ops.import_scene.x(filepath=str(path)) == {"FINISHED"}
    assert bpy.context.scene.frame_end == 1048574  # Blender's MAXFRAME
    bpy.ops.wm.read_homefile(use_empty=True)


def test_a_key_past_blenders_last_frame_clamps_the_scene_range(tmp_path: Path) -> None:
    """ValueError from animation.build_actions (found by the import fuzz): a key at
    4294967295 ticks, 1 tick a second, is frame ~1e11, past the int of Scene.frame_end."""
    path = tmp_path / "late.x"
    path.write_bytes(LATE_KEY)
    assert bpy.ops.import_scene.x(filepath=str(path)) == {"FINISHED"}
    scene = bpy.context.scene
    assert (scene.frame_start, scene.frame_end) == (0, 1048574)  # Blender's MAXFRAME
    bpy.ops.wm.read_homefile(use_empty=True)


def test_huge_original_vertex_count_is_not_stored(tmp_path: Path) -> None:
    """OverflowError from meshes._set_duplication_indices: an ID property is a C int."""
    path = tmp_path / "dup.x"
    path.write_bytes(HUGE_ORIGINAL_VERTICES)
    assert bpy.ops.import_scene.x(filepath=str(path)) == {"FINISHED"}
    mesh = bpy.data.meshes["Tri"]
    assert "xof_original_vertices" not in mesh
    assert "xof_duplication_index" in mesh.attributes
    bpy.ops.wm.read_homefile(use_empty=True)


def test_a_signalling_nan_in_decl_data_stays_a_quiet_nan(tmp_path: Path) -> None:
    """numpy's "invalid value encountered in cast" (the import fuzz found it in an unknown
    template's binary floats): a DeclData float with a signalling NaN's bits reads as a NaN,
    quietly, and the import goes on."""
    status, detail = import_one(bpy, SIGNALLING_DECL_NORMAL, tmp_path / "decl.x")
    assert status == "ok", detail


@pytest.mark.parametrize("path", CRASHERS, ids=lambda p: p.name)
def test_import_crasher_imports_or_fails_cleanly(path: Path, tmp_path: Path) -> None:
    status, detail = import_one(bpy, path.read_bytes(), tmp_path / "input.x")
    assert status in ("ok", "error"), detail


def test_import_fuzz_smoke() -> None:
    result = campaign(inputs=60, seconds=20.0, rng_seed=11, folder=None)
    assert result["inputs"] >= 20
    assert set(result["outcomes"]) <= {"ok", "error"}, result["bad"]


def test_scene_settings_changed_by_a_failed_import_are_found_and_put_back(
    tmp_path: Path, monkeypatch
) -> None:
    # the file sets the scene to 30 fps and its frame range; then a clean error ends it
    from xof.addon.scene import importer
    from xof.addon.scene.imp import rollback
    from xof.addon.scene.imp.context import BuildStep
    from xof.addon.xfile import XFileError

    from ..scene.skin_fixtures import character_text

    def refuse(ctx):
        raise XFileError("character.x: refused late")

    monkeypatch.setattr(importer, "STEPS", (*importer.STEPS, BuildStep("late", refuse)))
    data = character_text().encode()
    status, _ = import_one(bpy, data, tmp_path / "character.x")
    assert status == "error"
    monkeypatch.setattr(rollback, "restore_scene_settings", lambda saved: None)
    status, detail = import_one(bpy, data, tmp_path / "character.x")
    assert status == "leak" and "scene settings changed" in detail and "'fps': (17, 30)" in detail
