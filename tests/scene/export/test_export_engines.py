"""What other engines need of an export (issue 35, items 1-6 and 14's first): one key grid
per set in Legacy files, the tick rate of the keys written, exact key values, names unique
across templates and inline materials in Legacy files, texture paths that travel."""

from __future__ import annotations

import re
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene.export.exporter import export_scene  # noqa: E402
from xof.addon.scene.export.plan.key_grid import exact, set_grid, ticks_per_second  # noqa: E402
from xof.addon.scene.export.plan.options import ExportOptions  # noqa: E402
from xof.addon.scene.importer import import_files  # noqa: E402
from xof.addon.xfile import read, scene_of  # noqa: E402

from ..roundtrip_scenes import rig60_text  # noqa: E402
from .test_roundtrip import fresh  # noqa: E402
from .test_roundtrip_fixtures import FIXTURES  # noqa: E402

pytestmark = pytest.mark.blender


def frames_text() -> str:
    """Irrlicht's dwarf.x in small: keys on frames 0, 7 and 55 and no AnimTicksPerSecond (the
    importer reads them as frames at the scene's rate: 55 ticks at 4800 a second would last
    11 ms)."""
    text = rig60_text(("Walk",)).replace("AnimTicksPerSecond { 4800; }\n", "")
    return text.replace("\n560;", "\n7;").replace("\n4960;", "\n55;")


def _import(text_or_fixture: str, tmp_path: Path) -> None:
    source = tmp_path / "source.x"
    if text_or_fixture in FIXTURES:
        FIXTURES[text_or_fixture](source)
    else:
        source.write_text(text_or_fixture, "ascii")
    fresh()
    import_files([source])


def _set_times(path: Path) -> dict[str, list[list[float]]]:
    """Per set: the key times of every AnimationKey of every Animation."""
    return {
        s.name: [list(np.asarray(t.times, float)) for a in s.animations for t in a.tracks]
        for s in scene_of(read(path)).animation_sets
    }


# -- the rules, without Blender --


def test_grid_is_the_union_and_every_frame_for_splines() -> None:
    grid = set_grid([np.array([0.0, 12.0]), np.array([0.0, 4.0, 12.0]), np.array([0.0])])
    np.testing.assert_array_equal(grid, [0, 4, 12])
    np.testing.assert_array_equal(set_grid([np.array([0.0, 2.5, 4.0])], every_frame=True),
                                  [0, 1, 2, 2.5, 3, 4])  # fmt: skip


def test_ticks_are_frames_only_when_every_key_is_on_one() -> None:
    assert ticks_per_second(24.0, [np.array([0.0, 7.0, 55.0])]) == 24
    assert ticks_per_second(24.0, [np.array([0.0, 7.5])]) == 4800
    assert ticks_per_second(23.976, [np.array([0.0, 7.0])]) == 4800  # not a common rate


def test_exact_values_drop_the_algebras_noise() -> None:
    """dwarf.x's identity rotation came out as 1, 3.15544362e-30, 1.26217745e-29, -4.48e-44."""
    assert exact(np.array([[1.0, 3.15544362e-30, 1.26217745e-29, -4.48415509e-44]])).tolist() == [
        [1.0, 0.0, 0.0, 0.0]
    ]
    got = exact(np.array([[0.1, 0.2, -4.87182605e-09], [-0.0, 0.25, 1e-6]]))
    assert got.tolist() == [[0.1, 0.2, 0.0], [0.0, 0.25, 1e-6]]  # a real small value stays
    assert not np.signbit(got).any()


# -- exports --


def test_legacy_keys_every_track_of_a_set_on_one_grid(tmp_path: Path) -> None:
    """Regression: the character's Wave set had Spine keyed 4 times, Hip 3 (rotation), 1
    (scale) and 4 (spline position); Panda3D's loaders refuse such a set ("mismatched number
    of frames"). In Legacy every AnimationKey of a set has the same times, here every frame
    of the range since Hip's positions are a spline (30 fps: frames 0..12)."""
    _import("character", tmp_path)
    out = tmp_path / "legacy.x"
    export_scene(str(out), ExportOptions(compatibility="LEGACY"))
    times = _set_times(out)
    for name, keys in times.items():
        assert all(k == keys[0] for k in keys), name
    assert times["Wave"][0] == list(range(13))
    assert times["Walk"][0] == [0.0, 10.0, 20.0]
    d3dx = tmp_path / "d3dx.x"  # the default mode keeps each part's own keys (round trips)
    export_scene(str(d3dx), ExportOptions())
    assert sorted({len(k) for k in _set_times(d3dx)["Wave"]}) == [1, 3, 4]


