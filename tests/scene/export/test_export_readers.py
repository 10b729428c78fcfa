"""Issue 35's "done means": skinned, animated scenes exported in both modes, as text and as
binary, are read by Assimp, Irrlicht 1.8 and Panda3D (its default loader and its own reader)
with the original's vertex count, joints and frame count; three.js's XLoader reads the
Legacy text files. Each reader skips with the reason when it cannot be had (assimp-utils;
libirrlicht-dev and g++; PyPI panda3d; node and npm three@0.124.0).

The originals, counted by hand from the fixtures:

- ``rig60``: a 52-vertex column skinned to Hip, Spine and Head (48 quads) and a 3-vertex
  prop in Head's frame; six frames (Body, Hip, Spine, Head, hit, Prop), four of them the
  skeleton (``hit`` only animated); sets Walk and Wave keyed at frames 0, 7 and 62 of 60 fps.
- ``frames``: the same with Walk alone keyed at 0, 7 and 55 and no AnimTicksPerSecond
  (Irrlicht's dwarf.x in small: the importer reads them as frames of 24 fps).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene.export.exporter import export_scene  # noqa: E402
from xof.addon.scene.export.plan.options import ExportOptions  # noqa: E402
from xof.addon.scene.importer import import_files  # noqa: E402

from ..roundtrip_scenes import rig60_text  # noqa: E402
from . import irrlicht_reader, panda_reader, three_reader  # noqa: E402
from .test_export_engines import frames_text  # noqa: E402
from .test_roundtrip import fresh  # noqa: E402

pytestmark = pytest.mark.blender

ASSIMP = shutil.which("assimp")
MODES = ["D3DX9", "LEGACY"]
FORMATS = ["txt", "bin"]


@dataclass(frozen=True)
class Original:
    text: str
    vertices: int  # every mesh's
    skinned: int  # the skinned meshes'
    corners: dict[str, int]  # face corners, polygons kept (D3DX9) or as triangles (LEGACY)
    frames: int
    skeleton: int  # frames a skin or a set moves, and their parents
    bones: int  # frames SkinWeights name
    keys: dict[str, int]  # each set's key times
    last: float  # the last key, in scene frames
    fps: int


SCENES = {
    "rig60": Original(rig60_text(), 55, 52, {"D3DX9": 48 * 4 + 3, "LEGACY": 96 * 3 + 3}, 6, 4,
                      3, {"Walk": 3, "Wave": 3}, 62, 60),
    "frames": Original(frames_text(), 55, 52, {"D3DX9": 48 * 4 + 3, "LEGACY": 96 * 3 + 3}, 6,
                       4, 3, {"Walk": 3}, 55, 24),
}  # fmt: skip


def _export(name: str, mode: str, fmt: str, tmp_path: Path) -> Path:
    source = tmp_path / f"{name}.x"
    source.write_text(SCENES[name].text, "ascii")
    fresh()
    import_files([source])
    assert bpy.context.scene.render.fps == SCENES[name].fps
    out = tmp_path / f"{mode}.{fmt}" / f"{name}.x"  # named as the armature: no frame for it
    out.parent.mkdir()
    export_scene(str(out), ExportOptions(format=fmt, compatibility=mode))
    return out


@pytest.fixture(scope="session")
def xload(tmp_path_factory: pytest.TempPathFactory) -> Path:
    binary, why = irrlicht_reader.build(tmp_path_factory.mktemp("irrlicht"))
    if binary is None:
        pytest.skip(why)
    return binary


@pytest.fixture(scope="session")
def panda() -> None:
    ok, why = panda_reader.available()
    if not ok:
        pytest.skip(why)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(SCENES))
def test_irrlicht(name: str, mode: str, fmt: str, xload: Path, tmp_path: Path) -> None:
    """Irrlicht counts every frame a joint and its frames in ticks: the scene's frames
    (the export had 4800 ticks a second: 11,000 frames for dwarf.x's 55)."""
    original = SCENES[name]
    loaded = irrlicht_reader.load(xload, _export(name, mode, fmt, tmp_path))
    assert (loaded.vertices, loaded.joints, loaded.frames) == (
        original.vertices, original.frames, original.last,
    )  # fmt: skip


def _assimp_dump(path: Path, tmp_path: Path) -> tuple[int, int, dict[str, float]]:
    """(vertices, bones, {set: length in seconds}) as Assimp reads ``path`` (no
    post-processing: its .X reader gives each face corner its own vertex)."""
    assert ASSIMP is not None
    out = path.with_suffix(".assxml")
    done = subprocess.run([ASSIMP, "dump", str(path), str(out), "-x"], capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, f"Assimp refused {path.name}: {done.stdout[-500:]}"
    xml = out.read_text("utf-8", "replace")
    vertices = sum(int(n) for n in re.findall(r'<Positions num="(\d+)"', xml))
    bones = len(set(re.findall(r'<Bone name="([^"]*)"', xml)))
    found = re.finditer(r'<Animation name="([^"]*)" duration="([^"]+)" tick_cnt="([^"]+)"', xml)
    sets = {m.group(1): float(m.group(2)) / float(m.group(3)) for m in found}
    return vertices, bones, sets


@pytest.mark.skipif(ASSIMP is None, reason="assimp (assimp-utils) not installed")
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(SCENES))
def test_assimp(name: str, mode: str, fmt: str, tmp_path: Path) -> None:
    original = SCENES[name]
    vertices, bones, sets = _assimp_dump(_export(name, mode, fmt, tmp_path), tmp_path)
    assert (vertices, bones) == (original.corners[mode], original.bones)
    assert sets == {s: pytest.approx(original.last / original.fps) for s in original.keys}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(SCENES))
