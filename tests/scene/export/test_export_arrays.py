"""The export's fast paths give the bytes of the plain ones: float32 file-space arithmetic
against float64 rounded once, the one-word UV check against the float comparison, the
all-quad face table against the general records, binary lists from int32/float32 buffers."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from xof.addon.scene.export.mesh_arrays import MeshArrays, _per_vertex, vertex_map
from xof.addon.scene.export.space import FileSpace
from xof.addon.scene.imp.convert import Conversion, mirror_for_axes
from xof.addon.xfile.writer import objects as xo
from xof.addon.xfile.writer import write

AXES = ["X", "Y", "Z", "-X", "-Y", "-Z"]


def _awkward(rng: np.random.Generator, n: int) -> np.ndarray:
    """float32 values with zeros of both signs, subnormals, huge and ordinary values."""
    special = np.array([0.0, -0.0, 1e-45, -1e-40, 3.4e38, -3.4e38, 1.0, -1.0], np.float32)
    values = (rng.standard_normal(n) * 10.0 ** rng.integers(-8, 8, n)).astype(np.float32)
    return np.concatenate([special, values]).astype(np.float32)


@pytest.mark.parametrize("scale", [1.0, 2.0, 3.0, 0.1, 1e-3, 100.0])
def test_float32_file_space_is_float64_rounded_once(scale: float) -> None:
    rng = np.random.default_rng(7)
    points = _awkward(rng, 3000)[: 3 * 1002].reshape(-1, 3)
    for forward, up in itertools.product(AXES, AXES):
        if forward.strip("-") == up.strip("-"):
            continue
        conversion = Conversion(mirror_for_axes(forward, up), scale)
        mirror = np.asarray(conversion.mirror, dtype=np.float64)
        with np.errstate(over="ignore"):
            want = ((points.astype(np.float64) @ mirror) / scale).astype(np.float32)
            got = FileSpace(conversion, 32).positions(points)
        assert got.dtype == np.float32
        assert np.array_equal(got.view(np.uint32), want.view(np.uint32)), (forward, up)
        want64 = (points.astype(np.float64) @ mirror) / scale
        got64 = FileSpace(conversion, 64).positions(points)
        assert np.array_equal(got64.view(np.uint64), want64.view(np.uint64)), (forward, up)
        normals = FileSpace(conversion, 32).directions(points)
        want_n = (points.astype(np.float64) @ mirror).astype(np.float32)
        assert np.array_equal(normals.view(np.uint32), want_n.view(np.uint32))
        own = points.copy()  # in place: the same bits, in the array given
        with np.errstate(over="ignore"):
            got = FileSpace(conversion, 32).positions(own, in_place=True)
        assert np.shares_memory(got, own) == (float(np.float32(scale)) == scale)  # 0.1: float64
        assert np.array_equal(got.view(np.uint32), want.view(np.uint32)), (forward, up)
        own = points.copy()
        got = FileSpace(conversion, 32).directions(own, in_place=True)
        assert np.shares_memory(got, own)
        assert np.array_equal(got.view(np.uint32), want_n.view(np.uint32))
        strided = np.repeat(points, 2, axis=0)[::2]  # not C-ordered: a new array, same bits
        got = FileSpace(conversion, 32).directions(strided, in_place=True)
        assert not np.shares_memory(got, strided)
        assert np.array_equal(got.view(np.uint32), want_n.view(np.uint32))


def test_file_space_in_blocks_and_in_place(monkeypatch: pytest.MonkeyPatch) -> None:
    """The mirror's blocks (any size, a last short one) give the whole-array bits."""
    from xof.addon.scene.export import space as space_module

    rng = np.random.default_rng(9)
    points = _awkward(rng, 3000)[: 3 * 1000].reshape(-1, 3)
    conversion = Conversion(mirror_for_axes("-Y", "Z"), 1.0)
    want = (points.astype(np.float64) @ np.asarray(conversion.mirror)).astype(np.float32)
    for rows in (1 << 14, 7, 1000, 999):
        monkeypatch.setattr(space_module, "_ROWS", rows)
        for in_place in (False, True):
            got = FileSpace(conversion, 32).directions(points.copy(), in_place=in_place)
            assert np.array_equal(got.view(np.uint32), want.view(np.uint32)), (rows, in_place)
    empty = FileSpace(conversion, 32).positions(np.zeros((0, 3), np.float32), in_place=True)
    assert empty.shape == (0, 3)


def test_float32_uv_flip_is_float64_rounded_once() -> None:
    uv = _awkward(np.random.default_rng(3), 4000).reshape(-1, 2)
    got = FileSpace(Conversion(mirror_for_axes(), 1.0), 32).file_uvs(uv)
    want = Conversion.uvs(uv.astype(np.float64)).astype(np.float32)
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
    own = uv.copy()
    got = FileSpace(Conversion(mirror_for_axes(), 1.0), 32).file_uvs(own, in_place=True)
    assert np.shares_memory(got, own) and np.array_equal(got.view(np.uint32), want.view(np.uint32))
    wide = uv.astype(np.float64)  # another dtype: a new array
    got = FileSpace(Conversion(mirror_for_axes(), 1.0), 32).file_uvs(wide, in_place=True)
    assert got.dtype == np.float32 and np.array_equal(got.view(np.uint32), want.view(np.uint32))