@pytest.mark.parametrize("mode", ["D3DX9", "LEGACY"])
def test_ticks_are_the_scenes_frames(mode: str, tmp_path: Path) -> None:
    """Regression: keys on frames 0..55 and no tick rate (dwarf.x) came out at 4800 ticks a
    second with keys up to 11000 (Irrlicht read 11,000 frames); the importer's slerp samples
    between frames made the exporter give up the scene's rate although it writes no such key.
    Now: the scene's rate (24), keys at 0, 7, 55, in both modes; 60 for the 60 fps rig."""
    _import(frames_text(), tmp_path)
    assert bpy.context.scene.render.fps == 24
    out = tmp_path / "frames.x"
    result = export_scene(str(out), ExportOptions(compatibility=mode))
    assert result.ticks_per_second == 24
    assert scene_of(read(out)).ticks_per_second == 24
    times = {t for keys in _set_times(out)["Walk"] for t in keys}
    assert times == {0.0, 7.0, 55.0}
    _import(rig60_text(), tmp_path)
    result = export_scene(str(out), ExportOptions(compatibility=mode))
    assert result.ticks_per_second == 60
    assert {t for keys in _set_times(out)["Walk"] for t in keys} == {0.0, 7.0, 62.0}


@pytest.mark.parametrize("bits", [32, 64])
def test_identity_rotation_is_written_exactly(bits: int, tmp_path: Path) -> None:
    """Regression: hit's rotation (the identity) was written as ``1, -0, -4.12934584e-17, -0``
    (dwarf.x's as 1, 3.15544362e-30, ...)."""
    _import(rig60_text(), tmp_path)
    out = tmp_path / "exact.x"
    export_scene(str(out), ExportOptions(float_bits=bits))
    text = out.read_text("ascii")
    block = text[text.index("{ hit }") :]
    rotation = block[block.index("AnimationKey") :].split("}")[0]
    assert re.search(r"0;1;0;4;1, 0, 0, 0;;;", rotation), rotation
    keys = text[text.index("AnimationSet") :]
    assert not re.search(r"e-(1[0-9]|[2-9][0-9])\b", keys)  # no value below 1e-10 anywhere


def test_legacy_names_are_unique_across_templates(tmp_path: Path) -> None:
    """Regression: tiny.x's AnimationSet and Frame both named ``body`` survived into the
    export and Panda3D's reader refused it. Here the Walk action is renamed ``Body`` like the
    skinned mesh's frame: Legacy keeps the frame's name and numbers the set; D3DX 9 keeps
    both (names there are unique per template, as D3DX reads them)."""
    _import(rig60_text(), tmp_path)
    bpy.data.actions["Walk"].name = "Body"
    legacy = tmp_path / "legacy.x"
    export_scene(str(legacy), ExportOptions(compatibility="LEGACY"))
    names = [o.name for o in read(legacy).walk() if o.name]
    assert len(names) == len(set(names)), names
    assert "Body" in [o.name for o in read(legacy).walk() if o.template == "Frame"]
    assert next(s.name for s in scene_of(read(legacy)).animation_sets) == "Body_001"
    d3dx = tmp_path / "d3dx.x"
    export_scene(str(d3dx), ExportOptions())
    assert next(s.name for s in scene_of(read(d3dx)).animation_sets) == "Body"


def _two_meshes_one_material() -> None:
    fresh()
    mat = bpy.data.materials.new("Skin")
    if bpy.app.version < (5, 0, 0):
        mat.use_nodes = True  # always on (and deprecated) from 5.0
    bsdf = next(n for n in mat.node_tree.nodes if n.type == "BSDF_PRINCIPLED")
    bsdf.inputs["Base Color"].default_value = (0.25, 0.5, 0.75, 1.0)
    for x in (0.0, 3.0):
        bpy.ops.mesh.primitive_cube_add(location=(x, 0, 0))
        bpy.context.object.data.materials.append(mat)