def test_panda_default_loader(name: str, mode: str, fmt: str, panda: None, tmp_path: Path) -> None:
    """Panda3D's default loader (its Assimp) keeps the character's skinned geometry (not the
    prop hung in a bone's frame), the skeleton's joints, and plays each set's keys as
    frames."""
    original = SCENES[name]
    loaded = panda_reader.load(_export(name, mode, fmt, tmp_path), "assimp")
    assert (loaded.vertices, loaded.joints) == (original.skinned, original.skeleton)
    assert loaded.frames == sorted(original.keys.values())


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(SCENES))
def test_panda_own_reader(name: str, mode: str, panda: None, tmp_path: Path) -> None:
    """Panda's own reader (text only) reads the export as it reads the original."""
    original = SCENES[name]
    source = tmp_path / "original.x"
    source.write_text(original.text, "ascii")
    before = panda_reader.load(source, "own")
    loaded = panda_reader.load(_export(name, mode, "txt", tmp_path), "own")
    assert loaded.vertices == before.vertices == original.vertices
    assert loaded.joints == before.joints
    assert loaded.frames == before.frames == sorted(original.keys.values())


@pytest.mark.parametrize("which", ["assimp", "own"])
def test_panda_reads_uneven_sets_in_legacy(which: str, panda: None, tmp_path: Path) -> None:
    """Regression: the character's Wave set keys Spine 4 times and Hip's parts 3, 1 and 4
    times; Panda3D refused its export ("mismatched number of frames"). Legacy keys the set
    on one grid: Wave plays its 13 frames (a spline: every frame 0..12 of 30 fps), Walk 3."""
    from .test_roundtrip_fixtures import FIXTURES

    source = tmp_path / "character.x"
    FIXTURES["character"](source)
    fresh()
    import_files([source])
    out = tmp_path / "character.legacy.x"
    export_scene(str(out), ExportOptions(compatibility="LEGACY"))
    assert panda_reader.load(out, which).frames == [3, 13]


@pytest.fixture(scope="session")
def xloader(tmp_path_factory: pytest.TempPathFactory) -> Path:
    loader, why = three_reader.find(tmp_path_factory.mktemp("three"))
    if loader is None:
        pytest.skip(why)
    return loader


@pytest.mark.parametrize("name", sorted(SCENES))
def test_three_xloader_reads_legacy(name: str, xloader: Path, tmp_path: Path) -> None:
    """three.js's XLoader (text only; Legacy: it takes no top-level Material) reads the
    skinned column as a skinned mesh, three vertices a triangle, and each animated frame's
    keys; it reads only three corners of a quad, so the D3DX 9 file's n-gons are not for it."""
    original = SCENES[name]
    loaded = three_reader.load(xloader, _export(name, "LEGACY", "txt", tmp_path))
    assert (loaded.vertices, loaded.skinned) == (original.corners["LEGACY"], 1)
    assert sorted(set(loaded.tracks.values())) == [3]
    assert {s for s, _ in loaded.tracks} == set(original.keys)


def test_three_xloader_reads_legacy_materials(xloader: Path, tmp_path: Path) -> None:
    """Regression: three.js's XLoader fails on a Material at top level referenced by name
    ("Cannot read properties of undefined (reading 'push')"); Legacy writes them inline."""
    from .test_export_engines import _two_meshes_one_material

    _two_meshes_one_material()
    out = tmp_path / "two.x"
    export_scene(str(out), ExportOptions(compatibility="LEGACY"))
    loaded = three_reader.load(xloader, out)
    assert [c for _, c in loaded.materials] == [pytest.approx((0.25, 0.5, 0.75))] * 2
