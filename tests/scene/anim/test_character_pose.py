"""The generated character of ``bench_skinned.py`` (small) deforms in Blender as D3D skins it.

Independent of the importer's code: the expected positions are the D3D skinning formula
(row vectors: ``sum_b w_b * [v 1] * offset_b * combined_b``, each bone's local matrix from its
rotation and position keys) on the values the text file holds (6 decimals), mapped to
Blender's space by the affine map fitted on the rest mesh. Checked at key frames of the set
that plays, with the vertex groups' weights.
"""

from __future__ import annotations

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene import importer  # noqa: E402

from tests.bench.bench_skinned import character, write_character  # noqa: E402

pytestmark = pytest.mark.blender

BONES, GRID, KEYS = 20, (12, 10), 30


def _as_written(values: np.ndarray) -> np.ndarray:
    """The values as the text file holds them (``%.6f``)."""
    a = np.asarray(values, dtype=np.float64)
    return np.array([float(f"{v:.6f}") for v in a.ravel()]).reshape(a.shape)


def _row_rotation(q: np.ndarray) -> np.ndarray:
    """The row-vector rotation a .X rotation key (w, x, y, z) stands for: D3DX's matrix of
    the conjugate quaternion (what the SDK's loader builds from the stored values)."""
    w, x, y, z = q / np.linalg.norm(q)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])  # fmt: skip


def _skinned(c: dict, weights: np.ndarray, key: int) -> np.ndarray:
    """File-space positions of every vertex at key ``key`` of the first set."""
    combined: list[np.ndarray] = []
    for b in range(BONES):
        local = np.eye(4)
        local[:3, :3] = _row_rotation(_as_written(c["rot"][0, b, key]))
        local[3, :3] = _as_written(c["pos"][0, b, key])
        parent = c["parents"][b]
        combined.append(local if parent < 0 else local @ combined[parent])
    verts = np.hstack([_as_written(c["verts"]), np.ones((len(c["verts"]), 1))])
    out = np.zeros((len(verts), 4))
    for b in range(BONES):
        offset = np.eye(4)
        offset[3, :3] = -_as_written(c["heads"][b])
        out += weights[:, b : b + 1] * (verts @ offset @ combined[b])
    return out[:, :3]


def test_generated_character_deforms_as_d3d_skins_it(tmp_path):
    c = character(BONES, GRID, KEYS)
    path = write_character(tmp_path / "character.x", BONES, GRID, KEYS)
    n = len(c["verts"])
    weights = np.zeros((n, BONES))
    rows = np.repeat(np.arange(n), 4)
    weights[rows, c["owners"].ravel()] = _as_written(c["weights"]).ravel()
    weights /= weights.sum(axis=1, keepdims=True)  # the file's rounded weights, normalised

    bpy.ops.wm.read_homefile(use_empty=True)
    importer.import_files([path], importer.ImportOptions())
    scene = bpy.context.scene
    obj = next(o for o in scene.objects if o.type == "MESH")
    stored = np.zeros((n, BONES), np.float32)
    for v in obj.data.vertices:
        for g in v.groups:
            stored[v.index, int(obj.vertex_groups[g.group].name[1:])] = g.weight
    np.testing.assert_allclose(stored, weights.astype(np.float32), rtol=0, atol=2e-7)

    rest = np.array([obj.matrix_world @ v.co for v in obj.data.vertices])
    file_rest = np.hstack([_as_written(c["verts"]), np.ones((n, 1))])
    fit, *_ = np.linalg.lstsq(file_rest, rest, rcond=None)  # file row vector -> Blender
    np.testing.assert_allclose(file_rest @ fit, rest, rtol=0, atol=1e-5)
    assert np.allclose(np.abs(fit[:3]).sum(axis=0), np.abs(fit[:3]).max(axis=0))  # axes only

    fps = scene.render.fps / scene.render.fps_base
    moved = 0.0
    for key in (0, 5, 15, KEYS - 1):
        frame = c["times"][key] / 4800.0 * fps
        scene.frame_set(int(np.floor(frame)), subframe=float(frame - np.floor(frame)))
        evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
        got = np.array([obj.matrix_world @ v.co for v in evaluated.data.vertices])
        want = np.hstack([_skinned(c, weights, key), np.ones((n, 1))]) @ fit
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-4, err_msg=f"key {key}")
        moved = max(moved, float(np.abs(want - rest).max()))
    assert moved > 0.01  # the keys do move the mesh