def test_legacy_materials_are_inline(tmp_path: Path) -> None:
    """Regression: three.js's XLoader takes no top-level Material referenced by name (it read
    2 of 24 text exports). Legacy writes each Material inside the mesh's list: named in the
    first mesh, an unnamed copy in the second; D3DX 9 keeps one top-level Material."""
    _two_meshes_one_material()
    out = tmp_path / "legacy.x"
    export_scene(str(out), ExportOptions(compatibility="LEGACY"))
    doc = read(out)
    assert not [o for o in doc.objects if getattr(o, "template", "") == "Material"]
    lists = [o for o in doc.walk() if o.template == "MeshMaterialList"]
    assert len(lists) == 2
    inline = [c for lst in lists for c in lst.children]
    assert [getattr(c, "template", None) for c in inline] == ["Material", "Material"]
    assert [c.name for c in inline] == ["Skin", None]
    for c in inline:
        face = c.members["faceColor"]
        assert [face["red"], face["green"], face["blue"]] == pytest.approx([0.25, 0.5, 0.75])
    d3dx = tmp_path / "d3dx.x"
    export_scene(str(d3dx), ExportOptions())
    tops = [o for o in read(d3dx).objects if getattr(o, "template", "") == "Material"]
    assert [o.name for o in tops] == ["Skin"]


def _png(path: Path, rgb: tuple[int, int, int]) -> None:
    """A 1x1 PNG of one colour."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    head = chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
    body = chunk(b"IDAT", zlib.compress(b"\x00" + bytes(rgb))) + chunk(b"IEND", b"")
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + head + body)


def _textured(image_path: Path) -> None:
    fresh()
    bpy.ops.mesh.primitive_cube_add()
    mat = bpy.data.materials.new("Painted")
    if bpy.app.version < (5, 0, 0):
        mat.use_nodes = True  # always on (and deprecated) from 5.0
    tree = mat.node_tree
    bsdf = next(n for n in tree.nodes if n.type == "BSDF_PRINCIPLED")
    tex = tree.nodes.new("ShaderNodeTexImage")
    tex.image = bpy.data.images.load(str(image_path))
    tree.links.new(tex.outputs["Color"], bsdf.inputs["Base Color"])
    bpy.context.object.data.materials.append(mat)


def _texture_names(path: Path) -> list[str]:
    return [o.members["filename"] for o in read(path).walk() if o.template == "TextureFilename"]


def test_textures_travel_with_the_file(tmp_path: Path) -> None:
    """Regression: a texture was written relative to wherever the image lay
    (``../src/paint.png``): exported to another folder and re-imported the model was magenta
    and the importer said "not found" for a file that exists. Auto (the default) copies an
    image from outside the file's folder beside it and writes its plain name; the
    re-import finds it there."""
    (tmp_path / "src").mkdir()
    (tmp_path / "out").mkdir()
    image = tmp_path / "src" / "paint.png"
    _png(image, (200, 10, 10))
    _textured(image)
    out = tmp_path / "out" / "model.x"
    result = export_scene(str(out), ExportOptions())
    assert _texture_names(out) == ["paint.png"]
    assert (tmp_path / "out" / "paint.png").read_bytes() == image.read_bytes()
    assert result.copied == [str(tmp_path / "out" / "paint.png")]
    fresh()
    imported = import_files([out])
    assert not [w for w in imported.warnings if "paint" in w], imported.warnings
    (img,) = [i for i in bpy.data.images if i.source == "FILE"]
    assert Path(bpy.path.abspath(img.filepath)).resolve() == (tmp_path / "out" / "paint.png")


def test_path_modes(tmp_path: Path) -> None:
    """Copy never overwrites another image of the same name; Relative writes ``../`` paths
    (which the importer follows into a sibling folder); Absolute the full path; Strip the
    name; Auto leaves images in the file's folder tree where they are."""
    (tmp_path / "src").mkdir()
    (tmp_path / "out" / "maps").mkdir(parents=True)
    image = tmp_path / "src" / "paint.png"
    _png(image, (200, 10, 10))
    _png(tmp_path / "out" / "paint.png", (0, 0, 255))  # another image of that name
    _textured(image)
    out = tmp_path / "out" / "model.x"
    export_scene(str(out), ExportOptions(path_mode="COPY"))
    assert _texture_names(out) == ["paint_1.png"]
    assert (tmp_path / "out" / "paint_1.png").read_bytes() == image.read_bytes()
    export_scene(str(out), ExportOptions(path_mode="COPY"))  # again: the same copy is reused
    assert _texture_names(out) == ["paint_1.png"]
    assert not (tmp_path / "out" / "paint_2.png").exists()
    for name in ("paint.png", "paint_1.png"):
        (tmp_path / "out" / name).unlink()
    export_scene(str(out), ExportOptions(path_mode="RELATIVE"))
    assert _texture_names(out) == ["../src/paint.png"]
    fresh()
    imported = import_files([out])
    # src/ lies beside out/: a sibling folder, which the importer searches (games keep
    # models/ and textures/ side by side)
    assert not [w for w in imported.warnings if "paint" in w]
    (loaded,) = [i for i in bpy.data.images if i.source == "FILE"]
    assert Path(bpy.path.abspath(loaded.filepath)).resolve() == image.resolve()
    _textured(image)
    export_scene(str(out), ExportOptions(path_mode="ABSOLUTE"))
    assert _texture_names(out) == [str(image.resolve())]
    export_scene(str(out), ExportOptions(path_mode="STRIP"))
    assert _texture_names(out) == ["paint.png"]
    inside = tmp_path / "out" / "maps" / "wood.png"
    _png(inside, (90, 60, 30))
    _textured(inside)
    result = export_scene(str(out), ExportOptions())
    assert _texture_names(out) == ["maps/wood.png"] and not result.copied


