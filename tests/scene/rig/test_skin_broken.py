"""Broken skin data: a warning each, and the rest of the file still imports and deforms."""

from __future__ import annotations

import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene import importer  # noqa: E402
from xof.addon.xfile import read, scene_of  # noqa: E402

from tests.conftest import CORPUS_HELP  # noqa: E402

from ..skin_fixtures import character_text, write  # noqa: E402
from .test_skin_fixture import assert_matches  # noqa: E402

pytestmark = pytest.mark.blender


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        ("index", "out of range"),  # the reader or the skin plan reports it
        ("nan", "not finite or negative"),
        ("missing", "'Ghost', which the file does not have"),
    ],
)
def test_broken_weights_warn_and_import(tmp_path, broken, message):
    bpy.ops.wm.read_homefile(use_empty=True)
    path = write(tmp_path / f"{broken}.x", character_text(broken))
    result = importer.import_files([path], importer.ImportOptions())
    assert any(message in w for w in result.warnings), result.warnings
    data = scene_of(read(str(path)))
    # the reference drops the same entries (out of range, NaN, frames that do not exist)
    for frame in (0, 5, 10):
        assert_matches(data, data.animation_sets[0], frame)


def test_corpus_out_of_range_index(corpus):
    path = corpus / "malformed_skinweights_oob.x"
    if not path.exists():
        pytest.skip(f"{path.name} is absent from the real-file corpus: {CORPUS_HELP}")
    bpy.ops.wm.read_homefile(use_empty=True)
    result = importer.import_files([path], importer.ImportOptions())
    assert any("out of range" in w for w in result.warnings), result.warnings
    meshes = [o for o in result.objects if o.type == "MESH"]
    assert meshes and all(o.modifiers and o.modifiers[0].type == "ARMATURE" for o in meshes)
