"""Mutated files that import, exported again: a file xof reads back, never an exporter
exception or numpy's warnings on the console.

Files ``crashers/export-*.x`` broke the exporter after a clean import: a mesh with vertices
and no faces (its per-corner UVs were empty), a parent or bone scaled to zero (no inverse),
values past float32 in a matrix or a material, an animated bone under a frame scaled to zero.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

bpy = pytest.importorskip("bpy")

from .import_campaign import enable_addon  # noqa: E402

pytestmark = pytest.mark.blender

CRASHERS = sorted((Path(__file__).parent / "crashers").glob("export-*.x"))


@pytest.fixture(scope="module", autouse=True)
def enabled():
    import addon_utils

    enable_addon()
    yield
    addon_utils.disable("xof", default_set=True)


def test_there_are_export_crashers_to_replay() -> None:
    assert len(CRASHERS) >= 5


@pytest.mark.parametrize("path", CRASHERS, ids=lambda p: p.name)
@pytest.mark.parametrize("fmt, mode", [("txt", "LEGACY"), ("bzip", "D3DX9")])
def test_an_imported_crasher_exports_and_reads_back(
    path: Path, fmt: str, mode: str, tmp_path: Path
) -> None:
    from xof.addon.xfile import read

    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_scene.x(filepath=str(path)) == {"FINISHED"}
    out = tmp_path / "out.x"
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        result = bpy.ops.export_scene.x(filepath=str(out), file_format=fmt, compatibility=mode)
    assert result == {"FINISHED"}
    read(str(out))
    bpy.ops.wm.read_homefile(use_empty=True)
