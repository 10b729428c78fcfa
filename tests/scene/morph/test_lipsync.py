"""Lip-sync files: a PhonemeSequence drives the face's shape keys (the book's blend).

Expected shapes are the book's rule worked by hand: inside phoneme i (start s, end e) the
face is target(i) * (1 - f) + target(i + 1) * f with f = (t - s) / (e - s), the last holds,
and the sequence loops over last end + 1 ms.
"""

from __future__ import annotations

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene import importer  # noqa: E402

from ..morph_fixtures import MorphFixture, grid_positions  # noqa: E402
from .test_morph_build import evaluated_positions  # noqa: E402

pytestmark = pytest.mark.blender

TEMPLATES = (
    "template Phoneme {\n <1C4D1D3C-3F3B-4E4E-9D8A-6B1C2A3D4E50>\n"
    " DWORD PhonemeIndex;\n DWORD StartTime;\n DWORD EndTime;\n}\n"
    "template PhonemeSequence {\n <1C4D1D3C-3F3B-4E4E-9D8A-6B1C2A3D4E51>\n"
    " DWORD NumPhonemes;\n array Phoneme Phonemes[NumPhonemes];\n}\n"
)
# silence 0-100 ms, AA (-> aaa) 100-250, EH (-> eee) 250-400
PHONEMES = [(0, 0, 100), (1, 100, 250), (10, 250, 400)]
FACES = {"neutral": grid_positions(1), "aaa": grid_positions(2), "eee": grid_positions(3)}


def lipsync_text(phonemes=PHONEMES) -> str:
    rows = ",\n".join(f" {i}; {s}; {e};" for i, s, e in phonemes)
    return (
        f"xof 0303txt 0032\n{TEMPLATES}PhonemeSequence Hello {{\n {len(phonemes)};\n{rows};\n}}\n"
    )


@pytest.fixture
def face(tmp_path):
    bpy.ops.wm.read_homefile(use_empty=True)
    sc = bpy.context.scene
    sc.render.fps, sc.render.fps_base, sc.frame_start = 24, 1.0, 1
    path = MorphFixture(meshes=dict(FACES), sets=[]).write(tmp_path / "faces.x")
    importer.import_files([path], importer.ImportOptions(targets_as_shape_keys=True))
    obj = next(o for o in bpy.data.objects if o.type == "MESH")
    bpy.context.view_layer.objects.active = obj
    return obj


def book_blend(t_ms: float) -> np.ndarray:
    """The book's face at t (ms), in Blender space."""
    length = PHONEMES[-1][2] + 1.0
    t = t_ms % length
    names = {0: "neutral", 1: "aaa", 10: "eee"}
    shape = FACES[names[PHONEMES[-1][0]]]
    for k, (index, start, end) in enumerate(PHONEMES):
        if start <= t < end:
            f = (t - start) / (end - start)
            nxt = PHONEMES[k + 1][0] if k + 1 < len(PHONEMES) else index
            shape = (1 - f) * FACES[names[index]] + f * FACES[names[nxt]]
            break
    return shape[:, [0, 2, 1]]


def test_the_sequence_plays_the_books_blend_and_loops(face, tmp_path):
    path = tmp_path / "hello.x"
    path.write_text(lipsync_text(), encoding="ascii")
    result = importer.import_files([path], importer.ImportOptions())
    key = face.data.shape_keys
    assert key.animation_data.action.name == "Hello"
    assert any("3 phonemes as action 'Hello'" in n for n in result.notes)
    assert not any("PhonemeSequence" in e for e in result.extras)  # imported, not kept
    scene = bpy.context.scene
    for t_ms in (0, 50, 100, 175, 249, 300, 400, 401 + 175):
        frame = scene.frame_start + t_ms * 24 / 1000.0
        got = evaluated_positions(face, frame)
        np.testing.assert_allclose(got, book_blend(t_ms), atol=1e-5, err_msg=f"{t_ms} ms")
    assert scene.frame_end == int(np.ceil(1 + 400 * 24 / 1000))


def test_an_edited_map_changes_the_target(face, tmp_path):
    path = tmp_path / "hello.x"
    path.write_text(lipsync_text(), encoding="ascii")
    names = ["neutral"] + ["eee"] * 37  # every sound the "eee" face
    importer.import_files([path], importer.ImportOptions(phoneme_map=",".join(names)))
    frame = bpy.context.scene.frame_start + 100 * 24 / 1000.0  # AA's start: all "eee" now
    np.testing.assert_allclose(
        evaluated_positions(face, frame), FACES["eee"][:, [0, 2, 1]], atol=1e-5
    )


def test_without_a_face_it_says_what_to_select(tmp_path):
    bpy.ops.wm.read_homefile(use_empty=True)
    path = tmp_path / "hello.x"
    path.write_text(lipsync_text(), encoding="ascii")
    result = importer.import_files([path], importer.ImportOptions())
    assert any("PhonemeSequence: no face to drive" in w for w in result.warnings)
    assert len(bpy.data.actions) == 0


def test_a_broken_sequence_is_reported_with_its_place(face, tmp_path):
    path = tmp_path / "bad.x"
    text = lipsync_text().replace(" 3;\n", " 3;\n", 1)
    text = text.replace(
        "array Phoneme Phonemes[NumPhonemes];", "array DWORD Phonemes[NumPhonemes];"
    )
    path.write_text(text, encoding="ascii")
    result = importer.import_files([path], importer.ImportOptions())
    assert any(w.startswith("bad.x:") and "not (n, 3)" in w for w in result.warnings), (
        result.warnings
    )


def test_a_phoneme_past_blenders_last_frame_ends_the_scene_there(face, tmp_path):
    """A file declaring the times as FLOAT: a phoneme ending at 3e38 ms made Scene.frame_end
    an int past the property's (the import failed)."""
    text = lipsync_text([(0, 0, 100), (1, 100, "3e38")]).replace(
        "DWORD StartTime;\n DWORD EndTime;", "FLOAT StartTime;\n FLOAT EndTime;"
    )
    path = tmp_path / "late.x"
    path.write_text(text, encoding="ascii")
    importer.import_files([path], importer.ImportOptions())
    assert face.data.shape_keys.animation_data.action.name == "Hello"
    assert bpy.context.scene.frame_end == 1048574  # Blender's MAXFRAME
