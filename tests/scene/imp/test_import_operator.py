"""The operator end to end on files written here: registration, orientation, world positions,
several files, errors that leave bpy.data untouched."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")
import addon_utils  # noqa: E402
from xof.addon.scene import importer  # noqa: E402
from xof.addon.scene.imp import rollback  # noqa: E402
from xof.addon.scene.imp.context import BuildStep  # noqa: E402
from xof.addon.scene.importer import import_files  # noqa: E402

from ..scene_fixtures import (  # noqa: E402
    CUBE_FACES,
    CUBE_VERTS,
    P3,
    frame_text,
    material_text,
    mesh_text,
    reset_blender,
    trs,
    world_positions,
    write_x,
)

pytestmark = [pytest.mark.blender, pytest.mark.usefixtures("xof_enabled", "empty_scene")]


def menu_functions() -> list:
    return list(bpy.types.TOPBAR_MT_file_import._dyn_ui_initialize())


def test_registered_and_unregistered():
    from xof.operators import menus

    assert "IMPORT_SCENE_OT_x" in dir(bpy.types)
    assert {"REGISTER", "UNDO", "PRESET"} <= set(bpy.types.IMPORT_SCENE_OT_x.bl_options)
    assert menus.menu_import in menu_functions()
    handler = bpy.types.FileHandler.bl_rna_get_subclass_py("XOF_FH_import_x")
    assert handler is not None
    assert handler.bl_import_operator == "import_scene.x"
    assert handler.bl_file_extensions == ".x"
    addon_utils.disable("xof", default_set=True)
    try:
        assert "IMPORT_SCENE_OT_x" not in dir(bpy.types)
        assert menus.menu_import not in menu_functions()
        assert bpy.types.FileHandler.bl_rna_get_subclass_py("XOF_FH_import_x") is None
    finally:
        addon_utils.enable("xof", default_set=True)
    assert "IMPORT_SCENE_OT_x" in dir(bpy.types)


def test_a_drop_is_taken_on_the_viewport_and_outliner_only():
    from types import SimpleNamespace

    handler = bpy.types.FileHandler.bl_rna_get_subclass_py("XOF_FH_import_x")
    for area, taken in (("VIEW_3D", True), ("OUTLINER", True), ("IMAGE_EDITOR", False)):
        assert handler.poll_drop(SimpleNamespace(area=SimpleNamespace(type=area))) is taken
    assert handler.poll_drop(SimpleNamespace(area=None)) is False
    # what a drop of several files runs: the operator with directory + files (see
    # test_several_files_at_once for the result)
    props = bpy.ops.import_scene.x.get_rna_type().properties
    assert {"filepath", "directory", "files"} <= set(props.keys())


def test_axes_land_on_blender_x_z_y(tmp_path: Path):
    verts = np.array([[2.0, 0, 0], [0, 3.0, 0], [0, 0, 5.0]])
    path = write_x(tmp_path / "axes.x", [mesh_text("Axes", verts, [[0, 1, 2]])])
    assert bpy.ops.import_scene.x(filepath=str(path)) == {"FINISHED"}
    obj = bpy.data.objects["Axes"]
    np.testing.assert_allclose(world_positions(obj), [[2, 0, 0], [0, 0, 3], [0, 5, 0]])


def test_closed_cube_from_a_file_has_outward_normals(tmp_path: Path):
    path = write_x(tmp_path / "cube.x", [mesh_text("Cube", CUBE_VERTS, CUBE_FACES)])
    bpy.ops.import_scene.x(filepath=str(path))
    mesh = bpy.data.objects["Cube"].data
    for poly in mesh.polygons:
        centre = np.mean([mesh.vertices[i].co for i in poly.vertices], axis=0)
        assert np.dot(np.array(poly.normal), centre) > 0.9  # unit cube: normal . centre == 1
    # and the volume is positive (outward orientation, computed from the triangles)
    volume = 0.0
    for poly in mesh.polygons:
        v = [np.array(mesh.vertices[i].co) for i in poly.vertices]
        for a, b in itertools.pairwise(v[1:]):
            volume += np.dot(v[0], np.cross(a, b)) / 6
    assert volume == pytest.approx(8.0)


def test_world_positions_through_frames(tmp_path: Path):
    outer = trs((1, 2, 3), 40, (1, 2, 1))
    inner = trs((0, -1, 4), -20, (0.5, 0.5, 2))
    verts = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0.2, 0.3, 0.7]])
    faces = [[0, 1, 2], [0, 2, 3]]
    text = frame_text("Outer", outer, [frame_text("Inner", inner, [mesh_text("M", verts, faces)])])
    path = write_x(tmp_path / "frames.x", [text])
    bpy.ops.import_scene.x(filepath=str(path))
    combined = inner @ outer  # row vectors: local * parent
    expected = (np.c_[verts, np.ones(4)] @ combined)[:, :3] @ P3.T
    np.testing.assert_allclose(world_positions(bpy.data.objects["Inner"]), expected, atol=1e-5)
    assert bpy.data.objects["Inner"].parent == bpy.data.objects["Outer"]


def test_several_files_at_once(tmp_path: Path):
    for name in ("a", "b"):
        write_x(tmp_path / f"{name}.x", [mesh_text(name.upper(), CUBE_VERTS, CUBE_FACES)])
    result = bpy.ops.import_scene.x(
        directory=str(tmp_path), files=[{"name": "a.x"}, {"name": "b.x"}]
    )
    assert result == {"FINISHED"}
    assert sorted(o.name for o in bpy.data.objects) == ["A", "B"]


def test_missing_texture_is_a_warning(tmp_path: Path):
    mat = material_text("M", (1, 1, 1, 1), 0, (0, 0, 0), (0, 0, 0), texture="nowhere.png")
    path = write_x(tmp_path / "t.x", [mesh_text("T", CUBE_VERTS, CUBE_FACES, materials=[mat])])
    result = import_files([path])
    assert any("nowhere.png" in w for w in result.warnings)
    reset_blender()
    assert bpy.ops.import_scene.x(filepath=str(path)) == {"FINISHED"}


BROKEN = {
    "truncated.x": "xof 0303txt 0032\nMesh M {\n 3;\n 0.0;0.0;0.0;,\n 1.0;0",
    "not_x.x": "hello, this is not a .x file at all\n",
    "bad_number.x": (
        "xof 0303txt 0032\nMesh M {\n 3;\n 0.0;zz;0.0;,1;0;0;,0;1;0;;\n 1;3;0,1,2;;\n}\n"
    ),
    "bad_header.x": "xof 0303abc 0032\n",
}


def broken_files(tmp_path: Path, corpus_dir: Path | None) -> list[Path]:
    paths = []
    for name, text in BROKEN.items():
        path = tmp_path / name
        path.write_text(text, encoding="ascii")
        paths.append(path)
    if corpus_dir is not None and (corpus_dir / "OV_GetNextToken").is_file():
        paths.append(corpus_dir / "OV_GetNextToken")  # corrupted MSZIP body
    return paths


def test_broken_files_leave_bpy_data_unchanged(tmp_path: Path):
    from tests.conftest import CORPUS

    good = write_x(tmp_path / "good.x", [mesh_text("Good", CUBE_VERTS, CUBE_FACES)])
    bpy.data.meshes.new("pre-existing")
    for path in broken_files(tmp_path, CORPUS if CORPUS.is_dir() else None):
        before = rollback.counts()
        with pytest.raises(RuntimeError) as info:
            bpy.ops.import_scene.x(filepath=str(path))
        assert path.name in str(info.value)
        assert rollback.counts() == before, path.name
        if path.parent == tmp_path:  # a good file, then the broken one: both rolled back
            with pytest.raises(RuntimeError):
                bpy.ops.import_scene.x(
                    directory=str(tmp_path), files=[{"name": good.name}, {"name": path.name}]
                )
            assert rollback.counts() == before, path.name


def test_failure_while_building_leaves_bpy_data_unchanged(tmp_path: Path, monkeypatch):
    mat = material_text("M", (1, 0, 0, 1), 5, (1, 1, 1), (0, 0, 0), texture="x.png")
    text = frame_text("F", np.eye(4), [mesh_text("T", CUBE_VERTS, CUBE_FACES, materials=[mat])])
    path = write_x(tmp_path / "fine.x", [text])

    def explode(ctx):
        bpy.data.actions.new("half-made")
        raise ValueError("a build step broke")

    before = rollback.counts()
    exploding = (*importer.STEPS, BuildStep("test-explode", explode))
    monkeypatch.setattr(importer, "STEPS", exploding)
    with pytest.raises(RuntimeError, match="a build step broke"):
        bpy.ops.import_scene.x(filepath=str(path))
    assert rollback.counts() == before


def test_property_defaults_are_the_options_defaults():
    from xof.addon.scene.imp.options import DEFAULTS

    props = bpy.ops.import_scene.x.get_rna_type().properties
    options = {
        "global_scale": DEFAULTS.transform.global_scale,
        "axis_forward": DEFAULTS.transform.axis_forward,
        "axis_up": DEFAULTS.transform.axis_up,
        "use_custom_normals": DEFAULTS.mesh.use_custom_normals,
        "shading": DEFAULTS.mesh.shading,
        "use_uvs": DEFAULTS.mesh.use_uvs,
        "use_colors": DEFAULTS.mesh.use_colors,
        "use_materials": DEFAULTS.mesh.use_materials,
        "keep_empty_frames": DEFAULTS.mesh.keep_empty_frames,
        "armature_every_frame": DEFAULTS.armature.every_frame,
        "animation_enabled": DEFAULTS.animation.enabled,
        "animation_scene_timing": DEFAULTS.animation.scene_timing,
        "morph_keep_targets": DEFAULTS.morphs.keep_targets,
        "morph_loop": DEFAULTS.morphs.loop_all,
        "cloth_enable": DEFAULTS.cloth.enable,
        "max_inflated_mib": DEFAULTS.files.max_inflated >> 20,
    }
    for name, value in options.items():
        assert props[name].default == value, name
    assert props["max_inflate_ratio"].default == DEFAULTS.files.max_inflate_ratio
    slerp = props["animation_slerp_step"].default
    assert slerp == pytest.approx(DEFAULTS.animation.slerp_step, rel=1e-6)  # float32 property


def test_the_readme_lists_every_keyword_of_the_operator():
    """The README's keyword list left out the morph, animation and cloth options."""
    text = (Path(__file__).resolve().parents[3] / "README.md").read_text(encoding="utf-8")
    start = text.index("Options (all keywords")
    listed = text[start : text.index("\n\n", text.index("- Cloth:", start))]
    plumbing = {"rna_type", "filepath", "files", "directory", "filter_glob"}
    keywords = {p.identifier for p in bpy.ops.import_scene.x.get_rna_type().properties}
    assert sorted(k for k in keywords - plumbing if f"`{k}`" not in listed) == []


