"""import -> export -> import gives back the same scene, compared whole: objects and their
names, types and parents, the frame pose (every object's world matrix and every bone's pose
at several frames), the scene's rate and frame range, every key, skin weights, shape keys,
cloth groups and springs, to 1e-5 -- on generated scenes: a skinned character at 60 fps
whose frames hold a pose, with a helper bone and two sets; morph sets; cloth; a baked cloth
cape on a character; a Blender-made scene (a mesh with children, sparse keys at 60 fps)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene.export.animation_export import action_slots, fcurves_of  # noqa: E402
from xof.addon.scene.export.exporter import export_scene  # noqa: E402
from xof.addon.scene.export.plan.options import ExportOptions  # noqa: E402
from xof.addon.scene.importer import import_files  # noqa: E402
from xof.addon.xfile import read, scene_of  # noqa: E402

from .. import morph_fixtures as morphs  # noqa: E402
from ..roundtrip_scenes import rig60_text  # noqa: E402
from ..scene_fixtures import write_x  # noqa: E402
from .test_roundtrip import _curves, _get  # noqa: E402
from .test_roundtrip_fixtures import cloth_text  # noqa: E402

pytestmark = pytest.mark.blender
TOL = 1e-5


def fresh() -> None:
    bpy.ops.wm.read_factory_settings(use_empty=True)


def _groups(obj: Any) -> dict[str, np.ndarray]:
    out = {}
    for g in obj.vertex_groups:
        w = np.zeros(len(obj.data.vertices))
        for v in obj.data.vertices:
            for e in v.groups:
                if e.group == g.index:
                    w[v.index] = e.weight
        if w.any():
            out[g.name] = w
    return out


def _parent(obj: Any) -> str | None:
    if obj.parent is None:
        return None
    owner = "<armature>" if obj.parent.type == "ARMATURE" else obj.parent.name
    return f"{owner}:{obj.parent_bone}" if obj.parent_type == "BONE" else owner


def _pose(frames: list[int]) -> dict[str, np.ndarray]:
    """World matrices of every object and pose matrix of every bone at each frame."""
    scene = bpy.context.scene
    out = {}
    for f in frames:
        scene.frame_set(f)
        for o in scene.objects:
            name = "<armature>" if o.type == "ARMATURE" else o.name
            out[f"{f}|{name}"] = np.array(o.matrix_world)
            if o.type == "ARMATURE":
                for pb in o.pose.bones:
                    out[f"{f}|{name}|{pb.name}"] = np.array(o.matrix_world @ pb.matrix)
    return out


def scene_snapshot(frames: list[int] | None = None) -> dict[str, Any]:
    scene = bpy.context.scene
    bpy.context.view_layer.update()
    frames = frames or [scene.frame_start, (scene.frame_start + scene.frame_end) // 2,
                        scene.frame_end]  # fmt: skip
    snap: dict[str, Any] = {
        "fps": scene.render.fps / scene.render.fps_base,
        "range": (scene.frame_start, scene.frame_end),
        "objects": {},
        "bones": {},
        "curves": {},
        "meshes": {},
        "pose": _pose(frames),
    }
    for o in scene.objects:
        name = "<armature>" if o.type == "ARMATURE" else o.name
        snap["objects"][name] = (o.type, _parent(o))
        snap["curves"].update({f"{name}|{k}": v for k, v in _curves(o).items()})
        if o.type == "ARMATURE":
            snap["bones"] = {b.name: b.parent.name if b.parent else None for b in o.data.bones}
        if o.type != "MESH":
            continue
        me = o.data
        entry: dict[str, Any] = {"co": _get(me.vertices, "co", 3), "groups": _groups(o)}
        attr = me.attributes.get("cloth_spring")
        if attr is not None:
            marked = _get(attr.data, "value", 1, bool)
            edges = _get(me.edges, "vertices", 2, np.int32)[marked]
            entry["springs"] = {tuple(sorted(e)) for e in edges.tolist()}
        if me.shape_keys is not None:
            entry["keys"] = {b.name: _get(b.data, "co", 3) for b in me.shape_keys.key_blocks}
            snap["curves"].update({f"{o.name}|{k}": v for k, v in _curves(me.shape_keys).items()})
        props = getattr(o, "xof_physics", None)
        entry["live cloth"] = bool(props.enabled) if props is not None else None
        snap["meshes"][o.name] = entry
    scene.frame_set(frames[0])
    return snap


def assert_same_scene(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert b["fps"] == a["fps"]
    assert b["range"] == a["range"]
    assert b["objects"] == a["objects"]
    assert b["bones"] == a["bones"]
    assert sorted(b["pose"]) == sorted(a["pose"])
    for k, m in a["pose"].items():
        np.testing.assert_allclose(b["pose"][k], m, atol=TOL, err_msg=k)
    assert sorted(b["curves"]) == sorted(a["curves"])
    for k, co in a["curves"].items():
        got = b["curves"][k]
        assert got.shape == co.shape, k
        np.testing.assert_allclose(got, co, atol=TOL, err_msg=k)
    assert sorted(b["meshes"]) == sorted(a["meshes"])
    for name, x in a["meshes"].items():
        y = b["meshes"][name]
        np.testing.assert_allclose(y["co"], x["co"], atol=TOL, err_msg=name)
        assert sorted(y["groups"]) == sorted(x["groups"]), name
        for g, w in x["groups"].items():
            np.testing.assert_allclose(y["groups"][g], w, atol=TOL, err_msg=f"{name}/{g}")
        assert y.get("springs") == x.get("springs"), name
        assert sorted(y.get("keys", {})) == sorted(x.get("keys", {})), name
        for k, co in x.get("keys", {}).items():
            np.testing.assert_allclose(y["keys"][k], co, atol=TOL, err_msg=f"{name}/{k}")
        assert y["live cloth"] == x["live cloth"], name


def export_and_reimport(tmp: Path, fmt: str = "txt", bits: int = 32, **options: Any):
    out = tmp / f"out.{fmt}{bits}.x"
    result = export_scene(str(out), ExportOptions(format=fmt, float_bits=bits, **options))
    fresh()
    import_files([out])
    return out, result


SCENES = {
    "rig60": lambda p: p.write_text(rig60_text(), "ascii"),
    "morph": lambda p: morphs.dance(loop_variant=True, loop=True).write(p),
    "morph_sets": lambda p: morphs.shared_sets().write(p),
    "cloth": lambda p: write_x(p, [cloth_text()]),
}


@pytest.mark.parametrize("fmt,bits", [("txt", 32), ("bin", 64), ("bzip", 32)])
@pytest.mark.parametrize("name", sorted(SCENES))
def test_generated_scene_round_trips(name: str, fmt: str, bits: int, tmp_path: Path) -> None:
    source = tmp_path / f"{name}.x"
    SCENES[name](source)
    fresh()
    import_files([source])
    before = scene_snapshot()
    export_and_reimport(tmp_path, fmt, bits)
    after = scene_snapshot()
    assert_same_scene(before, after)


def test_rig60_keeps_the_frame_pose_rate_and_skin_bones(tmp_path: Path) -> None:
    """Regressions: bones no set keys stood in the bind pose after a round trip; the export
    wrote a SkinWeights for every bone (here "hit", a bone only because Wave animates it)."""
    from ..roundtrip_scenes import BINDS, FRAMES

    source = tmp_path / "rig60.x"
    SCENES["rig60"](source)
    fresh()
    import_files([source])
    before = scene_snapshot()
    assert before["fps"] == 60 and before["range"] == (0, 62)
    assert "hit" in before["bones"]
    out, _ = export_and_reimport(tmp_path)
    after = scene_snapshot()
    assert_same_scene(before, after)
    text = out.read_text("ascii")
    assert text.count("SkinWeights {") == 3  # Hip, Spine, Head: the bones that move vertices
    header = text.split("XSkinMeshHeader {", 1)[1].split("}", 1)[0]
    assert [int(v) for v in header.replace(";", " ").split()] == [2, 2, 3]
    # Head: not keyed by the active set; the file holds its frame pose, not its bind
    head = _frame_matrix(text, "Head")
    np.testing.assert_allclose(head, FRAMES["Head"], atol=1e-6)
    assert not np.allclose(head, np.linalg.inv(BINDS["Spine"]) @ BINDS["Head"], atol=1e-3)


def _frame_matrix(text: str, name: str) -> np.ndarray:
    block = text.split(f"Frame {name} {{", 1)[1].split("FrameTransformMatrix {", 1)[1]
    numbers = block.split("}", 1)[0].replace(";", ",").split(",")
    return np.array([float(v) for v in numbers if v.strip()][:16]).reshape(4, 4)


def test_blender_scene_mesh_with_children_and_sparse_60_fps_keys(tmp_path: Path) -> None:
    """Regressions: a mesh object with children came back as an empty plus a ".001"-named
    mesh; keys every 10 frames at 60 fps came back at 24 fps (their spacing gives no rate)."""
    fresh()
    scene = bpy.context.scene
    scene.render.fps, scene.frame_start, scene.frame_end = 60, 0, 20
    bpy.ops.mesh.primitive_cube_add(location=(1, 2, 3))
    cube = bpy.context.object
    cube.data.name = "CubeMesh"
    bpy.ops.mesh.primitive_uv_sphere_add(location=(0, 0, 1), segments=8, ring_count=4)
    bpy.context.object.parent = cube
    bpy.ops.object.empty_add(location=(0, 1, 0))
    empty = bpy.context.object
    for frame, x in ((0, 0.0), (10, 2.0), (20, 1.0)):
        empty.location.x = x
        empty.keyframe_insert("location", frame=frame)
    for action, slot in action_slots(empty):
        for fc in fcurves_of(action, slot):
            for key in fc.keyframe_points:
                key.interpolation = "LINEAR"
    bpy.ops.object.select_all(action="DESELECT")
    before = scene_snapshot([0, 5, 10, 20])
    _, result = export_and_reimport(tmp_path)
    assert result.ticks_per_second == 60
    after = scene_snapshot([0, 5, 10, 20])
    assert after["objects"]["Cube"] == ("MESH", None)
    assert after["objects"]["Sphere"] == ("MESH", "Cube")
    assert after["fps"] == 60 and after["range"] == (0, 20)
    for key, m in before["pose"].items():
        np.testing.assert_allclose(after["pose"][key], m, atol=TOL, err_msg=key)
    # .X keys whole transforms: rotation and scale come back too, each as one constant key
    assert set(before["curves"]) <= set(after["curves"])
    for key, co in before["curves"].items():
        assert len(co) == 3, key  # the three keys, not a sampled curve
        np.testing.assert_allclose(after["curves"][key], co, atol=TOL, err_msg=key)


def _world_positions(obj: Any) -> np.ndarray:
    dg = bpy.context.evaluated_depsgraph_get()
    mesh = obj.evaluated_get(dg).data
    co = _get(mesh.vertices, "co", 3).astype(np.float64)
    m = np.array(obj.matrix_world)
    return co @ m[:3, :3].T + m[:3, 3]


@pytest.mark.parametrize("step", [1, 4])
def test_baked_cape_on_a_character_plays_its_bake_with_live_cloth_off(
    step: int, tmp_path: Path
) -> None:
    """Regression: a baked cape re-imported with live cloth on (drifting from its bake).
    Now its bake is a MorphAnimationSet, a key mesh every ``step`` frames, and the re-import
    plays it: the same world positions at every key, live cloth off, cloth groups kept."""
    import addon_utils

    from ..cloth.test_cloth_deformed import _cape_text

    fresh()
    addon_utils.enable("xof", default_set=True)
    try:
        source = tmp_path / "cape.x"
        source.write_text(_cape_text(), "ascii")
        assert bpy.ops.import_scene.x(filepath=str(source)) == {"FINISHED"}
        cape = bpy.data.objects["Cape"]
        assert cape.xof_physics.enabled
        scene = bpy.context.scene
        cape.xof_physics.frame_start, cape.xof_physics.frame_end = 1, 13
        cape.xof_physics.bake_target = "PC2"
        cape.xof_physics.bake_path = str(tmp_path / "cape.pc2")
        bpy.context.view_layer.objects.active = cape
        assert bpy.ops.xof.sim_bake() == {"FINISHED"}
        keys = list(range(1, 14, step)) + ([13] if 12 % step else [])
        baked = {}
        for f in keys:
            scene.frame_set(f)
            baked[f] = _world_positions(cape)
        groups = {g: w for g, w in _groups(cape).items() if g.startswith("cloth_")}
        assert bpy.ops.export_scene.x(filepath=str(tmp_path / "out.x"), bake_step=step) == {
            "FINISHED"
        }
        text = (tmp_path / "out.x").read_text("ascii")
        (morph_set,) = scene_of(read(tmp_path / "out.x")).morph_sets
        fps = scene.render.fps / scene.render.fps_base
        ms = [round((f - scene.frame_start) * 1000 / fps) for f in [keys[0] - 1, *keys]]
        assert [k.time_ms for k in morph_set.keys] == ms
        assert morph_set.keys[0].mesh_name == "Cape"  # the base mesh, then the bake
        assert "SkinWeights {" not in text  # the bake holds the skinned motion
        fresh()
        addon_utils.enable("xof", default_set=True)
        assert bpy.ops.import_scene.x(filepath=str(tmp_path / "out.x")) == {"FINISHED"}
        cape = bpy.data.objects["Cape"]
        assert not cape.xof_physics.enabled  # the bake plays, not a new simulation
        assert sorted(_groups(cape)) == sorted(groups)  # the skin's group is not written
        np.testing.assert_allclose(_groups(cape)["cloth_mass"], groups["cloth_mass"], atol=TOL)
        for f in keys:
            bpy.context.scene.frame_set(f)
            np.testing.assert_allclose(_world_positions(cape), baked[f], atol=TOL, err_msg=f)
    finally:
        addon_utils.disable("xof")


def test_shape_key_bake_round_trips_as_a_morph_set(tmp_path: Path) -> None:
    """A cloth baked to shape keys: every 3rd baked frame (and the last) becomes a morph key
    after a first key naming the base mesh; the re-import shows the baked shapes at those
    frames and leaves live cloth off."""
    import addon_utils

    fresh()
    addon_utils.enable("xof", default_set=True)
    try:
        source = tmp_path / "flag.x"
        write_x(source, [cloth_text()])
        assert bpy.ops.import_scene.x(filepath=str(source)) == {"FINISHED"}
        flag = bpy.data.objects["Flag"]
        flag.xof_physics.frame_start, flag.xof_physics.frame_end = 1, 10
        flag.xof_physics.bake_target = "SHAPE_KEYS"
        bpy.context.view_layer.objects.active = flag
        assert bpy.ops.xof.sim_bake() == {"FINISHED"}
        keys = [1, 4, 7, 10]
        scene = bpy.context.scene
        baked = {}
        for f in keys:
            scene.frame_set(f)
            baked[f] = _world_positions(flag)
        out = tmp_path / "out.x"
        assert bpy.ops.export_scene.x(filepath=str(out), bake_step=3) == {"FINISHED"}
        scene_data = scene_of(read(out))
        (morph_set,) = scene_data.morph_sets
        (frame,) = [f for f in scene_data.frames if f.name == "Flag"]
        assert morph_set.keys[0].mesh_name == frame.meshes[0].name  # the base mesh first
        assert [k.mesh_name for k in morph_set.keys[1:]] == [f"xof_cloth_{f:04d}" for f in keys]
        fresh()
        addon_utils.enable("xof", default_set=True)
        assert bpy.ops.import_scene.x(filepath=str(out)) == {"FINISHED"}
        flag = bpy.data.objects["Flag"]
        assert not flag.xof_physics.enabled
        for f in keys:
            bpy.context.scene.frame_set(f)
            np.testing.assert_allclose(_world_positions(flag), baked[f], atol=TOL, err_msg=f)
    finally:
        addon_utils.disable("xof")
