"""import -> export -> import is the identity on our own fixtures: the skinned, animated
character (bones, weights, spline and linear keys, a rigid animated object), morph sets in
both template variants (shape keys and their keyed values), cloth masses and springs
(springs that are edges, and one that is not), a rotation wide enough for the importer's
slerp samples; in text, binary and compressed files with 32- and 64-bit floats."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from .. import morph_fixtures as morphs  # noqa: E402
from ..scene_fixtures import mesh_text, write_x  # noqa: E402
from ..skin_fixtures import (  # noqa: E402
    animation,
    character_text,
    frame_text,
    key_block,
    quat_key,
    translation,
)
from .test_roundtrip import assert_same, round_trip  # noqa: E402

pytestmark = pytest.mark.blender

TICK = 1.0 / 4800

CLOTH_TEMPLATES = """
template ClothMasses { <F5AD0F93-9BF2-4bcf-B7CF-D68CD6B54156>
  DWORD NumPoints; array FLOAT Mass[NumPoints]; }
template ClothSprings { <8C08B088-728E-46c8-BE87-72672B81DB11>
  DWORD NumSprings; DWORD NumVertices; array DWORD Vertex[NumVertices]; }
"""


def cloth_text() -> str:
    """A 3 x 3 grid with masses (two pinned corners) and springs: four edges and the
    diagonal 0-8, which no face has (the importer adds it as a loose edge)."""
    verts = [(x, -y, 0.0) for y in range(3) for x in range(3)]
    quads = [[0, 1, 4, 3], [1, 2, 5, 4], [3, 4, 7, 6], [4, 5, 8, 7]]
    masses = "ClothMasses { 9; 0.0, 1.0, 0.0, 1.0, 0.25, 1.0, 1.0, 0.5, 1.0; }\n"
    springs = "ClothSprings { 5; 10; 0,1, 1,2, 3,4, 4,7, 0,8; }\n"
    body = mesh_text("Cloth", np.array(verts), quads).rstrip().rstrip("}") + masses + springs + "}"
    return CLOTH_TEMPLATES + frame_text("Flag", translation(0, 1, 0), body)


def wide_rotation_text() -> str:
    """One rigid object turning 90 degrees in one key span (far over the importer's 4-degree
    slerp step, so Blender holds extra keys the file must not get back), spline positions."""
    mesh = mesh_text("Box", np.eye(3), [[0, 1, 2]])
    rot = key_block(0, [0, 1600, 2400], [quat_key("y", 0), quat_key("y", 90), quat_key("y", 95)])
    pos = key_block(2, [0, 1600, 2400], [[0, 0, 0], [1, 2, 3], [1, 2, 4]])
    anim = animation("Spinner", rot + pos, spline=True)
    return (
        frame_text("Spinner", np.eye(4), mesh)
        + "AnimTicksPerSecond { 4800; }\n"
        + f"AnimationSet Turn {{\n{anim}}}\n"
    )


FIXTURES = {
    "character": lambda p: p.write_text(character_text(), "ascii"),
    "cloth": lambda p: write_x(p, [cloth_text()]),
    "wide_rotation": lambda p: write_x(p, [wide_rotation_text()]),
    "morph_dance_loop": lambda p: morphs.dance(loop_variant=True, loop=True).write(p),
    "morph_four_keys": lambda p: morphs.four_keys().write(p),
    "morph_shared_sets": lambda p: morphs.shared_sets().write(p),
}


def _fixture(name: str, folder: Path) -> Path:
    path = folder / f"{name}.x"
    FIXTURES[name](path)
    return path


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_fixture_round_trips(name: str, tmp_path: Path) -> None:
    before, after, _ = round_trip(_fixture(name, tmp_path), tmp_path, "txt", 32)
    assert before["meshes"], name
    assert_same(before, after, TICK)


@pytest.mark.parametrize("fmt,bits", [("bin", 64), ("tzip", 64), ("bzip", 32)])
def test_character_round_trips_in_every_format(fmt: str, bits: int, tmp_path: Path) -> None:
    before, after, _ = round_trip(_fixture("character", tmp_path), tmp_path, fmt, bits)
    assert_same(before, after, TICK)


def test_spline_parts_keep_their_own_key_times(tmp_path: Path) -> None:
    """Regression: the Wave set's Hip has spline positions and rotations at different times;
    the exporter wrote the union (plus slerp samples) for every part, so the re-import saw
    another curve and no common key spacing (24 fps guessed instead of 30)."""
    from xof.addon.xfile import read, scene_of

    before, after, result = round_trip(_fixture("character", tmp_path), tmp_path, "txt", 32)
    wave = next(s for s in scene_of(read(result.filepath)).animation_sets if s.name == "Wave")
    hip = next(a for a in wave.animations if a.frame_name == "Hip")
    tps = scene_of(read(result.filepath)).ticks_per_second  # keys on whole frames: 30
    assert tps == 30
    times = {t.key_type: (np.asarray(t.times) * 4800 / tps).tolist() for t in hip.tracks}
    assert times[2] == [0, 480, 800, 1920]  # the fixture's ticks at 4800 a second
    assert times[0] == [0, 960, 1920]
    assert after["fps"] == before["fps"] == 30


def test_cloth_round_trip_keeps_masses_and_springs(tmp_path: Path) -> None:
    before, after, result = round_trip(_fixture("cloth", tmp_path), tmp_path, "bzip", 64)
    assert not [w for w in result.warnings if "loose" in w]  # the loose edge is a spring
    (mesh,) = after["meshes"].values()
    np.testing.assert_allclose(
        mesh["groups"]["cloth_mass"], [0.0, 1.0, 0.0, 1.0, 0.25, 1.0, 1.0, 0.5, 1.0], atol=1e-7
    )
    assert mesh["springs"] == {(0, 1), (1, 2), (3, 4), (4, 7), (0, 8)}
    assert_same(before, after, TICK)


def test_wide_rotation_writes_only_the_file_keys(tmp_path: Path) -> None:
    """Blender holds the importer's slerp samples; the file gets the three keys back."""
    from xof.addon.xfile import read, scene_of

    before, after, result = round_trip(_fixture("wide_rotation", tmp_path), tmp_path, "txt", 32)
    curve = next(v for k, v in before["curves"].items() if "rotation_quaternion|0" in k)
    assert len(curve) > 3  # 90 degrees in one span: the importer added samples
    (aset,) = scene_of(read(result.filepath)).animation_sets
    (anim,) = aset.animations
    tps = scene_of(read(result.filepath)).ticks_per_second
    times = {t.key_type: (np.asarray(t.times) * 4800 / tps).tolist() for t in anim.tracks}
    assert times[0] == [0, 1600, 2400]  # the fixture's ticks at 4800 a second
    assert times[2] == [0, 1600, 2400]
    assert anim.linear is False  # spline positions stay spline
    assert_same(before, after, TICK)
