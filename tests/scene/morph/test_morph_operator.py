"""The "Add shape keys from .X" operator and its core, on files and views the tests write."""

from __future__ import annotations

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene.morph.build import plain_mesh_object  # noqa: E402
from xof.addon.scene.morph.shape_key_import import add_meshes_as_shape_keys  # noqa: E402
from xof.operators import morph_keys  # noqa: E402

from ..morph_fixtures import MorphFixture, grid_positions  # noqa: E402

pytestmark = pytest.mark.blender


def target_file(names_and_seeds: dict[str, tuple[int, int]]) -> MorphFixture:
    """A morph-less file of meshes: name -> (seed, vertex count)."""
    return MorphFixture(
        meshes={n: grid_positions(seed, count) for n, (seed, count) in names_and_seeds.items()},
        sets=[],
    )


@pytest.fixture
def active_mesh():
    bpy.ops.wm.read_homefile(use_empty=True)
    base = MorphFixture(meshes={"Head": grid_positions(40)}, sets=[])
    obj = plain_mesh_object(base.scene_data().meshes[0], "Head", bpy.context.scene.collection)
    bpy.context.view_layer.objects.active = obj
    morph_keys.register()
    yield obj
    morph_keys.unregister()


def block_positions(obj, name: str) -> np.ndarray:
    block = obj.data.shape_keys.key_blocks[name]
    co = np.empty(len(block.data) * 3, dtype=np.float32)
    block.data.foreach_get("co", co)
    return co.reshape(-1, 3)


def test_core_adds_matching_meshes_and_warns_about_the_others(active_mesh):
    fixture = target_file({"Smile": (41, 12), "Tiny": (42, 6), "Blink": (43, 12)})
    outcome = add_meshes_as_shape_keys(active_mesh, fixture.scene_data(), "face")
    assert outcome.added == ["Smile", "Blink"]
    (warning,) = outcome.warnings
    assert "'Tiny'" in warning and "'Head'" in warning and "6" in warning and "12" in warning
    names = [b.name for b in active_mesh.data.shape_keys.key_blocks]
    assert names == ["Basis", "Smile", "Blink"]
    for name in ("Smile", "Blink"):
        want = fixture.meshes[name][:, [0, 2, 1]]
        np.testing.assert_allclose(block_positions(active_mesh, name), want, atol=1e-6)
    np.testing.assert_allclose(
        block_positions(active_mesh, "Basis"), grid_positions(40)[:, [0, 2, 1]], atol=1e-6
    )


def test_operator_takes_several_files_and_deduplicates_names(active_mesh, tmp_path, monkeypatch):
    files = {
        "a.x": target_file({"Smile": (51, 12)}),
        "b.x": target_file({"Smile": (52, 12), "Odd": (53, 9)}),
    }
    for name, fixture in files.items():
        fixture.write(tmp_path / name)
    by_path = {str(tmp_path / n): f for n, f in files.items()}
    monkeypatch.setattr(morph_keys, "scene_of_file", lambda p: by_path[str(p)].scene_data())
    result = bpy.ops.xof.shape_keys_from_x(
        directory=str(tmp_path), files=[{"name": "a.x"}, {"name": "b.x"}]
    )
    assert result == {"FINISHED"}
    names = [b.name for b in active_mesh.data.shape_keys.key_blocks]
    assert names == ["Basis", "a", "b"]  # each file's one matching mesh: named after its file
    want = files["b.x"].meshes["Smile"][:, [0, 2, 1]]
    np.testing.assert_allclose(block_positions(active_mesh, "b"), want, atol=1e-6)


def test_keys_are_named_after_their_files_not_the_meshes(active_mesh, tmp_path, monkeypatch):
    """The book's target files all name their mesh JimMesh: keys were JimMesh, JimMesh.001."""
    files = {f"{n}.x": target_file({"JimMesh": (90 + k, 12)}) for k, n in enumerate(["aa", "oh"])}
    for name, fixture in files.items():
        fixture.write(tmp_path / name)
    by_path = {str(tmp_path / n): f for n, f in files.items()}
    monkeypatch.setattr(morph_keys, "scene_of_file", lambda p: by_path[str(p)].scene_data())
    bpy.ops.xof.shape_keys_from_x(directory=str(tmp_path), files=[{"name": n} for n in files])
    names = [b.name for b in active_mesh.data.shape_keys.key_blocks]
    assert names == ["Basis", "aa", "oh"]


def test_operator_scale_and_nothing_matching(active_mesh, tmp_path, monkeypatch):
    fixture = target_file({"Big": (61, 12)})
    path = fixture.write(tmp_path / "big.x")
    monkeypatch.setattr(morph_keys, "scene_of_file", lambda p: fixture.scene_data())
    assert bpy.ops.xof.shape_keys_from_x(filepath=str(path), global_scale=2.0) == {"FINISHED"}
    want = 2.0 * fixture.meshes["Big"][:, [0, 2, 1]]
    np.testing.assert_allclose(block_positions(active_mesh, "big"), want, atol=1e-5)

    odd = target_file({"Odd": (62, 9)})
    monkeypatch.setattr(morph_keys, "scene_of_file", lambda p: odd.scene_data())
    with pytest.raises(RuntimeError, match="12 vertices"):
        bpy.ops.xof.shape_keys_from_x(filepath=str(path))


def test_operator_reads_real_files(active_mesh, tmp_path):
    fixture = target_file({"Smile": (71, 12)})
    path = fixture.write(tmp_path / "smile.x")
    assert bpy.ops.xof.shape_keys_from_x(filepath=str(path)) == {"FINISHED"}
    want = fixture.meshes["Smile"][:, [0, 2, 1]]
    np.testing.assert_allclose(block_positions(active_mesh, "smile"), want, atol=1e-6)


def test_a_truncated_file_reports_the_read_error_not_a_missing_mesh(active_mesh, tmp_path):
    fixture = target_file({"Smile": (81, 12)})
    path = fixture.write(tmp_path / "smile.x")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(RuntimeError) as raised:
        bpy.ops.xof.shape_keys_from_x(filepath=str(path))
    message = str(raised.value)
    assert "smile.x" in message and "vertices was found" not in message
    keys = active_mesh.data.shape_keys
    assert keys is None or "smile" not in keys.key_blocks
