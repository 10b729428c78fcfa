"""The exporter on scenes built here: the operator through bpy.ops, formats that read back to
one document, MSZIP blocks, UV-seam vertex splits, modifiers, selection, axes and scale,
warnings; and Assimp on what the exporter writes from the corpus."""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")
import addon_utils  # noqa: E402
from xof.addon.scene.export.exporter import export_scene  # noqa: E402
from xof.addon.scene.export.plan.options import ExportOptions  # noqa: E402
from xof.addon.scene.importer import ImportOptions, import_files  # noqa: E402
from xof.addon.xfile import read, scene_of  # noqa: E402
from xof.addon.xfile.writer.compare import document_differences  # noqa: E402

from ..cloth_fixtures import grid_object  # noqa: E402
from ..scene_fixtures import reset_blender  # noqa: E402
from ..skin_fixtures import character_text  # noqa: E402

pytestmark = [pytest.mark.blender, pytest.mark.usefixtures("empty_scene")]


def _objects(doc, template: str) -> list:
    """Every data object of ``template`` in the document, depth first."""
    out = []

    def visit(obj) -> None:
        if getattr(obj, "template", None) == template:
            out.append(obj)
        for child in getattr(obj, "children", None) or []:
            visit(child)

    for top in doc.objects:
        visit(top)
    return out


def _cube(name: str = "Cube"):
    bpy.ops.mesh.primitive_cube_add(size=2.0)  # 8 vertices, 24 corners, UV islands
    obj = bpy.context.active_object
    obj.name = name
    return obj


def test_operator_through_bpy_ops(tmp_path: Path) -> None:
    addon_utils.enable("xof", default_set=True)
    try:
        _cube()
        path = tmp_path / "op.x"
        done = bpy.ops.export_scene.x(filepath=str(path), file_format="bzip", float_bits="64")
        assert done == {"FINISHED"}
        assert path.read_bytes()[:16] == b"xof 0303bzip0064"
        (mesh,) = scene_of(read(path)).all_meshes()
        assert len(mesh.face_sizes) == 6
    finally:
        addon_utils.disable("xof", default_set=True)


def test_every_format_reads_back_to_one_document(tmp_path: Path) -> None:
    (tmp_path / "c.x").write_text(character_text(), "ascii")
    import_files([tmp_path / "c.x"])
    docs = {}
    for fmt in ("txt", "bin", "tzip", "bzip"):
        path = tmp_path / f"out.{fmt}.x"
        export_scene(str(path), ExportOptions(format=fmt, float_bits=32))
        docs[fmt] = read(path)
    for fmt in ("bin", "tzip", "bzip"):
        assert document_differences(docs["txt"], docs[fmt], 32) == [], fmt


def _mszip_blocks(data: bytes) -> list[int]:
    """Uncompressed sizes of the MSZIP blocks after the header and the total-size DWORD."""
    pos, sizes = 20, []
    while pos < len(data):
        raw, packed = struct.unpack_from("<HH", data, pos)
        assert data[pos + 4 : pos + 6] == b"CK"
        sizes.append(raw)
        pos += 4 + packed
    return sizes


def test_compressed_exports_have_several_blocks(tmp_path: Path) -> None:
    grid_object(bpy, "Grid", 60, 60)  # 3600 vertices: well over 32 KiB of text
    path = tmp_path / "big.x"
    export_scene(str(path), ExportOptions(format="tzip"))
    data = path.read_bytes()
    total = struct.unpack_from("<I", data, 16)[0]
    sizes = _mszip_blocks(data)
    assert len(sizes) >= 3
    assert all(s == 32768 for s in sizes[:-1])
    assert sum(sizes) + 16 == total


def _corner_table(me) -> list[tuple]:
    """(position, uv) of every corner, rounded: what a seam split must keep."""
    rows = {
        (tuple(np.round(me.vertices[lp.vertex_index].co, 5)),
         tuple(np.round(me.uv_layers[0].uv[lp.index].vector, 5)))
        for lp in me.loops
    }  # fmt: skip
    return sorted(rows)


def test_uv_seams_split_vertices_with_duplication_indices(tmp_path: Path) -> None:
    obj = _cube()
    me = obj.data
    corners = [lp.vertex_index for lp in me.loops]
    uvs = [tuple(np.round(me.uv_layers[0].uv[i].vector, 6)) for i in range(len(me.loops))]
    distinct = set(zip(corners, uvs, strict=True))  # (vertex, uv) pairs, counted here
    want = _corner_table(me)
    path = tmp_path / "seams.x"
    export_scene(str(path), ExportOptions())
    doc = read(path)
    (dup,) = _objects(doc, "VertexDuplicationIndices")
    assert dup.members["nOriginalVertices"] == 8
    (mesh,) = scene_of(doc).all_meshes()
    assert len(mesh.positions) == len(distinct) == 14
    first = np.asarray(dup.members["indices"])
    # every file vertex names the first copy of its Blender vertex, which sits at the same place
    np.testing.assert_allclose(mesh.positions, mesh.positions[first], atol=0)
    assert len(set(first.tolist())) == 8
    reset_blender()
    import_files([path])
    back = next(o for o in bpy.context.scene.objects if o.type == "MESH").data
    assert _corner_table(back) == want


