"""Animation-only files: what the plain importer says about them, and prefixed bone names."""

from __future__ import annotations

import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene import importer  # noqa: E402
from xof.addon.scene.anim.animation_only import import_animation_file  # noqa: E402
from xof.addon.xfile import read, scene_of  # noqa: E402

from ..rig.test_skin_fixture import assert_matches  # noqa: E402
from ..skin_fixtures import anim_only_text, character_text, write  # noqa: E402

pytestmark = pytest.mark.blender


def prefixed(text: str, prefix: str) -> str:
    """The animation-only fixture with every frame name (and reference) prefixed."""
    for name in ("Hip", "Spine", "Head", "Tail"):
        text = text.replace(f"Frame {name} ", f"Frame {prefix}{name} ")
        text = text.replace(f"{{ {name} }}", f"{{ {prefix}{name} }}")
    return text


@pytest.fixture
def rigged(tmp_path):
    bpy.ops.wm.read_homefile(use_empty=True)
    character = write(tmp_path / "character.x", character_text())
    importer.import_files([character], importer.ImportOptions())
    return bpy.data.objects["character"], scene_of(read(str(character)))


def test_plain_import_of_an_animation_only_file_says_what_it_is(tmp_path):
    bpy.ops.wm.read_homefile(use_empty=True)
    path = write(tmp_path / "nod.x", anim_only_text())
    result = importer.import_files([path], importer.ImportOptions())
    first = result.warnings[0]
    assert "nod.x is an animation-only file" in first
    assert "1 animation set(s) for 2 frame(s), no mesh" in first
    assert "File > Import > DirectX Animation (.x)" in first
    assert first in result.summary()


def test_a_character_file_gets_no_such_hint(rigged, tmp_path):
    path = write(tmp_path / "again.x", character_text())
    result = importer.import_files([path], importer.ImportOptions())
    assert not any("animation-only" in w for w in result.warnings)


def test_prefixed_frame_names_match_bones_by_suffix(rigged, tmp_path):
    arm, character = rigged
    path = write(tmp_path / "nod.x", prefixed(anim_only_text(), "Frame1_"))
    result = import_animation_file(path, arm)
    assert result.matched == ["Frame1_Head"] and result.unmatched == ["Frame1_Tail"]
    assert any("by suffix: Frame1_Head -> Head" in n for n in result.notes)
    plain = scene_of(read(str(write(tmp_path / "plain.x", anim_only_text()))))
    for frame in (0, 3, 6, 4.5):  # the same pose as the unprefixed file gives
        assert_matches(character, plain.animation_sets[0], frame, skip={"SpinnerMesh"})


def test_strip_prefix_settles_names_a_suffix_cannot(rigged, tmp_path):
    arm, _ = rigged
    text = prefixed(anim_only_text(), "A_")
    # a second set animates the same bone under another prefix: suffixes are ambiguous
    text += text[text.index("AnimationSet") :].replace("Nod", "Other").replace("A_", "B_")
    path = write(tmp_path / "two.x", text)
    guessed = import_animation_file(path, arm)
    assert "A_Head" in guessed.unmatched and "B_Head" in guessed.unmatched
    assert any("several bones" in n for n in guessed.notes)
    stripped = import_animation_file(path, arm, importer.ImportOptions(strip_prefix="A_"))
    assert "A_Head" in stripped.matched and "B_Head" in stripped.unmatched
    assert any("after the prefix: A_Head -> Head" in n for n in stripped.notes)
