"""A failed multi-file import leaves the scene's settings as they were, not only bpy.data."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

bpy = pytest.importorskip("bpy")
from xof.addon.scene.imp import rollback  # noqa: E402

from ..skin_fixtures import character_text, write  # noqa: E402

pytestmark = [pytest.mark.blender, pytest.mark.usefixtures("xof_enabled", "empty_scene")]

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def settings(scene) -> dict[str, object]:
    return {
        "fps": scene.render.fps,
        "fps_base": scene.render.fps_base,
        "frame_start": scene.frame_start,
        "frame_end": scene.frame_end,
        "frame_current": scene.frame_current,
        "lock": scene.render.use_lock_interface,
    }


def files(tmp_path: Path) -> dict[str, Path]:
    corrupt = tmp_path / "corrupt.x"
    corrupt.write_text("xof 0303txt 0032\nFrame F { FrameTransformMatrix { 1.0, 2.0 ")
    return {
        "character": write(tmp_path / "character.x", character_text()),  # keys at 30 fps
        "flag": Path(shutil.copy(EXAMPLES / "flag.x", tmp_path / "flag.x")),  # has cloth
        "corrupt": corrupt,
    }


def test_the_files_do_change_the_scene_when_they_import(tmp_path: Path):
    # the premise of the test below: each good file changes what it must put back
    scene = bpy.context.scene
    scene.render.fps, scene.frame_start, scene.frame_end, scene.frame_current = 24, 1, 250, 7
    before = settings(scene)
    paths = files(tmp_path)
    bpy.ops.import_scene.x(files=[{"name": "character.x"}, {"name": "flag.x"}],
                           directory=str(tmp_path))  # fmt: skip
    after = settings(scene)
    assert after["fps"] == 30 and before["fps"] == 24
    assert (after["frame_start"], after["frame_end"]) != (1, 250)
    assert after["lock"] is True and before["lock"] is False
    assert paths


ORDERS = [("character", "corrupt", "flag"), ("flag", "character", "corrupt")]


@pytest.mark.parametrize("order", ORDERS)
def test_a_corrupt_file_among_several_puts_the_scene_settings_back(tmp_path: Path, order):
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = 24, 1.0
    scene.frame_start, scene.frame_end, scene.frame_current = 1, 250, 7
    scene.render.use_lock_interface = False
    before = settings(scene)
    counts = rollback.counts()
    files(tmp_path)
    with pytest.raises(RuntimeError, match=r"corrupt\.x"):
        bpy.ops.import_scene.x(files=[{"name": f"{n}.x"} for n in order], directory=str(tmp_path))
    assert settings(scene) == before
    assert rollback.counts() == counts


def test_settings_put_back_whatever_order_the_range_moved(tmp_path: Path):
    # a start past the old end (and back) must not be clamped by the old end on the way
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 500, 900
    saved = rollback.scene_settings()
    scene.frame_start, scene.frame_end = 1, 20
    rollback.restore_scene_settings(saved)
    assert (scene.frame_start, scene.frame_end) == (500, 900)
