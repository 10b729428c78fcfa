"""Panda3D's two ``.x`` readers as independent readers (PyPI ``panda3d``), run in a
subprocess through ``panda/xload.py``: its default loader (its bundled Assimp) and its own
reader (pandatool's xfile converter, text files only).

The Python that runs them is ``$XOF_PANDA_PYTHON`` when set, else this one; when it cannot
import ``panda3d``, :func:`available` says why and the tests skip with that.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent / "panda" / "xload.py"
HINT = "Panda3D is needed: pip install panda3d (requirements-dev.txt), or set XOF_PANDA_PYTHON"


def python() -> str:
    return os.environ.get("XOF_PANDA_PYTHON") or sys.executable


def available() -> tuple[bool, str]:
    """Whether ``panda3d`` can be imported by :func:`python`, and why not."""
    try:
        done = subprocess.run([python(), "-c", "import panda3d.core"], capture_output=True,
                              text=True, timeout=120)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"{python()}: {exc}; {HINT}"
    if done.returncode != 0:
        return False, f"panda3d cannot be imported by {python()}; {HINT}"
    return True, ""


@dataclass(eq=False)
class Loaded:
    vertices: int
    joints: int
    #: the frame count of each animation Panda made (by key index: Panda plays keys as frames)
    frames: list[int] = field(default_factory=list)
    log: str = ""


def load(path: Path, which: str) -> Loaded:
    """What Panda3D's ``which`` reader (``assimp`` or ``own``) loads from ``path``;
    AssertionError when it refuses the file."""
    done = subprocess.run([python(), str(SCRIPT), str(path), which], capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, f"Panda3D ({which}) refused {path.name}: {done.stderr.strip()}"
    head: dict[str, int] = {}
    frames = []
    for line in done.stdout.splitlines():
        word, _, rest = line.partition(" ")
        if word in ("vertices", "joints"):
            head[word] = int(rest)
        elif word == "anim":
            frames.append(int(rest.rsplit(" ", 1)[1]))
    return Loaded(head["vertices"], head["joints"], sorted(frames), done.stderr)
