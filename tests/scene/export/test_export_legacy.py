"""The Compatibility option: D3DX 9 (the default, xof 0303, n-gons, every weight, declared
custom templates) and Legacy for stricter readers (xof 0302, standard templates only and no
declarations, triangles, at most 4 weights a vertex, ASCII names, emissive 0 unless set);
its pure parts (fan triangulation, the four strongest weights, ASCII names) on their own."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xof.addon.scene.export.legacy import fan_corners, strongest_weights
from xof.addon.scene.export.plan.names import NameTable, ascii_name


def test_fan_corners_of_mixed_polygons() -> None:
    corners, faces = fan_corners(np.array([3, 4, 5]))
    # polygon corners 0-2, 3-6, 7-11; fans (0, i, i+1) in Blender order
    assert corners.reshape(-1, 3).tolist() == [
        [0, 1, 2], [3, 4, 5], [3, 5, 6], [7, 8, 9], [7, 9, 10], [7, 10, 11],
    ]  # fmt: skip
    assert faces.tolist() == [0, 1, 1, 2, 2, 2]


def test_four_strongest_weights_keep_the_sum() -> None:
    # vertex 0: five bones 0.4, 0.1, 0.2, 0.05, 0.25 (sum 1); vertex 1: two bones
    entries = [
        (np.array([0, 1]), np.array([0.4, 0.5])),
        (np.array([0]), np.array([0.1])),
        (np.array([0]), np.array([0.2])),
        (np.array([0]), np.array([0.05])),
        (np.array([0, 1]), np.array([0.25, 0.5])),
    ]
    kept, over = strongest_weights(entries, 2, 4)
    assert over == 1
    scale = 1.0 / 0.95  # the four kept sum to 0.95
    assert kept[3][0].size == 0  # the weakest (0.05) goes
    got = {b: dict(zip(i.tolist(), w.tolist(), strict=True)) for b, (i, w) in enumerate(kept)}
    assert got[0] == pytest.approx({0: 0.4 * scale, 1: 0.5})
    assert got[1] == pytest.approx({0: 0.1 * scale})
    assert got[2] == pytest.approx({0: 0.2 * scale})
    assert got[4] == pytest.approx({0: 0.25 * scale, 1: 0.5})


def test_ascii_names() -> None:
    assert ascii_name("Hélène Ängström") == "Helene_Angstrom"
    assert ascii_name("髪の毛") == "___"
    table = NameTable(legacy=True)
    assert [table.get("frame", k, w) for k, w in (("a", "Cube.001"), ("b", "Cube_001"),
                                                   ("c", "髪"), ("d", "毛"))] == [
        "Cube_001", "Cube_001_001", "_", "__001",
    ]  # fmt: skip
    assert NameTable().get("frame", "a", "Cube.001") == "Cube.001"  # D3DX 9 as before


bpy = pytest.importorskip("bpy")

from xof.addon.scene.export.exporter import export_scene  # noqa: E402
from xof.addon.scene.export.plan.options import ExportOptions  # noqa: E402
from xof.addon.scene.importer import import_files  # noqa: E402
from xof.addon.xfile import read, scene_of  # noqa: E402

from ..roundtrip_scenes import rig60_text  # noqa: E402
from ..scene_fixtures import reset_blender  # noqa: E402
from .test_roundtrip_fixtures import cloth_text  # noqa: E402


def _five_bone_scene() -> bpy.types.Object:
    """A quad and a pentagon skinned to five bones, vertex 0 weighted by all five; names
    with accents and kana; a default material and one that emits."""
    reset_blender()
    arm_data = bpy.data.armatures.new("Rig")
    arm = bpy.data.objects.new("Rig", arm_data)
    bpy.context.scene.collection.objects.link(arm)
    bpy.context.view_layer.objects.active = arm
    bpy.ops.object.mode_set(mode="EDIT")
    names = ["Bône", "骨", "B2", "B3", "B4"]
    for k, name in enumerate(names):
        eb = arm_data.edit_bones.new(name)
        eb.head, eb.tail = (k, 0, 0), (k, 0, 1)
    bpy.ops.object.mode_set(mode="OBJECT")
    mesh = bpy.data.meshes.new("Mêsh")
    verts = [(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0), (2, 0, 0), (3, 1, 0), (2, 2, 0)]
    mesh.from_pydata(verts, [], [(0, 1, 2, 3), (1, 4, 5, 6, 2)])
    obj = bpy.data.objects.new("Mêsh", mesh)
    bpy.context.scene.collection.objects.link(obj)
    obj.parent = arm
    obj.modifiers.new("Armature", "ARMATURE").object = arm
    for k, name in enumerate(names):
        group = obj.vertex_groups.new(name=name)
        group.add([0], [0.4, 0.1, 0.2, 0.05, 0.25][k], "REPLACE")
        group.add([1 + k], 1.0, "REPLACE")
    plain = bpy.data.materials.new("Plain")
    glow = bpy.data.materials.new("Glow")
    if glow.node_tree is None:  # 4.5 makes the node tree on request
        glow.use_nodes = True
    bsdf = next(n for n in glow.node_tree.nodes if n.type == "BSDF_PRINCIPLED")
    bsdf.inputs["Emission Color"].default_value = (1.0, 0.5, 0.0, 1.0)
    bsdf.inputs["Emission Strength"].default_value = 2.0
    mesh.materials.append(plain)
    mesh.materials.append(glow)
    mesh.polygons[1].material_index = 1
    return obj


def _weights(doc) -> dict[str, dict[int, float]]:
    out: dict[str, dict[int, float]] = {}
    for mesh in scene_of(doc).all_meshes():
        for w in mesh.skin.weights if mesh.skin else []:
            out[w.frame_name] = dict(zip(np.asarray(w.indices).tolist(),
                                         np.asarray(w.weights).tolist(), strict=True))  # fmt: skip
    return out


@pytest.mark.blender
@pytest.mark.parametrize("fmt", ["txt", "bin", "tzip", "bzip"])
def test_legacy_file(fmt: str, tmp_path: Path) -> None:
    _five_bone_scene()
    out = tmp_path / f"legacy.{fmt}.x"
    result = export_scene(str(out), ExportOptions(format=fmt, compatibility="LEGACY"))
    head = out.read_bytes()[:16]
    assert head == f"xof 0302{fmt:<4s}0032".encode()
    doc = read(out)
    assert not doc.declared  # no template declarations
    if fmt == "txt":
        text = out.read_text("ascii")  # ASCII throughout
        assert "template" not in text
    (mesh,) = scene_of(doc).all_meshes()
    assert np.asarray(mesh.face_sizes).tolist() == [3] * 5  # quad: 2, pentagon: 3
    assert mesh.name == "Mesh_001"  # its frame is "Mesh": names are unique across templates
    weights = _weights(doc)
    assert sorted(weights) == ["B2", "B3", "B4", "Bone", "_"]
    per_vertex = np.zeros(len(mesh.positions))
    count = np.zeros(len(mesh.positions), dtype=int)
    for w in weights.values():
        for v, value in w.items():
            per_vertex[v] += value
            count[v] += 1
    assert count.max() == 4
    np.testing.assert_allclose(per_vertex[count > 0], 1.0, atol=1e-6)  # sums kept
    assert any("more than 4 skin weights" in w for w in result.warnings)
    header = next(o for o in doc.walk() if o.template == "XSkinMeshHeader")
    assert header.members["nMaxSkinWeightsPerVertex"] == 4
    emissive = {m.name: np.asarray(m.emissive).tolist() for m in mesh.materials}
    assert emissive["Plain"] == [0.0, 0.0, 0.0]  # emissive 0 unless set
    assert emissive["Glow"] == pytest.approx([2.0, 1.0, 0.0])


@pytest.mark.blender
def test_d3dx9_keeps_polygons_weights_and_names(tmp_path: Path) -> None:
    _five_bone_scene()
    out = tmp_path / "d3dx.x"
    export_scene(str(out), ExportOptions())
    assert out.read_bytes()[:16] == b"xof 0303txt 0032"
    doc = read(out)
    (mesh,) = scene_of(doc).all_meshes()
    assert sorted(np.asarray(mesh.face_sizes).tolist()) == [4, 5]
    assert sorted(_weights(doc)) == sorted(["Bône", "骨", "B2", "B3", "B4"])


@pytest.mark.blender
def test_legacy_leaves_out_what_needs_custom_templates(tmp_path: Path) -> None:
    """Cloth and morph sets have no standard template: Legacy names them in a warning;
    skeletal animation is written at the scene's rate when its keys are on whole frames."""
    source = tmp_path / "cloth.x"
    source.write_text("xof 0303txt 0032\n" + cloth_text(), "ascii")
    reset_blender()
    import_files([source])
    result = export_scene(str(tmp_path / "c.x"), ExportOptions(compatibility="LEGACY"))
    assert any("Legacy: cloth data not written" in w for w in result.warnings)
    text = (tmp_path / "c.x").read_text("ascii")
    assert "ClothMasses" not in text and "ClothSprings" not in text
    source = tmp_path / "rig.x"
    source.write_text(rig60_text(("Walk",)), "ascii")
    reset_blender()
    import_files([source])
    out = tmp_path / "rig.legacy.x"
    export_scene(str(out), ExportOptions(compatibility="LEGACY"))
    doc = scene_of(read(out))
    assert doc.ticks_per_second == 60  # every key on a whole frame: ticks are the frames
    (walk,) = doc.animation_sets
    times = {int(t) for a in walk.animations for tr in a.tracks for t in tr.times}
    assert times == {0, 7, 62}
