"""A failing import leaves every bpy.data collection as it was."""

from __future__ import annotations

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene.imp import rollback  # noqa: E402
from xof.addon.scene.imp.context import BuildStep  # noqa: E402
from xof.addon.scene.importer import STEPS, build_scene  # noqa: E402
from xof.addon.xfile.views.model import FrameData, MaterialData, MeshData, SceneData  # noqa: E402

from ..scene_fixtures import reset_blender  # noqa: E402

pytestmark = pytest.mark.blender


class Boom(Exception):
    pass


def rich_scene() -> SceneData:
    mat = MaterialData("M", np.ones(4), 0, np.zeros(3), np.zeros(3), "missing.png")
    mesh = MeshData("T", np.eye(3), np.array([3]), np.array([0, 1, 2]), materials=[mat],
                    material_indices=np.zeros(1, np.int64))  # fmt: skip
    return SceneData(frames=[FrameData("F", np.eye(4), children=[FrameData("G", np.eye(4))],
                                       meshes=[mesh])])  # fmt: skip


def test_failing_step_removes_everything_created():
    reset_blender()
    bpy.data.meshes.new("existing")  # pre-existing data stays
    bpy.data.materials.new("existing")
    before = rollback.counts()

    def explode(ctx):
        bpy.data.actions.new("made by a step")
        bpy.data.collections.new("made by a step")
        raise Boom("step failed")

    steps = [*STEPS, BuildStep("boom", explode)]
    with pytest.raises(Boom), rollback.transaction():
        build_scene(rich_scene(), steps=steps)
    assert rollback.counts() == before
    assert "existing" in bpy.data.meshes and "existing" in bpy.data.materials


def test_successful_transaction_keeps_data():
    reset_blender()
    before = rollback.counts()
    with rollback.transaction():
        build_scene(rich_scene())
    after = rollback.counts()
    assert after["objects"] == before["objects"] + 2  # F (holding its one mesh) and G
    assert after["meshes"] == before["meshes"] + 1
    assert after["materials"] == before["materials"] + 1
    assert after["images"] == before["images"] + 1