def test_apply_modifiers(tmp_path: Path) -> None:
    obj = _cube()
    obj.modifiers.new("Sub", "SUBSURF").levels = 1  # 8 -> 26 vertices, 6 -> 24 faces
    plain, applied = tmp_path / "plain.x", tmp_path / "applied.x"
    result = export_scene(str(plain), ExportOptions(use_uvs=False))
    assert any("modifiers not applied: Sub" in w for w in result.warnings)
    export_scene(str(applied), ExportOptions(use_uvs=False, apply_modifiers=True))
    (m0,) = scene_of(read(plain)).all_meshes()
    (m1,) = scene_of(read(applied)).all_meshes()
    assert (len(m0.positions), len(m0.face_sizes)) == (8, 6)
    assert (len(m1.positions), len(m1.face_sizes)) == (26, 24)
    assert len(obj.data.vertices) == 8 and len(bpy.data.meshes) == 1  # nothing left behind


def test_apply_modifiers_keeps_skins_as_skins(tmp_path: Path) -> None:
    (tmp_path / "c.x").write_text(character_text(), "ascii")
    import_files([tmp_path / "c.x"])
    a, b = tmp_path / "a.x", tmp_path / "b.x"
    export_scene(str(a), ExportOptions())
    export_scene(str(b), ExportOptions(apply_modifiers=True))
    assert document_differences(read(a), read(b), 32) == []


def test_selection_and_visibility(tmp_path: Path) -> None:
    keep = _cube("Keep")
    other = _cube("Other")
    hidden = _cube("Hidden")
    for k, obj in enumerate((keep, other, hidden)):
        obj.location.x = k + 1.0  # away from the origin: each is a frame
    hidden.hide_set(True)
    bpy.ops.object.select_all(action="DESELECT")
    keep.select_set(True)
    path = tmp_path / "sel.x"
    export_scene(str(path), ExportOptions(use_selection=True))
    assert [f.name for f in scene_of(read(path)).frames] == ["Keep"]
    export_scene(str(path), ExportOptions(use_visible=True))
    assert sorted(f.name for f in scene_of(read(path)).frames) == ["Keep", "Other"]
    assert other.name == "Other"


def test_axes_and_scale_invert_the_import(tmp_path: Path) -> None:
    obj = _cube()
    obj.location = (1.0, 2.0, 3.0)
    bpy.context.view_layer.update()
    want = np.array([obj.matrix_world @ v.co for v in obj.data.vertices])
    path = tmp_path / "axes.x"
    options = ExportOptions(axis_forward="-X", axis_up="Z", global_scale=2.5, use_uvs=False)
    export_scene(str(path), options)
    (frame,) = scene_of(read(path)).frames
    # file -X is Blender +Y, file +Z is Blender +Z, and file Y is what keeps the change of axes
    # a mirror (D3D is left-handed): Blender +X is file -Y; lengths / 2.5
    np.testing.assert_allclose(np.asarray(frame.matrix).reshape(4, 4)[3, :3], [-0.8, -0.4, 1.2])
    reset_blender()
    import_files([path], ImportOptions(axis_forward="-X", axis_up="Z", global_scale=2.5))
    back = next(o for o in bpy.context.scene.objects if o.type == "MESH")
    bpy.context.view_layer.update()
    got = np.array([back.matrix_world @ v.co for v in back.data.vertices])
    np.testing.assert_allclose(got, want, atol=1e-6)


def test_what_x_cannot_hold_is_named(tmp_path: Path) -> None:
    cam = bpy.data.objects.new("Cam", bpy.data.cameras.new("Cam"))
    bpy.context.scene.collection.objects.link(cam)
    obj = _cube()
    obj.constraints.new("COPY_LOCATION")
    obj.data.shape_keys or obj.shape_key_add(name="Basis")
    obj.shape_key_add(name="Up")
    result = export_scene(str(tmp_path / "w.x"), ExportOptions())
    text = "\n".join(result.warnings)
    assert "Cam: a camera cannot be written" in text
    assert "Cube: constraints are not written" in text
    assert "shape keys without animation are not written" in text
    assert result.summary().startswith("Exported 1 meshes (")


ASSIMP = shutil.which("assimp")
COUNTS = re.compile(r"(Meshes|Bones|Animations|Animation Channels):\s+(\d+)")


