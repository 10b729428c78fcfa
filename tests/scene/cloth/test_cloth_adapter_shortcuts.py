"""The frame adapter's shortcuts give what the plain routes give, bit for bit: the batched
object-space results (``transform_each`` against ``transform_points``), the rest-shape
check (against ``np.array_equal``), and the pins and solver matrix kept while the object
does not move (against a fresh computation)."""

from __future__ import annotations

import numpy as np
import pytest
from xof.addon.scene.cloth.object_solver import PointFields, transform_each
from xof.addon.sim.mesh.affine import affine_inverse, transform_points


def _bits(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a).tobytes()


def _matrix(rng: np.random.Generator, kind: str) -> np.ndarray:
    m = np.eye(4)
    if kind == "shift":
        m[:3, 3] = rng.normal(size=3)
    elif kind == "shift_y0":  # a zero component is still added (-0.0 + 0.0 is 0.0)
        m[:3, 3] = [0.6, 0.0, 1.0]
    elif kind == "tiny":  # rounds to a zero float32 shift: nothing added
        m[:3, 3] = [1e-50, 0.0, -1e-50]
    elif kind == "negzero":  # -0.0 on the diagonal is still the identity
        m[0, 1] = -0.0
        m[:3, 3] = [0.0, 0.25, 0.0]
    elif kind == "turn":
        m = affine_inverse(
            np.array(
                [
                    [0.9, -0.3, 0.1, 1.5],
                    [0.35, 0.8, -0.2, -2.0],
                    [0.0, 0.25, 1.3, 0.5],
                    [0, 0, 0, 1],
                ]
            )
        )
    elif kind == "scale":
        m = np.diag([2.0, 0.5, 1.0, 1.0])
    elif kind == "nan":
        m[1, 2] = np.nan
    return m


KINDS = ["eye", "shift", "shift_y0", "tiny", "negzero", "turn", "scale", "nan"]


@pytest.mark.parametrize("seed", range(4))
def test_transform_each_is_transform_points_bit_for_bit(seed) -> None:
    rng = np.random.default_rng(seed)
    kinds = [*rng.choice(KINDS, size=9).tolist(), "eye", "turn"]
    matrices, points = [], []
    for i, kind in enumerate(kinds):
        n = int(rng.integers(0, 30)) if i != 3 else 0
        p = rng.normal(size=(n, 3)).astype(np.float32 if i % 3 else np.float64)
        if n:
            p[0] = [-0.0, -0.0, 0.0]  # signed zeros tell an added zero shift
            if i % 4 == 0:
                p[-1, 1] = np.inf
        matrices.append(_matrix(rng, kind))
        points.append(p)
    with np.errstate(invalid="ignore"):  # inf * 0 in both routes
        got = transform_each(matrices, points)
        expected_all = [transform_points(m, p) for m, p in zip(matrices, points, strict=True)]
    assert len(got) == len(points)
    for out, expected in zip(got, expected_all, strict=True):
        assert out.dtype == np.float32 and out.shape == expected.shape
        assert _bits(out) == _bits(expected)


def test_kept_fields_give_the_same_results_frame_after_frame() -> None:
    rng = np.random.default_rng(7)
    kept = PointFields(keep=2)
    sets = [[_matrix(rng, k) for k in ("shift", "eye", "turn", "shift_y0")] for _ in range(3)]
    for frame in range(8):
        matrices = sets[frame % 3]  # three sets through a keep of two: some built again
        points = [rng.normal(size=(n, 3)).astype(np.float32) for n in (5, 7, 3, 6)]
        got = transform_each(matrices, points, kept)
        for m, p, out in zip(matrices, points, got, strict=True):
            assert _bits(out) == _bits(transform_points(m, p))
        assert len(kept._kept) <= 2


def test_transform_each_of_nothing_and_of_one() -> None:
    assert transform_each([], []) == []
    p = np.arange(12, dtype=np.float32).reshape(4, 3)
    for kind in KINDS:
        m = _matrix(np.random.default_rng(1), kind)
        assert _bits(transform_each([m], [p])[0]) == _bits(transform_points(m, p))


