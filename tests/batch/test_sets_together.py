"""Batch glTF keeps animation sets that play together in one glTF animation (issue 35, item 7).

Chap06's tiny.x holds five sets that each key their own bones, meant to run at once; xof's
import plays them together (unmuted NLA tracks), but the batch wrote five glTF animations, so
a viewer played one and she stood in the bind pose (the thigh swung 17.7 degrees in the .X
import, 4.7 in the glb as Blender's glTF importer opened it). Here the fixture's four sets
(``TOGETHER_SETS``) each key one part; the glb must hold one animation that moves all of them
as xof's import does. Before the fix the glb held four animations and, opened with Blender's
glTF importer, one played: the hip stayed still (0 degrees) where xof's import turns it 50
(measured on the code before the fix).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from addon.batch import cli
from addon.xfile import XFileError, read, scene_of
from tests.scene.skin_fixtures import character_text, evaluated_world_positions, set_frame

from .batch_fixtures import TOGETHER_SETS, glb_json, together_text, validate

pytestmark = [pytest.mark.blender, pytest.mark.slow]

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "xcorpus"
SECONDS = [0.0, 1 / 6, 1 / 3, 1 / 2, 2 / 3]  # the keys (1600 ticks apart at 4800) and between


@pytest.fixture(scope="module")
def converted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict]:
    src = tmp_path_factory.mktemp("sets")
    (src / "parts.x").write_text(together_text(), "ascii")
    (src / "walkwave.x").write_text(character_text(), "ascii")  # Walk and Wave share bones
    out = src.parent / (src.name + "-out")
    report = out.with_suffix(".json")
    code = cli.main(["convert", str(src), "--to", "glb", "--out", str(out), "--workers", "1",
                     "--report", str(report)])  # fmt: skip
    files = {f["relative"]: f for f in json.loads(report.read_text())["files"]}
    assert code == 0, files
    return src, out, files


def test_sets_that_play_together_are_one_gltf_animation(converted) -> None:
    _, out, files = converted
    doc = glb_json(out / "parts.glb")
    nodes = [n.get("name") for n in doc["nodes"]]
    (anim,) = doc["animations"]  # four before the fix
    animated = {nodes[c["target"]["node"]] for c in anim["channels"]}
    assert animated == {"Hip", "Spine", "Head", "Spinner"}
    assert files["parts.x"]["merged_sets"] == list(TOGETHER_SETS)
    # sets that key the same bones are alternatives: still one animation each
    names = sorted(a["name"] for a in glb_json(out / "walkwave.glb")["animations"])
    assert names == ["Walk", "Wave"]
    assert "merged_sets" not in files["walkwave.x"]


def test_the_merged_animation_passes_the_khronos_validator(converted) -> None:
    _, out, _ = converted
    for verdict in validate([out / "parts.glb", out / "walkwave.glb"]):
        assert verdict["errors"] == 0, verdict


def _scene_at(bpy, seconds: list[float]) -> tuple[list[np.ndarray], dict[str, list[float]]]:
    """Skinned positions of Body and each part's turn (degrees from its pose at 0 s; the
    angle between two poses does not depend on the bone axes an importer chose)."""
    scene = bpy.context.scene
    fps = scene.render.fps / scene.render.fps_base
    rig = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    spinner = bpy.data.objects["Spinner"]
    positions: list[np.ndarray] = []
    poses: dict[str, list] = {"Hip": [], "Spine": [], "Head": [], "Spinner": []}
    for t in seconds:
        set_frame(t * fps)
        positions.append(evaluated_world_positions(bpy.data.objects["Body"]))
        for bone in ("Hip", "Spine", "Head"):  # each bone's turn within its parent
            pose = rig.pose.bones[bone]
            local = (
                pose.matrix if pose.parent is None else pose.parent.matrix.inverted() @ pose.matrix
            )
            poses[bone].append(local.to_quaternion())
        poses["Spinner"].append(spinner.matrix_world.to_quaternion())
    turns = {
        k: [float(np.degrees(q.rotation_difference(v[0]).angle)) for q in v]
        for k, v in poses.items()
    }
    return positions, turns


@pytest.fixture(scope="module")
def bpy_xof():
    bpy = pytest.importorskip("bpy")  # before addon_utils, which comes with it
    import addon_utils

    addon_utils.enable("xof", default_set=True)
    yield bpy
    bpy.ops.wm.read_homefile(use_empty=True)
    addon_utils.disable("xof", default_set=True)


def test_blenders_gltf_importer_plays_every_part_as_xofs_import(converted, bpy_xof) -> None:
    bpy = bpy_xof
    src, out, _ = converted
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.import_scene.x(filepath=str(src / "parts.x"))
    want, want_turns = _scene_at(bpy, SECONDS)
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.import_scene.gltf(filepath=str(out / "parts.glb"))
    assert len(bpy.data.actions) >= 1
    got, got_turns = _scene_at(bpy, SECONDS)
    for part, (_frame, _axis, degrees) in zip(
        ("Hip", "Spine", "Head", "Spinner"), TOGETHER_SETS.values(), strict=True
    ):
        swing = max(degrees) - min(degrees)  # each set turns its part about one axis
        assert max(want_turns[part]) == pytest.approx(swing, abs=0.01), part
        np.testing.assert_allclose(got_turns[part], want_turns[part], atol=0.01, err_msg=part)
    size = float(np.ptp(want[0], axis=0).max())
    for t, w, g in zip(SECONDS, want, got, strict=True):
        np.testing.assert_allclose(g, w, atol=1e-4 * size, err_msg=f"t = {t} s")


def _keys_disjoint_frames(path: Path) -> bool:
    """Two or more sets, each keying some frame, no frame keyed by two (read here)."""

    try:
        data = scene_of(read(str(path)))
    except (XFileError, ValueError, OSError):
        return False
    groups = [
        {a.frame_name for a in s.animations if a.frame_name and any(len(t.times) for t in a.tracks)}
        for s in data.animation_sets
    ]
    flat = [f for g in groups for f in g]
    return len(groups) >= 2 and all(groups) and len(flat) == len(set(flat))


def test_corpus_files_with_sets_that_play_together(tmp_path: Path) -> None:
    """Real files whose sets key disjoint bones (Chap06's tiny.x when the corpus has it)."""
    files = (
        sorted(p for p in CORPUS.glob("*") if p.suffix.lower() == ".x") if CORPUS.is_dir() else []
    )
    together = [p for p in files if _keys_disjoint_frames(p)]
    if not together:
        pytest.skip("no corpus file has animation sets that key disjoint bones")
    out = tmp_path / "out"
    code = cli.main(["convert", *map(str, together), "--to", "glb", "--out", str(out),
                     "--workers", "1"])  # fmt: skip
    assert code == 0
    for path in together:
        assert len(glb_json(out / (path.stem + ".glb"))["animations"]) == 1, path.name