def test_the_decompression_limit_is_an_import_option(tmp_path: Path):
    """Issue 34 item 9 (a 3.99 GiB MSZIP bomb took 23 s and 8.4 GB): the reader's limit
    reaches the user as the operator's "Max Decompressed Size", and its error names it."""
    import zlib

    text = mesh_text("Cube", CUBE_VERTS, CUBE_FACES) + " " * (2 << 20)  # 2 MiB of padding
    body = text.encode("ascii")
    blocks = [body[i : i + 32768] for i in range(0, len(body), 32768)]
    payload = b"".join(
        len(b).to_bytes(2, "little") + (len(c) + 2).to_bytes(2, "little") + b"CK" + c
        for b in blocks
        for c in [zlib.compress(b, 9, wbits=-15)]
    )  # each block on its own (no window reference), as the reader allows
    path = tmp_path / "padded.x"
    path.write_bytes(b"xof 0303tzip0032" + (16 + len(body)).to_bytes(4, "little") + payload)
    before = len(bpy.data.objects)
    with pytest.raises(RuntimeError, match=r"padded\.x:byte 16 of the compressed file: declares "
                       r"2,\d{3},\d{3} bytes .* more than the limit of 1,048,576 bytes; .*"
                       r"'Max Decompressed Size'"):  # fmt: skip
        bpy.ops.import_scene.x(filepath=str(path), max_inflated_mib=1)
    assert len(bpy.data.objects) == before
    assert bpy.ops.import_scene.x(filepath=str(path), max_inflated_mib=3) == {"FINISHED"}
    assert [o.name for o in bpy.data.objects[before:]] == ["Cube"]