@pytest.mark.parametrize("mode", ["D3DX9", "LEGACY"])
def test_the_armature_keeps_its_name(mode: str, tmp_path: Path) -> None:
    """Regression: the importer names an armature after the file, so an armature "Rig"
    exported to copy.x came back as "copy" (and rig60.x's "source" as "copy"). Now an
    armature named otherwise than the file is written as an identity frame of its name,
    which the importer takes for the armature (not a bone): names and bones come back."""
    _import(rig60_text(), tmp_path)
    (arm,) = [o for o in bpy.context.scene.objects if o.type == "ARMATURE"]
    assert arm.name == "source"
    bones = [b.name for b in arm.data.bones]
    for name in ("source", "Rig"):
        arm.name = name
        out = tmp_path / mode / f"copy.{name}.x"
        out.parent.mkdir(exist_ok=True)
        export_scene(str(out), ExportOptions(compatibility=mode))
        fresh()
        import_files([out])
        (arm,) = [o for o in bpy.context.scene.objects if o.type == "ARMATURE"]
        assert arm.name == name
        assert [b.name for b in arm.data.bones] == bones
        assert {o.name: o.parent.name for o in bpy.context.scene.objects if o.parent} == {
            "Body": name, "Prop": name,
        }  # fmt: skip
    named_as_file = tmp_path / mode / "Rig.x"  # no frame needed: the file gives the name
    export_scene(str(named_as_file), ExportOptions(compatibility=mode))
    assert "Rig" not in {o.name for o in read(named_as_file).walk() if o.template == "Frame"}


def test_packed_image_and_the_operators_path_mode(tmp_path: Path) -> None:
    """A packed image whose file is gone is written beside the file under its name (Auto);
    the operator passes its Path Mode on (Strip: the name only, nothing copied)."""
    import addon_utils

    (tmp_path / "gone").mkdir()
    (tmp_path / "out").mkdir()
    image = tmp_path / "gone" / "packed.png"
    _png(image, (10, 200, 10))
    _textured(image)
    bpy.data.images["packed.png"].pack()
    image.unlink()
    out = tmp_path / "out" / "model.x"
    export_scene(str(out), ExportOptions())
    assert _texture_names(out) == ["packed.png"]
    assert (tmp_path / "out" / "packed.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    (tmp_path / "out" / "packed.png").unlink()
    addon_utils.enable("xof", default_set=True)
    try:
        assert bpy.ops.export_scene.x(filepath=str(out), path_mode="STRIP") == {"FINISHED"}
    finally:
        addon_utils.disable("xof", default_set=True)
    assert _texture_names(out) == ["packed.png"]
    assert not (tmp_path / "out" / "packed.png").exists()