def _assimp(path: Path) -> dict[str, int]:
    assert ASSIMP is not None
    run = subprocess.run([ASSIMP, "info", str(path)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return {k: int(v) for k, v in COUNTS.findall(run.stdout)}


@pytest.mark.corpus
@pytest.mark.skipif(
    ASSIMP is None, reason="assimp (assimp-utils) not installed: `make reference-readers`"
)
@pytest.mark.parametrize(
    "name", ["BCN_Epileptic.X", "Testwuson.X", "anim_test.x", "kwxport_test_cubewithvcolors.x"]
)
def test_assimp_reads_what_the_exporter_writes(corpus: Path, tmp_path: Path, name: str) -> None:
    """Same meshes, bones and sets as Assimp finds in the original; one channel per Animation
    written (the importer drops animations of frames it does not animate)."""
    import_files([corpus / name])
    out = tmp_path / f"{name}.bzip.x"
    export_scene(str(out), ExportOptions(format="bzip"))
    want, got = _assimp(corpus / name), _assimp(out)
    for key in ("Meshes", "Bones", "Animations"):
        assert got[key] == want[key], key
    written = sum(len(s.animations) for s in scene_of(read(out)).animation_sets)
    assert got["Animation Channels"] == written


def test_winding_order_of_uniform_faces() -> None:
    """Faces [a, b, c, d] are written [a, d, c, b]; the all-same-size shortcut agrees."""
    from xof.addon.scene.export.mesh_export import winding_order

    np.testing.assert_array_equal(winding_order(np.array([4, 4])), [0, 3, 2, 1, 4, 7, 6, 5])
    np.testing.assert_array_equal(winding_order(np.array([3, 3, 3])), [0, 2, 1, 3, 5, 4, 6, 8, 7])
    np.testing.assert_array_equal(winding_order(np.array([3, 4])), [0, 2, 1, 3, 6, 5, 4])
    assert winding_order(np.zeros(0, dtype=np.int64)).size == 0


def _custom_normal_grid(split: bool):
    """A 5x5-vertex grid with custom normals: one per vertex, or (``split``) one corner of
    the middle vertex turned away from the others."""
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=4, y_subdivisions=4, size=2.0)
    me = bpy.context.active_object.data
    me.shade_smooth()  # one fan per vertex: its corners share one normal space
    co = np.array([v.co for v in me.vertices])
    per_vertex = np.column_stack([co[:, 0] * 0.3, co[:, 1] * -0.2, np.ones(len(co))])
    per_vertex /= np.linalg.norm(per_vertex, axis=1, keepdims=True)
    corners = per_vertex[[lp.vertex_index for lp in me.loops]]
    if split:
        middle = int(np.argmin(np.linalg.norm(co, axis=1)))
        one = next(lp.index for lp in me.loops if lp.vertex_index == middle)
        corners[one] = (0.6, 0.0, 0.8)
    me.normals_split_custom_set([tuple(n) for n in corners])
    got = np.zeros(3 * len(me.loops), np.float32)
    me.corner_normals.foreach_get("vector", got)
    return me, got.reshape(-1, 3)


@pytest.mark.parametrize("shape", ["grid", "split grid", "cube"])
def test_helper_thread_writes_the_plain_paths_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shape: str
) -> None:
    """Big meshes scan loose edges and check corner normals in a helper thread; forced on
    small ones (per-vertex normals, a split normal, UV seams that drop the early check, a
    loose edge), the file and the warnings are the plain path's."""
    from xof.addon.scene.export import mesh_arrays

    if shape == "cube":
        me = _cube().data
        me.shade_smooth()
        co = np.array([v.co for v in me.vertices])
        normals = co / np.linalg.norm(co, axis=1, keepdims=True)
        me.normals_split_custom_set([tuple(normals[lp.vertex_index]) for lp in me.loops])
        me.vertices.add(2)
        me.vertices[8].co, me.vertices[9].co = (3.0, 0.0, 0.0), (4.0, 0.0, 0.0)
        me.edges.add(1)
        me.edges[-1].vertices = (8, 9)
        me.update()
    else:
        _custom_normal_grid(shape == "split grid")
    files = []
    for threshold in (mesh_arrays.PARALLEL_CORNERS, 0):
        monkeypatch.setattr(mesh_arrays, "PARALLEL_CORNERS", threshold)
        path = tmp_path / f"{threshold}.x"
        result = export_scene(str(path), ExportOptions(format="bin"))
        files.append((path.read_bytes(), result.warnings))
    assert files[0] == files[1]
    if shape == "cube":
        assert any("1 loose edge" in w for w in files[0][1])
        assert any("VertexDuplicationIndices" in w for w in files[0][1])


@pytest.mark.parametrize("split", [False, True])
def test_custom_normals_per_vertex_when_every_corner_agrees(tmp_path: Path, split: bool) -> None:
    me, blender = _custom_normal_grid(split)
    vertex_of = np.array([lp.vertex_index for lp in me.loops])
    path = tmp_path / "normals.x"
    export_scene(str(path), ExportOptions(use_uvs=False))
    (normals,) = _objects(read(path), "MeshNormals")
    count = int(normals.members["nNormals"])
    assert len(me.vertices) == 25
    assert count == (len(me.loops) if split else len(me.vertices))
    (mesh,) = scene_of(read(path)).all_meshes()
    # each file corner's normal is its Blender corner's, bit for bit (Blender Y is file Z)
    file_corner_normals = np.asarray(mesh.normals, np.float32)[mesh.normal_corners]
    file_corner_vertex = mesh.corners
    for v in range(len(me.vertices)):
        theirs = {tuple(n) for n in blender[vertex_of == v][:, [0, 2, 1]].tolist()}
        ours = {tuple(n) for n in file_corner_normals[file_corner_vertex == v].tolist()}
        assert ours == theirs, v
