"""Every export of the fixtures, in both compatibility modes and every format and float
size, passes ``python -m addon.xfile check --strict``: nothing in it departs from what D3D's
own parser accepts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene.export.exporter import export_scene  # noqa: E402
from xof.addon.scene.export.plan.options import ExportOptions  # noqa: E402
from xof.addon.scene.importer import import_files  # noqa: E402
from xof.addon.xfile.strict import check  # noqa: E402

from .test_export_irrlicht import SCENES  # noqa: E402
from .test_roundtrip import fresh  # noqa: E402

pytestmark = pytest.mark.blender

ROOT = Path(__file__).resolve().parents[3]
COMBOS = [("txt", 32), ("txt", 64), ("bin", 32), ("bin", 64), ("tzip", 32), ("bzip", 64)]


@pytest.mark.parametrize("mode", ["D3DX9", "LEGACY"])
@pytest.mark.parametrize("name", sorted(SCENES))
def test_every_export_passes_strict(name: str, mode: str, tmp_path: Path) -> None:
    source = tmp_path / f"{name}.x"
    SCENES[name](source)
    fresh()
    import_files([source])
    written = []
    for fmt, bits in COMBOS:
        out = tmp_path / f"{name}.{mode}.{fmt}{bits}.x"
        export_scene(str(out), ExportOptions(format=fmt, float_bits=bits, compatibility=mode))
        departures = check(out).departures
        assert not departures, [str(d) for d in departures[:5]]
        written.append(out)
    # and through the command line users run, on the text and the binary file
    for out in written[::2]:
        done = subprocess.run(
            [sys.executable, "-m", "addon.xfile", "check", str(out), "--strict"],
            cwd=ROOT, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
