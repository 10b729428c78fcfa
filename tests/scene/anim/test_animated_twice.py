"""A frame animated twice in one set: the last animation wins (the fuzz found the second one
raising "F-Curve already exists")."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")
from xof.addon.scene.importer import import_files  # noqa: E402

from ..scene_fixtures import CUBE_FACES, CUBE_VERTS, frame_text, mesh_text, reset_blender  # noqa: E402
from ..skin_fixtures import animation, key_block  # noqa: E402

pytestmark = pytest.mark.blender


def test_the_last_animation_of_a_frame_wins(tmp_path: Path):
    reset_blender()
    box = frame_text("Box", np.eye(4), [mesh_text("BoxMesh", CUBE_VERTS, CUBE_FACES)])
    first = animation("Box", key_block(2, [0, 4800], [[1, 0, 0], [2, 0, 0]]))
    last = animation("Box", key_block(2, [0, 4800], [[0, 5, 0], [0, 7, 0]]))
    text = "xof 0303txt 0032\nAnimTicksPerSecond { 4800; }\n" + box
    text += "AnimationSet Twice {\n" + first + last + "}\n"
    path = tmp_path / "twice.x"
    path.write_text(text)
    result = import_files([path])
    assert any("animated twice" in w for w in result.warnings)
    obj = next(o for o in bpy.data.objects if o.name.startswith("Box"))
    scene = bpy.context.scene
    for frame, y in ((0, 5.0), (scene.render.fps, 7.0)):
        scene.frame_set(frame)
        # file +Y is Blender +Z under the default axes; the first animation's x stays 0
        np.testing.assert_allclose(obj.matrix_world.translation[:], (0.0, 0.0, y), atol=1e-5)
