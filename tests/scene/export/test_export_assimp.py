"""Assimp (Debian's assimp-utils) reads what xof exports from our own fixtures -- skinned and
animated, cloth, morph -- with the mesh, bone and animation counts of the fixture, in every
format, and in both compatibility modes. Skipped when the tool is not installed."""

from __future__ import annotations

from pathlib import Path

import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene.export.exporter import export_scene  # noqa: E402
from xof.addon.scene.export.plan.options import ExportOptions  # noqa: E402
from xof.addon.scene.importer import import_files  # noqa: E402

from ...xfile.test_writer_assimp import ASSIMP, assimp_counts  # noqa: E402
from .test_roundtrip import fresh  # noqa: E402
from .test_roundtrip_fixtures import FIXTURES  # noqa: E402

pytestmark = [
    pytest.mark.blender,
    pytest.mark.skipif(
        ASSIMP is None, reason="assimp (assimp-utils) not installed: `make reference-readers`"
    ),
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
        # Legacy: the same, less the morph targets (no standard template holds morph sets)
        legacy = tmp_path / f"{name}.legacy.{fmt}{bits}.x"
        export_scene(str(legacy), ExportOptions(format=fmt, float_bits=bits,
                                                compatibility="LEGACY"))  # fmt: skip
        dropped = _meshes(out) - _meshes(legacy)
        assert dropped <= _morph_keyed(out)  # only morph targets go
        assert bool(dropped) == name.startswith("morph"), name
        fewer = len(dropped)
        assert assimp_counts(legacy, raw=True) == expected | {
            "Meshes": expected["Meshes"] - fewer
        }, (name, "legacy", fmt, bits)


def _meshes(path: Path) -> set[str]:
    from xof.addon.xfile import read

    return {str(o.name) for o in read(path).walk() if o.template == "Mesh"}


def _morph_keyed(path: Path) -> set[str]:
    """The meshes that morph keys name."""
    from xof.addon.xfile import read, scene_of

    return {k.mesh_name for s in scene_of(read(path)).morph_sets for k in s.keys}
