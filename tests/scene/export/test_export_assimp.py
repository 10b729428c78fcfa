"""Assimp (Debian's assimp-utils) reads what xof exports from our own fixtures -- skinned and
animated, cloth, morph -- with the mesh, bone and animation counts of the fixture, in every
format. Skipped when the tool is not installed."""

from __future__ import annotations

from pathlib import Path

import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene.export.exporter import export_scene  # noqa: E402
from xof.addon.scene.export.options import ExportOptions  # noqa: E402
from xof.addon.scene.importer import import_files  # noqa: E402

from ...xfile.test_writer_assimp import ASSIMP, assimp_counts  # noqa: E402
from .test_roundtrip import fresh  # noqa: E402
from .test_roundtrip_fixtures import FIXTURES  # noqa: E402

pytestmark = [
    pytest.mark.blender,
    pytest.mark.skipif(ASSIMP is None, reason="assimp (assimp-utils) not installed"),
]

#: counts of the fixtures Assimp cannot read itself (hand-written ``1,1,1`` float lists, the
#: ``1,0`` pitfall), from their text: Mesh objects, SkinWeights, AnimationSets, Animations
KNOWN = {
    "character": {"Meshes": 3, "Bones": 3, "Animations": 2, "Animation Channels": 6},
    "cloth": {"Meshes": 1, "Bones": 0, "Animations": 0, "Animation Channels": 0},
    "wide_rotation": {"Meshes": 1, "Bones": 0, "Animations": 1, "Animation Channels": 1},
}


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_assimp_reads_every_exported_fixture(name: str, tmp_path: Path) -> None:
    source = tmp_path / f"{name}.x"
    FIXTURES[name](source)
    expected = assimp_counts(source, raw=True) or KNOWN[name]
    fresh()
    import_files([source])
    for fmt, bits in (("txt", 32), ("bin", 32), ("tzip", 64), ("bzip", 32)):
        out = tmp_path / f"{name}.out.{fmt}{bits}.x"
        export_scene(str(out), ExportOptions(format=fmt, float_bits=bits))
        assert assimp_counts(out, raw=True) == expected, (name, fmt, bits)
