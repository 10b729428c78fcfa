"""Shape-key animation -> MorphAnimationSets plus one target Mesh per key block.

The importer keys each block 1 at the times its mesh is shown and 0 elsewhere; so at every
key frame the shown mesh is the block at 1 (the Basis when none is). Key blocks that blend
(values between 0 and 1) are written as the block that weighs most, with a warning.
"""

from __future__ import annotations

import re

import bpy
import numpy as np

from ...xfile.document import XObject
from ...xfile.writer import objects as xo
from .animation_export import _key_frames, action_slots, fcurves_of
from .bake_export import is_cloth_bake, kept_frames, pc2_bake
from .mesh_export import MeshExport
from .plan.names import NameTable
from .space import FileSpace


def _baked_frames(frames: np.ndarray, curves: dict[str, bpy.types.FCurve], step: int) -> np.ndarray:
    """The frames where a bake's key is shown (at 1), every ``step``-th and the last, after
    the first frame that shows the Basis (the morph set's first key names its base mesh)."""
    shown = np.array([any(fc.evaluate(float(f)) >= 0.5 for fc in curves.values()) for f in frames])
    if not shown.any():
        return frames
    baked = frames[shown]
    lead = frames[~shown][:1]
    return np.concatenate([lead[lead < baked[0]], baked[kept_frames(len(baked), step)]])


_BLOCK_PATH = re.compile(r'^key_blocks\["((?:[^"\\]|\\.)*)"\]\.value$')


def mesh_has_morphs(obj: bpy.types.Object) -> bool:
    """Animated shape keys or a .pc2 bake: what a morph set would carry."""
    key = getattr(obj.data, "shape_keys", None)
    return (key is not None and bool(action_slots(key))) or pc2_bake(obj) is not None


def morph_data(
    obj: bpy.types.Object, built: MeshExport, names: NameTable, space: FileSpace,
    fps: float, frame_start: float, warnings: list[str], bake_step: int = 1,
) -> tuple[list[XObject], list[tuple[str, list[tuple[int, str]], bool]]]:  # fmt: skip
    """(target meshes, sets as (name, [(ms, mesh name)], loops)).

    A cloth bake's shape keys are written at their baked frames, one every ``bake_step``."""
    mesh = obj.data
    assert isinstance(mesh, bpy.types.Mesh)
    key = mesh.shape_keys
    if key is None or len(key.key_blocks) < 2:
        return [], []
    basis = key.reference_key
    base_name = built.obj.name or basis.name
    slots = action_slots(key)
    if not slots:
        warnings.append(f"{obj.name}: shape keys without animation are not written")
        return [], []
    block_mesh = {basis.name: base_name}
    targets: list[XObject] = []
    sets = []
    for action, slot in slots:
        curves = {}
        for fc in fcurves_of(action, slot):
            m = _BLOCK_PATH.match(fc.data_path)
            if m and m.group(1) in key.key_blocks:
                curves[m.group(1)] = fc
        frames, _, cyclic = _key_frames(list(curves.values()))
        if is_cloth_bake(list(curves)):
            frames = _baked_frames(frames, curves, bake_step)
        cyclic |= bool(action.use_cyclic)
        keys: list[tuple[int, str]] = []
        blended = 0
        for f in frames.tolist():
            values = {b: fc.evaluate(f) for b, fc in curves.items()}
            shown, weight = max(values.items(), key=lambda kv: kv[1], default=(basis.name, 0.0))
            blended += any(0.0 < v < 1.0 for v in values.values())
            if weight < 0.5:
                shown = basis.name
            if shown not in block_mesh:
                block = key.key_blocks[shown]
                co = np.empty(len(block.data) * 3, dtype=np.float32)
                block.data.foreach_get("co", co)
                positions = space.positions(co.reshape(-1, 3).astype(np.float64)[built.vmap.source])
                target = names.get("mesh", f"{obj.name}/{shown}", shown)
                targets.append(xo.mesh(target, positions, built.sizes, built.file_corners))
                block_mesh[shown] = target
            ms = round((f - frame_start) * 1000.0 / fps)
            keys.append((max(ms, 0), block_mesh[shown]))
        if blended:
            warnings.append(
                f"morph set {action.name!r}: {blended} key(s) blend several shape keys; "
                "written as the strongest one"
            )
        if keys:
            sets.append((action.name, keys, cyclic))
    return targets, sets