def _old_per_vertex(per_loop: np.ndarray, loops: np.ndarray, n: int) -> np.ndarray | None:
    table = np.zeros((n, per_loop.shape[1]), dtype=np.float64)
    table[loops] = per_loop
    return table if np.array_equal(table[loops], per_loop) else None


@pytest.mark.parametrize("width", [2, 3, 4])
def test_one_word_check_agrees_with_the_float_comparison(width: int) -> None:
    rng = np.random.default_rng(5)
    n = 50
    loops = rng.integers(0, n - 3, 400).astype(np.int32)  # the last vertices are unused
    per_vertex = rng.random((n, width)).astype(np.float32)
    same = per_vertex[loops]
    table = _per_vertex(same, loops, n)
    assert table is not None and table.dtype == np.float32
    assert np.array_equal(table, _old_per_vertex(same, loops, n))
    signed = same.copy()
    signed[loops == 0] = -0.0  # -0 and 0 are one value, as the float comparison says
    signed[np.flatnonzero(loops == 0)[0]] = 0.0
    assert (_per_vertex(signed, loops, n) is None) == (_old_per_vertex(signed, loops, n) is None)
    assert _per_vertex(signed, loops, n, exact=True) is None  # bit for bit: -0 is not 0
    exact = _per_vertex(same, loops, n, exact=True)
    assert exact is not None and np.array_equal(exact, table)
    seam = same.copy()
    seam[np.flatnonzero(loops == loops[0])[-1], 0] += 0.5
    assert _per_vertex(seam, loops, n) is None
    nan = same.copy()
    nan[loops == loops[1]] = np.nan  # NaN is no value twice
    assert _per_vertex(nan, loops, n) is None


def test_vertex_map_splits_seams_and_keeps_grids_whole() -> None:
    positions = np.zeros((4, 3), np.float32)
    corners = np.array([0, 1, 2, 0, 2, 3], np.int32)
    sizes = np.array([3, 3])
    uv = np.arange(12, dtype=np.float32).reshape(6, 2)
    whole = MeshArrays(positions, sizes, corners, uv_layers=[("a", uv[[0, 1, 2, 0, 2, 5]])])
    assert not vertex_map(whole).split
    seam = MeshArrays(positions, sizes, corners, uv_layers=[("a", uv)])
    vmap = vertex_map(seam)
    assert vmap.split and len(vmap.source) == 6


def test_quad_table_equals_general_face_records() -> None:
    corners = np.arange(40, dtype=np.int32)[::-1].copy()
    fast = xo.faces(np.full(10, 4), corners)
    general = xo.faces(np.array([4] * 9 + [3, 1]), corners)  # a mix: the masked path
    assert fast.flat.dtype == np.int32
    assert np.array_equal(fast.flat[:45], general.flat[:45])
    assert np.array_equal(fast.starts[:10], general.starts[:10])
    wide = xo.faces(np.full(10, 4), corners.astype(np.int64))
    assert np.array_equal(wide.flat, fast.flat) and np.array_equal(wide.starts, fast.starts)


@pytest.mark.parametrize("fmt", ["txt", "bin", "bzip"])
@pytest.mark.parametrize("bits", [32, 64])
def test_float32_int32_arrays_write_the_bytes_of_float64_int64(fmt: str, bits: int) -> None:
    rng = np.random.default_rng(11)
    positions = _awkward(rng, 300)[:300].reshape(-1, 3)
    corners = rng.integers(0, 100, 4 * 40).astype(np.int32)
    sizes = np.full(40, 4)

    def doc(p: np.ndarray, c: np.ndarray):  # type: ignore[no-untyped-def]
        mesh = xo.mesh("m", p, sizes, c)
        mesh.children.append(xo.mesh_normals(p, sizes, c))
        mesh.children.append(xo.texture_coords(p[:, :2]))
        return xo.document([mesh])

    narrow = write(doc(positions, corners), fmt, bits)
    wide = write(doc(positions.astype(np.float64), corners.astype(np.int64)), fmt, bits)
    assert narrow == wide


