"""Real skinned files of ../shared/xcorpus, imported, against the independent LBS reference.

At the file's frame pose (animation off), at key times of every set and between keys.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene import importer  # noqa: E402
from xof.addon.scene.imp.options import AnimationOptions  # noqa: E402
from xof.addon.xfile import read, scene_of  # noqa: E402

from tests.conftest import CORPUS_HELP  # noqa: E402

from .. import lbs_reference as ref  # noqa: E402
from ..skin_fixtures import evaluated_world_positions, model_size, set_frame  # noqa: E402

pytestmark = [pytest.mark.blender, pytest.mark.corpus]

FPS = 24
FILES = [
    "BCN_Epileptic.X",
    "Testwuson.X",
    "anim_test.x",
    "test_cube_text.x",
    "test_cube_binary.x",
    "test_cube_compressed.x",
]


def load(corpus, name: str, **animation):
    bpy.ops.wm.read_homefile(use_empty=True)
    sc = bpy.context.scene
    sc.render.fps, sc.render.fps_base = FPS, 1.0
    path = corpus / name
    if not path.exists():
        pytest.skip(f"{name} is absent from the real-file corpus: {CORPUS_HELP}")
    options = importer.ImportOptions(
        animation=AnimationOptions(**{"scene_timing": False, **animation})
    )
    result = importer.import_files([path], options)
    return result, scene_of(read(str(path)))


def mesh_objects(data) -> dict[int, object]:
    by_name = {o.data.name: o for o in bpy.data.objects if o.type == "MESH"}
    return {id(m): by_name[m.name] for m in data.all_meshes()}


def worst_error(data, animation_set, frame: float | None, tps: float) -> float:
    """Largest deviation over all meshes, relative to each mesh's size."""
    if frame is not None:
        set_frame(frame)
    ticks = None if frame is None else frame * tps / FPS
    want = ref.expected_positions(data, animation_set, ticks)
    rest = ref.expected_positions(data, None, None)
    objs = mesh_objects(data)
    worst = 0.0
    for mesh in data.all_meshes():
        got = evaluated_world_positions(objs[id(mesh)])
        size = model_size(rest[id(mesh)])
        worst = max(worst, float(np.max(np.abs(got - want[id(mesh)]))) / size)
    return worst


def sample_frames(aset, tps: float) -> tuple[list[float], list[float]]:
    """Some key times of the set, and points between keys (a quarter and a half way)."""
    times = np.unique(np.concatenate([t.times for a in aset.animations for t in a.tracks]))
    frames = times * FPS / tps
    keys = sorted({*map(float, frames[:: max(1, len(frames) // 4)]), float(frames[-1])})
    firsts = frames[:4]
    between = [a + f * (b - a) for a, b in itertools.pairwise(firsts) for f in (0.25, 0.5)]
    return keys, [float(f) for f in between]


@pytest.mark.parametrize("name", FILES)
def test_frame_pose_matches_reference(corpus, name):
    _, data = load(corpus, name, enabled=False)
    assert worst_error(data, None, None, 4800.0) <= 1e-4


@pytest.mark.parametrize("name", ["BCN_Epileptic.X", "Testwuson.X", "anim_test.x"])
def test_animation_sets_match_reference(corpus, name):
    _, data = load(corpus, name)
    tps = data.ticks_per_second or 4800.0
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    anim = arm.animation_data
    actions = [anim.action] + [t.strips[0].action for t in anim.nla_tracks]
    assert [a.name for a in actions] == [s.name for s in data.animation_sets]
    slots = [anim.action_slot] + [t.strips[0].action_slot for t in anim.nla_tracks]
    for aset, action, slot in zip(data.animation_sets, actions, slots, strict=True):
        anim.action, anim.action_slot = action, slot
        keys, between = sample_frames(aset, tps)
        for frame in keys + between:  # spline sets too: Blender's Bezier is the Hermite curve
            err = worst_error(data, aset, frame, tps)
            assert err <= 1e-4, f"{aset.name} frame {frame}: {err:.3g}"


def test_bcn_meshes_share_one_armature(corpus):
    _, data = load(corpus, "BCN_Epileptic.X")
    arms = [o for o in bpy.data.objects if o.type == "ARMATURE"]
    assert len(arms) == 1
    objs = mesh_objects(data)
    assert len(objs) == 3
    for obj in objs.values():
        assert obj.parent == arms[0]
        assert obj.modifiers[0].object == arms[0]


def test_anim_test_reports_missing_bones_and_imports(corpus):
    result, data = load(corpus, "anim_test.x")
    missing = [w for w in result.warnings if "does not have" in w]
    assert any("joint3" in w for w in missing) and any("joint4" in w for w in missing)
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    assert {b.name for b in arm.data.bones} == {"joint1", "joint2"}
    obj = mesh_objects(data)[id(data.all_meshes()[0])]
    # the groups of the missing frames are kept (data preserved), they just deform nothing
    assert {g.name for g in obj.vertex_groups} == {"joint1", "joint2", "joint3", "joint4"}
