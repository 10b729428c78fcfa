"""three.js's XLoader (npm ``three`` up to 0.124, text files only) as an independent reader,
run with node through ``three/xload.mjs``.

The package is looked for in ``$XOF_THREE_DIR`` (an unpacked ``three`` package) and in
``.tools/three/node_modules/three`` (``make three-xloader``); :func:`find` says why when it or
node cannot be had, and the tests skip with that.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent / "three" / "xload.mjs"
ROOT = Path(__file__).resolve().parents[3]
HINT = "three.js's XLoader is needed: `make three-xloader` (npm three@0.124.0) or XOF_THREE_DIR"
LOADER = Path("examples/jsm/loaders/XLoader.js")
MODULE = Path("build/three.module.js")


def find(folder: Path) -> tuple[Path | None, str]:
    """XLoader as an ES module in ``folder`` (with the three.js build it imports), or None
    and the reason it cannot be had."""
    if shutil.which("node") is None:
        return None, f"no node; {HINT}"
    given = os.environ.get("XOF_THREE_DIR")
    package = Path(given) if given else ROOT / ".tools" / "three" / "node_modules" / "three"
    if not (package / LOADER).is_file() or not (package / MODULE).is_file():
        return None, f"no {LOADER} in {package}; {HINT}"
    for part in (LOADER, MODULE):  # the package is CommonJS: a copy marked as ES modules
        (folder / part).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(package / part, folder / part)
    (folder / "package.json").write_text('{"type": "module"}\n', "ascii")
    return folder / LOADER, ""


@dataclass(eq=False)
class Loaded:
    vertices: int
    skinned: int
    materials: list[tuple[str, tuple[float, float, float]]] = field(default_factory=list)
    tracks: dict[tuple[str, str], int] = field(default_factory=dict)  # (set, frame) -> keys


def load(loader: Path, path: Path) -> Loaded:
    """What XLoader makes of ``path``; AssertionError when it fails."""
    done = subprocess.run(["node", str(SCRIPT), str(loader), str(path)], capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, f"XLoader refused {path.name}: {done.stderr.strip()[-500:]}"
    out = Loaded(0, 0)
    for line in done.stdout.splitlines():
        word, *rest = line.split()
        if word == "vertices":
            out.vertices = int(rest[0])
        elif word == "skinned":
            out.skinned = int(rest[0])
        elif word == "material":
            out.materials.append((rest[0], (float(rest[1]), float(rest[2]), float(rest[3]))))
        elif word == "track":
            out.tracks[(rest[0], rest[1])] = int(rest[2])
    return out
