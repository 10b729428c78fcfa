"""`make demo`: the user's first command.

For now it reads the bundled cloth flag with the format layer's command line and prints what
the file holds. Once the importer and the solver land, it will import the flag into an empty
scene, simulate it headless, save ``out/demo.blend`` and render ``out/demo.png``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FLAG = ROOT / "examples" / "flag.x"


def main() -> int:
    print(f"xof demo: reading {FLAG.relative_to(ROOT)}")
    cmd = [sys.executable, "-m", "addon.xfile", "info", str(FLAG.relative_to(ROOT))]
    return subprocess.run(cmd, cwd=ROOT, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
