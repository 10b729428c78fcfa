"""Inputs for the batch tests, and the checks they share (the glTF Validator, glb reading).

The .x files come from the scene tests' generators (a skinned character with two animation
sets, an animation-only file, morphs, cloth) plus ``examples/*.x`` and a textured quad.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import numpy as np
import pytest

from tests.scene import morph_fixtures
from tests.scene.scene_fixtures import frame_text, material_text, mesh_text, write_x
from tests.scene.skin_fixtures import (
    anim_only_text,
    animation,
    character_text,
    key_block,
    quat_key,
)

ROOT = Path(__file__).resolve().parents[2]
VALIDATOR = Path(
    os.environ.get(
        "XOF_GLTF_VALIDATOR", ROOT / ".tools" / "node" / "node_modules" / "gltf-validator"
    )
)


def png_2x2() -> bytes:
    """A 2 x 2 RGB PNG (written with the stdlib)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = struct.pack(">I", zlib.crc32(kind + data))
        return struct.pack(">I", len(data)) + kind + data + crc

    header = struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0)
    rows = b"\x00\xff\x00\x00\x00\xff\x00" + b"\x00\x00\x00\xff\xff\xff\xff"
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + (chunk(b"IEND", b""))
    )


def textured_text() -> str:
    quad = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], dtype=float)
    mat = material_text("Crate", (0.8, 0.7, 0.6, 1.0), 20.0, (0, 0, 0), (0, 0, 0), "crate.png")
    mesh = mesh_text("Quad", quad, [[0, 1, 2, 3]], uvs=[[0, 1], [1, 1], [1, 0], [0, 0]],
                     materials=[mat])  # fmt: skip
    return frame_text("Crate", np.eye(4), [mesh])


# Four sets that each key their own part, as Chap06 tiny's five sets do: meant to play at once
# (name -> (frame, axis, degrees at the keys 0, 1600, 3200 of 4800 ticks a second))
TOGETHER_SETS = {
    "Hips": ("Hip", "y", (10, 60, 10)),
    "Back": ("Spine", "z", (20, -25, 20)),
    "Nod": ("Head", "x", (-15, 35, -15)),
    "Spin": ("Spinner", "z", (0, 60, 90)),
}


def together_text() -> str:
    """The skinned character (3 bones, a rigid spinner) with the sets of ``TOGETHER_SETS``."""
    body = character_text().split("AnimationSet Walk")[0]
    sets = ""
    for name, (frame, axis, degrees) in TOGETHER_SETS.items():
        keys = key_block(0, [0, 1600, 3200], [quat_key(axis, a) for a in degrees])
        sets += f"AnimationSet {name} {{\n{animation(frame, keys)}}}\n"
    return body + sets


EXAMPLES = ("cape.x", "flag.x")  # the cloth examples the library holds (not the demo character)


def write_library(folder: Path) -> dict[str, Path]:
    """A small library: files at the top, in sub-folders and with an upper-case suffix; the
    examples (cape.x and flag.x: cloth) at the top."""
    (folder / "chars").mkdir(parents=True)
    (folder / "props").mkdir()
    files = {
        "character": folder / "chars" / "character.x",
        "anim_only": folder / "chars" / "nod.X",
        "morph": folder / "morph.x",
        "textured": folder / "props" / "crate.x",
    }
    files["character"].write_text(character_text(), "ascii")
    files["anim_only"].write_text(anim_only_text(), "ascii")
    morph_fixtures.dance().write(files["morph"])
    write_x(files["textured"], [textured_text()])
    (folder / "props" / "crate.png").write_bytes(png_2x2())
    for name in EXAMPLES:
        example = ROOT / "examples" / name
        shutil.copy2(example, folder / example.name)
        files[example.stem] = folder / example.name
    return files


def validator_or_skip() -> Path:
    """The validator package; skips (saying how to get it) without node or the package."""
    if shutil.which("node") is None:
        pytest.skip("no node: the glTF Validator needs it (install Node.js and npm, then `make`)")
    if not (VALIDATOR / "package.json").is_file():
        pytest.skip(f"the glTF Validator is not installed at {VALIDATOR}: run `make` (needs npm)")
    return VALIDATOR


def validate(paths: list[Path]) -> list[dict]:
    """The Khronos glTF Validator's verdict per file (errors, warnings, first messages)."""
    validator = validator_or_skip()
    script = Path(__file__).with_name("validate_gltf.js")
    done = subprocess.run(
        ["node", str(script), str(validator), *map(str, paths)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def glb_json(path: Path) -> dict:
    """The JSON chunk of a .glb (read here with struct, independently of any exporter)."""
    data = path.read_bytes()
    magic, version, _length = struct.unpack_from("<4sII", data, 0)
    assert magic == b"glTF" and version == 2
    chunk_length, chunk_type = struct.unpack_from("<I4s", data, 12)
    assert chunk_type == b"JSON"
    return dict(json.loads(data[20 : 20 + chunk_length]))