def test_in_file_winding_is_the_winding_order_gather() -> None:
    from xof.addon.scene.export.mesh_export import in_file_winding, winding_order

    rng = np.random.default_rng(2)
    for sizes in (np.full(6, 4), np.full(5, 3), np.array([3, 4, 5, 4]), np.zeros(0, np.int64)):
        count = int(sizes.sum())
        flat = rng.integers(0, 99, count).astype(np.int32)
        rows = rng.random((count, 3)).astype(np.float32)
        order = winding_order(sizes)
        assert np.array_equal(in_file_winding(flat, sizes), flat[order])
        assert np.array_equal(in_file_winding(rows, sizes), rows[order])


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5, 8])
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_face_records_straight_from_the_corners(
    k: int, dtype: type, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The one-count face table built column by column in file winding is the general
    records of the reversed corners (a, d, c, b for quads), in the corners' integer type,
    whatever the block size."""
    pytest.importorskip("bpy")
    from xof.addon.scene.export import mesh_export
    from xof.addon.scene.export.mesh_export import file_faces

    loop_vertex = np.random.default_rng(k).integers(0, 1000, 7 * k).astype(dtype)
    sizes = np.full(7, k)
    got = file_faces(loop_vertex, sizes)
    assert got is not None and got.flat.dtype == dtype
    reversed_corners = [c for face in loop_vertex.reshape(7, k) for c in [face[0], *face[:0:-1]]]
    want = xo.faces(sizes, np.array(reversed_corners))
    records = [[k, *face] for face in np.array(reversed_corners).reshape(7, k).tolist()]
    assert got.flat.tolist() == [v for r in records for v in r]
    assert np.array_equal(got.starts, want.starts)
    assert file_faces(loop_vertex[:-1], np.r_[np.full(6, k), k - 1]) is None  # mixed counts
    monkeypatch.setattr(mesh_export, "_FACE_BLOCK", 3)  # blocks of 3 faces: 3 + 3 + 1
    blocked = file_faces(loop_vertex, sizes)
    assert blocked is not None and blocked.flat.tolist() == got.flat.tolist()


def test_last_corners_in_blocks_is_the_plain_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """The block-by-block scatter keeps each vertex's last corner (a plain loop's), -1 for a
    vertex no corner uses, across block edges; an index beyond ``n`` still raises."""
    from xof.addon.scene.export import mesh_arrays

    rng = np.random.default_rng(4)
    n = 60
    loop_vertex = rng.integers(0, n - 5, 1000).astype(np.int32)
    want = [-1] * n
    for corner, vertex in enumerate(loop_vertex.tolist()):
        want[vertex] = corner
    for block in (1 << 15, 7, 64):
        monkeypatch.setattr(mesh_arrays, "_BLOCK", block)
        got = mesh_arrays.last_corners(loop_vertex, n)
        assert got.dtype == np.int32 and got.tolist() == want
    assert mesh_arrays.last_corners(loop_vertex[:0], 3).tolist() == [-1, -1, -1]
    with pytest.raises(IndexError):
        mesh_arrays.last_corners(np.array([0, 3], np.int32), 3)


@pytest.mark.parametrize("k", [3, 4])
def test_each_face_k_accepts_only_every_face_k_times(
    k: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The uniform-size check on the triangles' faces, against the plain statement (face i
    has exactly the k - 2 triangles at i*(k-2) ..), in blocks of any size."""
    from xof.addon.scene.export import mesh_arrays

    f = 50
    uniform = np.repeat(np.arange(f, dtype=np.int32), k - 2)
    for block in (1 << 15, 8, 7):
        monkeypatch.setattr(mesh_arrays, "_BLOCK", block)
        assert mesh_arrays._each_face_k(uniform, f, k)
        for where in (0, 13, len(uniform) - 1):
            for value in (-1, 0, 49, 1 << 20):
                bad = uniform.copy()
                bad[where] = value
                plain = all(bad[i * (k - 2) + j] == i for i in range(f) for j in range(k - 2))
                assert mesh_arrays._each_face_k(bad, f, k) == plain, (block, where, value)


def test_face_sizes_from_the_triangles_equal_loop_totals() -> None:
    """Corners per face from ``loop_triangle_polygons`` (uniform meshes by the block check,
    mixed ones by counting) equal Blender's own ``loop_total`` per face."""
    import bpy
    from xof.addon.scene.export.mesh_arrays import face_sizes

    ring = [(np.cos(a), np.sin(a), 0.0) for a in np.linspace(0, 2 * np.pi, 7)[:-1]]
    cases = {
        "quads": [[0, 1, 2, 3], [1, 4, 5, 2], [4, 6, 7, 5]],
        "triangles": [[0, 1, 2], [0, 2, 3], [2, 1, 4]],
        "mixed": [[0, 1, 2], [1, 4, 5, 2], [4, 6, 7, 5, 3], [0, 3, 5, 7, 6, 2]],
        "4 a face on average": [[0, 1, 2], [1, 4, 5, 2, 3], [4, 6, 7, 5]],  # 3 + 5 + 4
        "pentagons": [[0, 1, 2, 3, 4], [0, 4, 5, 6, 7]],
    }
    points = [*ring, (2.0, 0.0, 0.0), (2.0, 1.0, 0.0)]
    for name, faces in cases.items():
        mesh = bpy.data.meshes.new(name)
        mesh.from_pydata(points, [], faces)
        f, loops = len(mesh.polygons), len(mesh.loops)
        want = [p.loop_total for p in mesh.polygons]
        got = face_sizes(mesh, f, loops)
        assert got.dtype == np.int64 and got.tolist() == want, name
        bpy.data.meshes.remove(mesh)
