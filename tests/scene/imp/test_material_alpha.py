"""A diffuse alpha of 0 is opaque, as D3D draws it without blending (issue: the DirectX SDK's
airplane, car and dwarfs, 9 of its 62 files, wrote alpha 0 and imported as nothing)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene.importer import import_files  # noqa: E402

from ..scene_fixtures import material_text, mesh_text, write_x  # noqa: E402

pytestmark = [pytest.mark.blender, pytest.mark.usefixtures("empty_scene")]

QUAD = np.array([[-1, 0, -1], [1, 0, -1], [1, 0, 1], [-1, 0, 1]], dtype=np.float64)  # D3D XZ


def quad_file(path: Path, alpha: float) -> Path:
    mat = material_text("Hull", (0.8, 0.6, 0.4, alpha), 10.0, (0, 0, 0), (0, 0, 0))
    return write_x(path, [mesh_text("Q", QUAD, [[0, 1, 2, 3]], materials=[mat])])


def principled(mat):
    return next(n for n in mat.node_tree.nodes if n.type == "BSDF_PRINCIPLED")


def rendered_alpha(tmp_path: Path) -> float:
    """Mean alpha of a 12 x 12 Cycles render of the quad over a transparent film."""
    scene = bpy.context.scene
    cam = bpy.data.objects.new("Cam", bpy.data.cameras.new("Cam"))
    scene.collection.objects.link(cam)
    cam.location = (0.0, 0.0, 6.0)  # looking down on the quad, in Blender's XY plane
    cam.data.type = "ORTHO"
    cam.data.ortho_scale = 1.0  # the middle of the quad only
    scene.camera = cam
    scene.render.engine = "CYCLES"
    scene.cycles.samples = 4
    scene.cycles.device = "CPU"
    scene.render.film_transparent = True
    scene.render.resolution_x = scene.render.resolution_y = 12
    scene.render.resolution_percentage = 100
    scene.render.filepath = str(tmp_path / "alpha.png")
    bpy.ops.render.render(write_still=True)
    img = bpy.data.images.load(scene.render.filepath)
    px = np.array(img.pixels[:]).reshape(-1, 4)
    bpy.data.images.remove(img)
    return float(px[:, 3].mean())


def test_alpha_zero_is_opaque_and_kept_for_export(tmp_path: Path) -> None:
    result = import_files([quad_file(tmp_path / "zero.x", 0.0)])
    mat = bpy.data.materials["Hull"]
    assert principled(mat).inputs["Alpha"].default_value == 1.0
    assert tuple(mat.diffuse_color) == pytest.approx((0.8, 0.6, 0.4, 1.0))
    assert list(mat["xof_face_color"]) == pytest.approx([0.8, 0.6, 0.4, 0.0])  # the file's
    said = [n for n in result.notes if "alpha 0" in n]
    assert len(said) == 1 and "'Hull'" in said[0]
    assert rendered_alpha(tmp_path) == pytest.approx(1.0)  # seen solid, not as nothing


def test_alpha_between_zero_and_one_stays_transparency(tmp_path: Path) -> None:
    result = import_files([quad_file(tmp_path / "half.x", 0.5)])
    mat = bpy.data.materials["Hull"]
    assert principled(mat).inputs["Alpha"].default_value == pytest.approx(0.5)
    assert not [n for n in result.notes if "alpha 0" in n]
    assert rendered_alpha(tmp_path) == pytest.approx(0.5, abs=0.1)


def test_the_note_names_each_material_once_for_several_files(tmp_path: Path) -> None:
    files = [quad_file(tmp_path / f"z{i}.x", 0.0) for i in range(2)]
    result = import_files(files)
    said = [n for n in result.notes if "alpha 0" in n]
    assert len(said) == 2  # one line a file, each naming its own material
