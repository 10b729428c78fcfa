"""Irrlicht 1.8's .X loader (an independent reader, stricter than ours) loads every text and
binary export of the fixtures in both compatibility modes: its vertex and joint counts and
its frame count are the file's, and on the skinned character its skinned positions at the
keys equal the ones Blender shows after our import, to 1e-4 of the bounding-box diagonal.
Skipped with the reason when Irrlicht (Debian libirrlicht-dev) or g++ cannot be had."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene.export.exporter import export_scene  # noqa: E402
from xof.addon.scene.export.plan.options import ExportOptions  # noqa: E402
from xof.addon.scene.importer import import_files  # noqa: E402
from xof.addon.xfile import read, scene_of  # noqa: E402

from ..roundtrip_scenes import rig60_text  # noqa: E402
from . import irrlicht_reader  # noqa: E402
from .test_roundtrip import fresh  # noqa: E402
from .test_roundtrip_fixtures import FIXTURES  # noqa: E402

pytestmark = pytest.mark.blender

COMBOS = [("txt", 32), ("txt", 64), ("bin", 32), ("bin", 64)]  # Irrlicht reads no MSZIP
MODES = ["D3DX9", "LEGACY"]
SCENES = dict(FIXTURES) | {"rig60_walk": lambda p: p.write_text(rig60_text(("Walk",)), "ascii")}


@pytest.fixture(scope="session")
def xload(tmp_path_factory: pytest.TempPathFactory) -> Path:
    binary, why = irrlicht_reader.build(tmp_path_factory.mktemp("irrlicht"))
    if binary is None:
        pytest.skip(why)
    return binary


def _expected(path: Path) -> tuple[int, int, int]:
    """(vertices, frames, last key tick) of the file, from its objects."""
    doc = read(path)
    vertices = sum(o.members["nVertices"] for o in doc.walk() if o.template == "Mesh")
    frames = sum(1 for o in doc.walk() if o.template == "Frame")
    ticks = [
        int(np.max(t.times))
        for s in scene_of(doc).animation_sets
        for a in s.animations
        for t in a.tracks
        if len(t.times)
    ]
    return int(vertices), frames, max(ticks, default=0)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(SCENES))
def test_irrlicht_loads_every_export(name: str, mode: str, xload: Path, tmp_path: Path) -> None:
    source = tmp_path / f"{name}.x"
    SCENES[name](source)
    fresh()
    import_files([source])
    for fmt, bits in COMBOS:
        out = tmp_path / f"{name}.{mode}.{fmt}{bits}.x"
        export_scene(str(out), ExportOptions(format=fmt, float_bits=bits, compatibility=mode))
        loaded = irrlicht_reader.load(xload, out)
        vertices, frames, last_tick = _expected(out)
        assert (loaded.vertices, loaded.joints, loaded.frames) == (vertices, frames, last_tick), (
            name, mode, fmt, bits,
        )  # fmt: skip


def _file_space(points: np.ndarray) -> np.ndarray:
    """Blender (right-handed, Z up) -> D3D (left-handed, Y up) with the default axes: the
    importer's mirror, y and z swapped."""
    return points[:, [0, 2, 1]]


def _blender_positions(obj: bpy.types.Object, frame: float) -> np.ndarray:
    scene = bpy.context.scene
    scene.frame_set(int(frame), subframe=frame - int(frame))
    dg = bpy.context.evaluated_depsgraph_get()
    mesh = obj.evaluated_get(dg).data
    co = np.empty(len(mesh.vertices) * 3, dtype=np.float32)
    mesh.vertices.foreach_get("co", co)
    m = np.array(obj.matrix_world)
    world = co.reshape(-1, 3).astype(np.float64) @ m[:3, :3].T + m[:3, 3]
    return _file_space(world)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fmt,bits", COMBOS)
def test_irrlicht_skins_the_character_as_we_do(
    fmt: str, bits: int, mode: str, xload: Path, tmp_path: Path
) -> None:
    """At every key of the Walk set (60 fps, frames 0, 7 and 62) Irrlicht's skinned column
    is where Blender shows it, in the file's space; Irrlicht's frames are the file's ticks."""
    source = tmp_path / "rig60_walk.x"
    SCENES["rig60_walk"](source)
    fresh()
    import_files([source])
    out = tmp_path / f"walk.{mode}.{fmt}{bits}.x"
    export_scene(str(out), ExportOptions(format=fmt, float_bits=bits, compatibility=mode))
    doc = read(out)
    tps = scene_of(doc).ticks_per_second or 4800
    scene = bpy.context.scene
    fps = scene.render.fps / scene.render.fps_base
    assert fps == 60
    column = bpy.data.objects["Body"]
    keys = [0.0, 7.0, 62.0]
    ticks = [round(f * tps / fps) for f in keys]
    loaded = irrlicht_reader.load(xload, out, ticks)
    rest = _blender_positions(column, 0.0)
    diagonal = float(np.linalg.norm(rest.max(axis=0) - rest.min(axis=0)))
    for frame, tick in zip(keys, ticks, strict=True):
        ours = _blender_positions(column, frame)
        (theirs,) = [b for b in loaded.positions[float(tick)] if len(b) == len(ours)]
        np.testing.assert_allclose(theirs, ours, atol=1e-4 * diagonal, err_msg=f"frame {frame}")
    moved = _blender_positions(column, 7.0)
    assert np.abs(moved - rest).max() > 0.1 * diagonal  # the key moves the skin: a real check
