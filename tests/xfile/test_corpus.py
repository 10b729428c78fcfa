"""Every real file of ../shared/xcorpus parses (the corrupt one fails cleanly).

Expected counts were written down from the files themselves (grep/awk on the text files,
a hex dump of the binary one) and from ``assimp info`` (its vertex count is our corners).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from addon.xfile import XFileError, read, scene_of
from tests.conftest import CORPUS_HELP

pytestmark = pytest.mark.corpus

# file: (format, [(mesh, vertices, faces, corners)], frames, skin weights, anim sets, ticks)
EXPECTED = {
    "BCN_Epileptic.X": ("txt", [("mesh_Torso", 1170, 1966, None), ("mesh_Head", 1196, 2036, None),
                                ("mesh_Legs", 648, 1124, None)], 57, 54, 1, 4800.0),
    "Testwuson.X": ("txt", [("mesh_Wuson", 3205, 3732, 11196)], 39, 37, 3, 4800.0),
    "anim_test.x": ("txt", [("pCylinderShape1", 1720, 840, 2520)], 4, 4, 1, 24.0),
    "kwxport_test_cubewithvcolors.x": ("txt", [("mesh_Box01", 24, 12, 36)], 1, 0, 0, None),
    "test.x": ("txt", [("pCubeShape1", 24, 12, 36)], 1, 0, 0, None),
    "TestFormatDetection": ("txt", [("pCubeShape1", 24, 12, 36)], 1, 0, 0, None),
    "test_cube_text.x": ("txt", [("Cube", 24, 12, 36)], 2, 1, 0, 24.0),
    "test_cube_binary.x": ("bin", [("Cube", 24, 12, 36)], 2, 1, 0, 24.0),
    "test_cube_compressed.x": ("bzip", [("Cube", 24, 12, 36)], 2, 1, 0, 24.0),
    "fromtruespace_bin32.x": ("bin", [("FeedTheDinoGPUMesh", 4132, 6656, 19968)], 1, 0, 0, None),
    "malformed_skinweights_oob.x": ("txt", [("Cube", 24, 12, 36)], 2, 1, 0, 24.0),
}  # fmt: skip


def _file(corpus: Path, name: str) -> Path:
    path = corpus / name
    if not path.exists():
        pytest.skip(f"{name} is absent from the real-file corpus: {CORPUS_HELP}")
    return path


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_corpus_file_counts(corpus: Path, name: str) -> None:
    fmt, meshes, frames, weights, sets, ticks = EXPECTED[name]
    doc = read(_file(corpus, name))
    assert doc.format == fmt
    scene = scene_of(doc)
    got = [(m.name, len(m.positions), len(m.face_sizes), int(m.face_sizes.sum()))
           for m in scene.all_meshes()]  # fmt: skip
    assert [g[:3] for g in got] == [m[:3] for m in meshes]
    for g, m in zip(got, meshes, strict=True):
        if m[3] is not None:
            assert g[3] == m[3]
    counts = doc.count_by_template()
    assert counts.get("Frame", 0) == frames
    assert counts.get("SkinWeights", 0) == weights
    assert len(scene.animation_sets) == sets
    assert scene.ticks_per_second == ticks
    assert doc.unresolved == []


def test_bcn_all_triangles(corpus: Path) -> None:
    scene = scene_of(read(_file(corpus, "BCN_Epileptic.X")))
    assert sum(int(m.face_sizes.sum()) for m in scene.all_meshes()) == 15378  # assimp's count
    assert sum(len(a.animations) for a in scene.animation_sets) == 57
    keys = [t.key_type for a in scene.animation_sets[0].animations for t in a.tracks]
    assert sorted(set(keys)) == [0, 1, 2] and len(keys) == 171


def test_testwuson_animation_sets(corpus: Path) -> None:
    scene = scene_of(read(_file(corpus, "Testwuson.X")))
    assert [len(a.animations) for a in scene.animation_sets] == [39, 39, 39]
    rot = scene.animation_sets[0].animations[0].tracks[0]
    assert rot.key_type == 0 and rot.values.shape[1] == 4


def test_truespace_binary_first_vertex(corpus: Path) -> None:
    mesh = scene_of(read(_file(corpus, "fromtruespace_bin32.x"))).all_meshes()[0]
    # first FLOAT_LIST values, bytes fa e9 cb c0 / 9b e3 2f bf / 8e aa 57 3d (little-endian f32)
    first = [-6.3723116, -0.68706673, 0.05265289]
    assert mesh.positions[0].tolist() == pytest.approx(first, rel=1e-6)
    assert mesh.material_indices is not None and len(mesh.material_indices) == 6656


def test_kwxport_colors_materials_decl(corpus: Path) -> None:
    mesh = scene_of(read(_file(corpus, "kwxport_test_cubewithvcolors.x"))).all_meshes()[0]
    assert len(mesh.materials) == 3
    assert mesh.colors is not None and mesh.colors.shape == (24, 4)
    assert set(mesh.decl) == {"tangent", "binormal"}


def test_test_x_decl_data_float_bits(corpus: Path) -> None:
    mesh = scene_of(read(_file(corpus, "test.x"))).all_meshes()[0]
    # first DWORDs 1065353216, 0, 2147483648: tangent (1.0, 0.0, -0.0)
    assert mesh.decl["tangent"][0].tolist() == [1.0, 0.0, -0.0]
    assert mesh.decl["tangent"].shape == (24, 3) and mesh.decl["binormal"].shape == (24, 3)


def test_malformed_skin_weights_warn(corpus: Path) -> None:
    mesh = scene_of(read(_file(corpus, "malformed_skinweights_oob.x"))).all_meshes()[0]
    assert any("out of range" in w for w in mesh.warnings)


def test_corrupt_bzip_fails_cleanly(corpus: Path) -> None:
    path = _file(corpus, "OV_GetNextToken")
    with pytest.raises(XFileError) as info:
        read(path)
    assert str(info.value).startswith(f"{path}:byte 26 of the compressed file: block 0:")
