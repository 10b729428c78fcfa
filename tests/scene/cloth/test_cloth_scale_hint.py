"""A cloth file hundreds of units across says the solver works in metres, with a scale."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene import importer  # noqa: E402
from xof.addon.scene.cloth.step import scale_hint  # noqa: E402
from xof.addon.scene.imp.options import ImportOptions  # noqa: E402

pytestmark = pytest.mark.blender

FLAG = Path(__file__).resolve().parents[3] / "examples" / "flag.x"


def flag_size(scale: float) -> float:
    """The flag's extent from its vertices (independently of the step's bounding boxes)."""
    obj = next(o for o in bpy.data.objects if o.type == "MESH")
    co = np.array([obj.matrix_world @ v.co for v in obj.data.vertices])
    return float(np.max(np.ptp(co, axis=0)))


def test_a_flag_at_scale_100_gets_the_hint(physics):
    result = importer.import_files([FLAG], importer.ImportOptions(global_scale=100.0))
    size = flag_size(100.0)
    assert size > 50
    hint = [w for w in result.warnings if "works in metres" in w]
    assert len(hint) == 1 and f"{size:.0f} units across" in hint[0]
    # the suggested scale brings the flag under 5 m: 100 * 10^-ceil(log10(size / 5))
    want = 100.0 * 10.0 ** -np.ceil(np.log10(size / 5.0))
    assert f"Scale {want:g} " in hint[0]


def test_a_flag_in_metres_gets_none(physics):
    result = importer.import_files([FLAG], importer.ImportOptions())
    assert flag_size(1.0) < 50
    assert not any("works in metres" in w for w in result.warnings)


def test_hint_wording_and_threshold():
    assert scale_hint(40.0, ImportOptions()) is None
    text = scale_hint(230.0, ImportOptions(global_scale=2.0))
    assert "230 units across" in text and "Scale 0.02 " in text and "2.3 m" in text