def test_transform_each_refuses_a_count_mismatch() -> None:
    with pytest.raises(ValueError):
        transform_each([np.eye(4)], [np.zeros((2, 3)), np.zeros((2, 3))])


# -- in Blender --------------------------------------------------------------------------


def _set_positions(obj, points: np.ndarray) -> None:
    obj.data.attributes["position"].data.foreach_set(
        "vector", np.ascontiguousarray(points, dtype=np.float32).ravel()
    )
    obj.data.update()


@pytest.mark.blender
@pytest.mark.parametrize(
    ("edit", "same"),
    [
        (None, True),
        ("negzero", True),  # other bits, the same values: array_equal says the same
        ("moved", False),
        ("nan", False),
    ],
)
def test_the_rest_check_is_array_equal(cloth, edit, same) -> None:
    bpy = pytest.importorskip("bpy")
    from xof.addon.scene.cloth import runtime as cloth_runtime

    from ..cloth_fixtures import GRID, grid_arrays

    rest = grid_arrays(GRID, GRID)[0].astype(np.float32)
    rest[5] = [0.0, 0.0, 0.0]
    _set_positions(cloth, rest)
    bpy.context.scene.frame_set(1)
    rt = cloth_runtime.peek_runtime(cloth)
    edited = rest.copy()
    if edit == "negzero":
        edited[5] = [-0.0, 0.0, -0.0]
    elif edit == "moved":
        edited[9, 2] += 1e-6
    elif edit == "nan":
        edited[9, 0] = np.nan
    _set_positions(cloth, edited)
    read = np.empty(edited.size, dtype=np.float32)
    cloth.data.attributes["position"].data.foreach_get("vector", read)
    assert np.array_equal(read.reshape(-1, 3), rt.rest_local) == same  # the plain route
    assert rt.same_rest(cloth.data) == same


@pytest.mark.blender
def test_a_rest_shape_with_a_nan_is_the_same_as_long_as_its_bytes_are(cloth) -> None:
    """Issue 34, item 16: a NaN rest compared unequal to itself as floats, so the solver was
    rebuilt on every frame; its bytes are compared, and a NaN moved elsewhere is a change."""
    pytest.importorskip("bpy")
    from xof.addon.scene.cloth.playback import Playback
    from xof.addon.scene.cloth.runtime import ClothRuntime

    from ..cloth_fixtures import GRID, grid_arrays

    rest = grid_arrays(GRID, GRID)[0].astype(np.float32)
    rest[9, 0] = np.nan
    _set_positions(cloth, rest)
    import bpy

    rt = ClothRuntime(cloth, bpy.context.scene, Playback(len(rest)))
    assert not np.array_equal(rt.rest_local, rest)  # as floats, never equal
    assert rt.same_rest(cloth.data)
    rest[9, 0], rest[10, 0] = rest[10, 0], np.nan
    _set_positions(cloth, rest)
    assert not rt.same_rest(cloth.data)


@pytest.mark.blender
def test_kept_pins_are_a_fresh_computation(cloth) -> None:
    bpy = pytest.importorskip("bpy")
    from xof.addon.scene.cloth import runtime as cloth_runtime

    cloth.rotation_euler = (0.2, -0.1, 0.4)
    scene = bpy.context.scene
    scene.frame_set(1)
    rt = cloth_runtime.peek_runtime(cloth)
    ids = rt.pinned_ids
    for f, location in ((2, (0.0, 0.0, 0.0)), (3, (0.0, 0.0, 0.0)), (4, (0.3, -0.2, 0.1))):
        cloth.location = location
        bpy.context.view_layer.update()
        dg = bpy.context.evaluated_depsgraph_get()
        inputs = rt.frame_inputs(cloth, dg, [])
        matrix = np.array(cloth.matrix_world, dtype=np.float64)
        expected = transform_points(matrix, rt.rest_local[ids])  # the plain route
        assert inputs.pin_targets.shape == (ids.size, 3)  # one row per pinned point
        assert _bits(inputs.pin_targets.astype(np.float32)) == _bits(expected)
        assert _bits(inputs.matrix) == _bits(matrix)  # the solver's object matrix
        scene.frame_set(f)
