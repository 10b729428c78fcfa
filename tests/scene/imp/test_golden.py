"""Golden dumps: the imported scene as text, compared with a reviewed reference.

``XOF_REGEN_GOLDEN=1`` rewrites the references under ``tests/scene/golden/`` (review the diff
before committing). Corpus files are skipped when ``../shared/xcorpus`` is absent.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene.importer import import_files  # noqa: E402

from tests.conftest import CORPUS  # noqa: E402

from ..golden_dump import dump_scene  # noqa: E402
from ..scene_fixtures import (  # noqa: E402
    CUBE_FACES,
    CUBE_VERTS,
    frame_text,
    material_text,
    mesh_text,
    reset_blender,
    trs,
    write_x,
)

pytestmark = pytest.mark.blender

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
REGEN = os.environ.get("XOF_REGEN_GOLDEN") == "1"
CORPUS_FILES = sorted(
    p.name
    for p in (CORPUS.iterdir() if CORPUS.is_dir() else [])
    if p.suffix.lower() == ".x" or p.name == "TestFormatDetection"
)


def own_cube(tmp: Path) -> Path:
    rng = np.random.default_rng(7)
    red = material_text("Red", (1, 0, 0, 1), 20, (1, 1, 1), (0, 0, 0))
    tex = material_text("Skin", (1, 1, 1, 0.5), 0, (0, 0, 0), (0.2, 0.1, 0), texture="skin.png")
    normals = np.array([[0, 0, -1], [0, 0, 1], [-1, 0, 0], [1, 0, 0], [0, 1, 0], [0, -1, 0.0]])
    cube = mesh_text(
        "Box", CUBE_VERTS, CUBE_FACES,
        normals=normals, normal_faces=[[i] * 4 for i in range(6)],
        uvs=np.round(rng.random((8, 2)), 3), colors=np.round(rng.random((8, 4)), 3),
        materials=[red, tex], material_indices=[0, 1, 0, 1, 0, 1],
    )  # fmt: skip
    inner = frame_text("Body", trs((0, 1, 0), 45, (1, 1, 1)), [cube])
    root = frame_text(
        "Root", trs((2, 0, -1), 0, (2, 2, 2)), [inner, frame_text("Tip", trs((0, 3, 0)), [])]
    )
    return write_x(tmp / "own_cube.x", [root])


def own_ngons(tmp: Path) -> Path:
    ring = np.array([[np.cos(a), 0.0, np.sin(a)] for a in np.linspace(0, 2 * np.pi, 9)[:-1]])
    verts = np.vstack([ring, [[0, 1, 0], [0, -1, 0]]])
    faces = [list(range(8)), [8, 1, 0], [8, 2, 1], [0, 1, 9], [3, 4, 5, 6], [0, 1]]
    return write_x(tmp / "own_ngons.x", [mesh_text("Ngons", verts, faces)])


OWN = {"own_cube": own_cube, "own_ngons": own_ngons}


def check(name: str, text: str) -> None:
    path = GOLDEN / f"{name}.txt"
    if REGEN or not path.exists():
        if not REGEN:
            pytest.fail(f"no golden file {path.name}: run with XOF_REGEN_GOLDEN=1 and review it")
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    assert text == path.read_text(encoding="utf-8"), f"{path.name} differs (XOF_REGEN_GOLDEN=1)"


def imported_text(path: Path) -> str:
    reset_blender()
    result = import_files([path])
    text = dump_scene(bpy, result.warnings, result.extras)
    return text.replace(str(path.parent), "<dir>")


@pytest.mark.parametrize("name", sorted(OWN))
def test_own_fixture(name: str, tmp_path: Path):
    check(name, imported_text(OWN[name](tmp_path)))


@pytest.mark.corpus
@pytest.mark.parametrize("filename", CORPUS_FILES or ["<no corpus>"])
def test_corpus_file(filename: str, corpus: Path):
    check("corpus_" + filename.replace(".", "_"), imported_text(corpus / filename))


def _file_world_vertices(doc) -> dict[str, np.ndarray]:
    """Mesh name -> file vertices times the combined frame matrices, mirrored (plain numpy)."""
    out: dict[str, np.ndarray] = {}

    def visit(obj, parent: np.ndarray) -> None:
        local = np.eye(4)
        for child in obj.objects("FrameTransformMatrix"):
            local = np.asarray(child["frameMatrix"]["matrix"], dtype=np.float64).reshape(4, 4)
        combined = local @ parent  # row vectors: local * parent
        for mesh in obj.objects("Mesh"):
            verts = np.asarray(mesh["vertices"], dtype=np.float64)
            world = (np.c_[verts, np.ones(len(verts))] @ combined)[:, :3]
            out[mesh.name] = world[:, [0, 2, 1]]
        for frame in obj.objects("Frame"):
            visit(frame, combined)

    for top in doc.top("Frame"):
        visit(top, np.eye(4))
    return out


@pytest.mark.corpus
@pytest.mark.parametrize(
    "filename", ["fromtruespace_bin32.x", "kwxport_test_cubewithvcolors.x", "test.x"]
)
def test_corpus_world_positions_equal_the_files(filename: str, corpus: Path):
    from xof.addon.xfile import read

    from ..scene_fixtures import world_positions

    path = corpus / filename
    expected = _file_world_vertices(read(str(path)))
    assert expected
    reset_blender()
    import_files([path])
    for mesh_name, world in expected.items():
        obj = next(o for o in bpy.data.objects if o.type == "MESH" and o.data.name == mesh_name)
        np.testing.assert_allclose(world_positions(obj), world, atol=1e-5)
