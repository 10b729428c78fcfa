"""import -> export -> import gives the same scene: counts, positions, normals, UVs, skin
weights, animation keys, cloth masses and springs, morph keys; for the corpus and our own
fixtures, in text, binary and compressed files with 32- and 64-bit floats."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene.export.exporter import export_scene  # noqa: E402
from xof.addon.scene.export.plan.options import ExportOptions  # noqa: E402
from xof.addon.scene.importer import import_files  # noqa: E402

from tests.conftest import CORPUS  # noqa: E402

pytestmark = pytest.mark.blender

COMBOS = [("txt", 32), ("txt", 64), ("bin", 32), ("bin", 64), ("tzip", 32), ("bzip", 64)]
SKIP = {"malformed_skinweights_oob.x"}  # the corrupt sample


def fresh() -> None:
    bpy.ops.wm.read_factory_settings(use_empty=True)


def _get(coll: Any, prop: str, width: int, dtype: type = np.float32) -> np.ndarray:
    out = np.empty(len(coll) * width, dtype=dtype)
    coll.foreach_get(prop, out)
    return out.reshape(-1, width) if width > 1 else out


def _curves(owner: Any) -> dict[str, np.ndarray]:
    """Every key of every action on ``owner`` (times in seconds, values), by action/path."""
    from bpy_extras.anim_utils import action_get_channelbag_for_slot

    out: dict[str, np.ndarray] = {}
    anim = getattr(owner, "animation_data", None)
    if anim is None:
        return out
    scene = bpy.context.scene
    fps = scene.render.fps / scene.render.fps_base
    pairs = [(anim.action, anim.action_slot)] if anim.action else []
    pairs += [(s.action, s.action_slot) for t in anim.nla_tracks for s in t.strips]
    for action, slot in pairs:
        bag = action_get_channelbag_for_slot(action, slot)
        for fc in bag.fcurves if bag else []:
            co = _get(fc.keyframe_points, "co", 2)
            out[f"{action.name}|{fc.data_path}|{fc.array_index}"] = co / [fps, 1.0]
    return out


def snapshot() -> dict[str, Any]:
    bpy.context.view_layer.update()  # world matrices are stale until the depsgraph runs
    objects = [o for o in bpy.context.scene.objects]
    snap: dict[str, Any] = {
        "types": sorted(o.type for o in objects),
        "bones": sorted(b.name for o in objects if o.type == "ARMATURE" for b in o.data.bones),
        "meshes": {},
        "curves": {},
        "fps": bpy.context.scene.render.fps / bpy.context.scene.render.fps_base,
    }
    for o in objects:
        owner = "<armature>" if o.type == "ARMATURE" else o.name  # armatures take the file's name
        snap["curves"].update({f"{owner}|{k}": v for k, v in _curves(o).items()})
        if o.type != "MESH":
            continue
        me = o.data
        entry: dict[str, Any] = {
            "world": np.array(o.matrix_world),
            "co": _get(me.vertices, "co", 3),
            "corners": _get(me.loops, "vertex_index", 1, np.int32),
            "normals": _get(me.corner_normals, "vector", 3),
            "uvs": [_get(layer.uv, "vector", 2) for layer in me.uv_layers],
        }
        groups = {}
        for g in o.vertex_groups:
            w = np.zeros(len(me.vertices))
            for v in me.vertices:
                for e in v.groups:
                    if e.group == g.index:
                        w[v.index] = e.weight
            if w.any():  # an empty group holds no weights (the writer keeps weightless bones)
                groups[g.name] = w
        entry["groups"] = groups
        attr = me.attributes.get("cloth_spring")
        if attr is not None:
            marked = _get(attr.data, "value", 1, bool)
            edges = _get(me.edges, "vertices", 2, np.int32)[marked]
            entry["springs"] = {tuple(sorted(e)) for e in edges.tolist()}
        if me.shape_keys is not None:
            entry["keys"] = {b.name: _get(b.data, "co", 3) for b in me.shape_keys.key_blocks}
            snap["curves"].update({f"{o.name}|{k}": v for k, v in _curves(me.shape_keys).items()})
        snap["meshes"][o.name] = entry
    return snap


def assert_same(a: dict[str, Any], b: dict[str, Any], tick_seconds: float) -> None:
    assert a["types"] == b["types"]
    assert a["bones"] == b["bones"]
    assert sorted(a["meshes"]) == sorted(b["meshes"])
    for name, x in a["meshes"].items():
        y = b["meshes"][name]
        np.testing.assert_allclose(y["co"], x["co"], rtol=1e-6, atol=1e-6, err_msg=name)
        np.testing.assert_allclose(y["world"], x["world"], rtol=1e-6, atol=1e-6, err_msg=name)
        np.testing.assert_array_equal(y["corners"], x["corners"], err_msg=name)
        # Blender keeps custom normals as two 16-bit angles against each corner's automatic
        # normal: each import re-quantises them (measured up to 6e-4, 0.03 degrees)
        np.testing.assert_allclose(y["normals"], x["normals"], atol=1e-3, err_msg=name)
        assert len(y["uvs"]) == len(x["uvs"])
        for u, v in zip(x["uvs"], y["uvs"], strict=True):
            np.testing.assert_allclose(v, u, atol=1e-6, err_msg=name)
        assert sorted(y["groups"]) == sorted(x["groups"]), name
        for g, w in x["groups"].items():
            np.testing.assert_allclose(y["groups"][g], w, atol=1e-6, err_msg=f"{name}/{g}")
        assert y.get("springs") == x.get("springs"), name
        assert sorted(y.get("keys", {})) == sorted(x.get("keys", {})), name
        for k, co in x.get("keys", {}).items():
            np.testing.assert_allclose(y["keys"][k], co, rtol=1e-6, atol=1e-6)
    assert sorted(a["curves"]) == sorted(b["curves"])
    for k, co in a["curves"].items():
        got = b["curves"][k]
        assert got.shape == co.shape, k
        np.testing.assert_allclose(got[:, 0], co[:, 0], atol=tick_seconds, err_msg=k)
        np.testing.assert_allclose(got[:, 1], co[:, 1], atol=2e-5, err_msg=k)


def file_keys(path: Path) -> dict[str, np.ndarray]:
    """Every AnimationKey of a file: (frame, key type) -> times and values."""
    from xof.addon.xfile import read, scene_of

    out = {}
    for aset in scene_of(read(path)).animation_sets:
        for anim in aset.animations:
            for track in anim.tracks:
                key = f"{aset.name}|{anim.frame_name}|{track.key_type}"
                out[key] = np.column_stack([track.times, track.values])
    return out


def round_trip(source: Path, tmp: Path, fmt: str, bits: int) -> tuple[dict, dict, Any]:
    fresh()
    import_files([source])
    before = snapshot()
    out = tmp / f"{source.stem}.{fmt}{bits}.x"
    result = export_scene(str(out), ExportOptions(format=fmt, float_bits=bits))
    fresh()
    import_files([out])
    after = snapshot()
    return before, after, result


CORPUS_FILES = sorted(
    p.name
    for p in (CORPUS.glob("*") if CORPUS.is_dir() else [])
    if p.suffix.lower() == ".x" and p.name not in SKIP
)


@pytest.mark.corpus
@pytest.mark.parametrize("fmt,bits", COMBOS)
@pytest.mark.parametrize("name", CORPUS_FILES or ["<no corpus>"])
def test_corpus_round_trips(corpus: Path, tmp_path: Path, name: str, fmt: str, bits: int) -> None:
    """Every corpus file, in text, binary and compressed files, with 32- and 64-bit floats."""
    before, after, _ = round_trip(corpus / name, tmp_path, fmt, bits)
    assert before["meshes"] or before["curves"], name
    assert_same(before, after, 1.0 / 4800)