def test_non_finite_positions_are_set_to_the_origin_with_a_warning(tmp_path: Path):
    """Issue 34 item 16: NaN and infinite positions (``1.#QNAN0``, ``1e400``) imported
    silently, while skin weights and keys were filtered with warnings."""
    path = tmp_path / "nan.x"
    path.write_text(
        "xof 0303txt 0032\n"
        "Mesh Quad { 5; 0;0;0;, 1.#QNAN0;0;0;, 1;1e400;0;, 0;1;0;, 2;2;-1.#INF00;;\n"
        "  2; 3;0,1,2;, 3;0,2,3;; }\n",
        encoding="ascii",
    )
    result = import_files([path])
    (obj,) = [o for o in bpy.data.objects if o.type == "MESH"]
    co = np.array([v.co for v in obj.data.vertices], dtype=np.float64)
    # file (x, y, z) -> Blender (x, z, y); vertices 1, 2 and 4 are not finite
    np.testing.assert_array_equal(co, [[0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 1], [0, 0, 0]])
    (warning,) = [w for w in result.warnings if "not finite" in w]
    assert warning == (
        "mesh 'Quad' (at 2:1): 3 vertex position(s) not finite (NaN, infinite or too large "
        "for Blender): set to the mesh's origin (vertex 1, 2, 4)"
    )


