"""Irrlicht 1.8's own .X loader as an independent, stricter reader (Debian libirrlicht-dev).

``irrlicht/xload.cpp`` is built once per test session with g++ against libIrrlicht and run
on the null device; :func:`load` returns what it made of a file. When the compiler, the
headers or the library are missing, :func:`build` says why and the tests skip with that.
Irrlicht keeps the file's coordinates (left-handed, Y up) and counts frames in the file's
ticks; it reads no MSZIP.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

SOURCE = Path(__file__).resolve().parent / "irrlicht" / "xload.cpp"
INCLUDE = Path("/usr/include/irrlicht")
HINT = "Irrlicht 1.8 is needed: `make reference-readers` (apt-get libirrlicht-dev g++)"


def build(folder: Path) -> tuple[Path | None, str]:
    """The built loader, or None and the reason it cannot be had here."""
    compiler = shutil.which("g++")
    if compiler is None:
        return None, f"no g++; {HINT}"
    if not (INCLUDE / "irrlicht.h").is_file():
        return None, f"no {INCLUDE}/irrlicht.h; {HINT}"
    binary = folder / "xload"
    done = subprocess.run(
        [compiler, "-O1", "-o", str(binary), str(SOURCE), f"-I{INCLUDE}", "-lIrrlicht"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0:
        return None, f"building {SOURCE.name} failed ({done.stderr.strip()[-300:]}); {HINT}"
    return binary, ""


@dataclass(eq=False)
class Loaded:
    vertices: int
    joints: int
    frames: int
    buffers: int
    #: frame -> one (n, 3) array of skinned positions per mesh buffer
    positions: dict[float, list[np.ndarray]] = field(default_factory=dict)
    log: str = ""


def load(binary: Path, path: Path, frames: list[float] | tuple[float, ...] = ()) -> Loaded:
    """What Irrlicht loads from ``path``; AssertionError when it refuses the file."""
    done = subprocess.run(
        [str(binary), str(path), *(repr(float(f)) for f in frames)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"Irrlicht refused {path.name}: {done.stderr.strip()}"
    head: dict[str, float] = {}
    positions: dict[float, list[np.ndarray]] = {}
    rows: list[list[float]] = []
    current: list[np.ndarray] = []

    frame = None
    started = False
    for line in done.stdout.splitlines():
        word, _, rest = line.partition(" ")
        if word == "p":
            rows.append([float(v) for v in rest.split()])
        elif word == "buffer":
            if started:
                current.append(np.array(rows, dtype=np.float64).reshape(-1, 3))
            rows, started = [], True
        elif word == "frame":
            if started:
                current.append(np.array(rows, dtype=np.float64).reshape(-1, 3))
            frame = float(rest)
            current, rows, started = [], [], False
            positions[frame] = current
        elif word in ("vertices", "joints", "frames", "speed", "buffers"):
            head[word] = float(rest)  # (Irrlicht prints its banner on stdout too)
    if started:
        current.append(np.array(rows, dtype=np.float64).reshape(-1, 3))
    return Loaded(
        int(head["vertices"]), int(head["joints"]), int(head["frames"]), int(head["buffers"]),
        positions, done.stderr,
    )  # fmt: skip