def test_positions_past_float32_once_scaled_are_not_finite_in_blender(tmp_path: Path):
    path = tmp_path / "big.x"
    path.write_text(
        "xof 0303txt 0032\nMesh Tri { 3; 0;0;0;, 1e30;0;0;, 0;1;0;; 1; 3;0,1,2;; }\n",
        encoding="ascii",
    )
    from xof.addon.scene.imp.options import ImportOptions

    assert not any("not finite" in w for w in import_files([path]).warnings)  # 1e30 fits
    reset_blender()
    result = import_files([path], ImportOptions(global_scale=1e9))  # 1e39 does not
    assert any("1 vertex position(s) not finite" in w and "(vertex 1)" in w
               for w in result.warnings)  # fmt: skip
    (obj,) = [o for o in bpy.data.objects if o.type == "MESH"]
    assert np.isfinite(np.array([v.co for v in obj.data.vertices])).all()


def test_a_skinned_file_with_a_non_utf8_name_imports_and_reports(tmp_path: Path, monkeypatch):
    """Issue 34 item 17: a skinned file whose name has undecodable bytes ended in a
    traceback: the armature is named after the file (a Blender name is UTF-8), then the
    operator's report of that error failed to encode too."""
    import os

    from ..skin_fixtures import character_text

    raw = os.path.join(os.fsencode(tmp_path), b"rig\xff\xfe.x")  # not UTF-8: \xff\xfe
    with open(raw, "w", encoding="ascii") as handle:
        handle.write(character_text())
    path = os.fsdecode(raw)  # 'rig\udcff\udcfe.x': how Python names it
    assert bpy.ops.import_scene.x(filepath=path) == {"FINISHED"}
    (armature,) = [o for o in bpy.data.objects if o.type == "ARMATURE"]
    assert armature.name == "rig\\xff\\xfe"  # the bytes spelled out, printable
    reset_blender()
    result = import_files([raw])  # a bytes path too
    assert [o.name for o in result.objects if o.type == "ARMATURE"] == ["rig\\xff\\xfe"]
    assert result.summary().isprintable()

    def explode(ctx):  # an unexpected failure whose message holds the raw name
        raise ValueError(f"broke on {ctx.filepath}")

    reset_blender()
    monkeypatch.setattr(importer, "STEPS", (*importer.STEPS, BuildStep("explode", explode)))
    with pytest.raises(RuntimeError) as caught:
        bpy.ops.import_scene.x(filepath=path)
    message = str(caught.value)
    assert "rig\\xff\\xfe.x: import failed: ValueError: broke on " in message
    assert message.count("rig\\xff\\xfe.x") == 2 and "\udcff" not in message
