"""A baked simulation -> a MorphAnimationSet: one key mesh every ``step`` baked frames.

Two bakes exist (:mod:`..cloth.bake`): per-frame shape keys (written by the morph export,
thinned here to every ``step`` frames) and a ``.pc2`` file played by the "xof Cloth Cache"
Mesh Cache modifier; its frames are the final object-space positions (after the skin), so a
mesh that plays one is written without SkinWeights: the morph set alone moves it, in D3D
programs that play morph sets as in the importer (which then leaves live cloth off).
"""

from __future__ import annotations

import bpy
import numpy as np

from ...xfile.document import XObject
from ...xfile.writer import objects as xo
from ..cloth.bake import KEY_PREFIX, MODIFIER_NAME, read_pc2
from .mesh_export import MeshExport
from .plan.names import NameTable
from .space import FileSpace


def pc2_bake(obj: bpy.types.Object) -> bpy.types.Modifier | None:
    """The Mesh Cache modifier of xof's .pc2 bake on ``obj`` (shown in the viewport), if any."""
    mod = obj.modifiers.get(MODIFIER_NAME)
    if mod is None or mod.type != "MESH_CACHE" or not mod.show_viewport:
        return None
    return mod


def is_bake_modifier(mod: bpy.types.Modifier) -> bool:
    return mod.name == MODIFIER_NAME and mod.type == "MESH_CACHE"


def kept_frames(count: int, step: int) -> np.ndarray:
    """Indices of the baked frames written: every ``step``-th and always the last."""
    keep = np.arange(0, count, max(1, step))
    if count and keep[-1] != count - 1:
        keep = np.append(keep, count - 1)
    return keep


def is_cloth_bake(block_names: list[str]) -> bool:
    """Shape keys that are a cloth bake: every animated block is one of its frames."""
    return bool(block_names) and all(n.startswith(KEY_PREFIX) for n in block_names)


def pc2_morph(
    obj: bpy.types.Object, built: MeshExport, names: NameTable, space: FileSpace,
    fps: float, frame_start: float, step: int, warnings: list[str],
) -> tuple[list[XObject], list[tuple[str, list[tuple[int, str]], bool]]]:  # fmt: skip
    """(target meshes, [(set name, [(ms, mesh name)], loops)]) of the .pc2 bake on ``obj``."""
    mod = pc2_bake(obj)
    if mod is None:
        return [], []
    path = bpy.path.abspath(mod.filepath)  # type: ignore[attr-defined]
    try:
        _, rate, frames = read_pc2(path)
    except (OSError, ValueError) as exc:
        warnings.append(f"{obj.name}: the bake {path} cannot be read ({exc}): not written")
        return [], []
    if frames.shape[1] != len(built.vmap.first):
        warnings.append(f"{obj.name}: the bake {path} does not match the mesh: not written")
        return [], []
    first = float(mod.frame_start)  # type: ignore[attr-defined]
    targets: list[XObject] = []

    def ms(frame: float) -> int:
        return max(round((frame - frame_start) * 1000.0 / fps), 0)

    base = built.obj.name or obj.name
    keys: list[tuple[int, str]] = [(ms(first - 1.0), base)]  # the first key names the base
    for i in kept_frames(len(frames), step).tolist():
        frame = first + i * (rate or 1.0)
        label = f"{KEY_PREFIX}{round(frame):04d}"
        target = names.get("mesh", f"{obj.name}/{label}", label)
        positions = space.positions(frames[i].astype(np.float64)[built.vmap.source])
        targets.append(xo.mesh(target, positions, built.sizes, built.file_corners))
        keys.append((ms(frame), target))
    return targets, [(f"{obj.name} cloth bake", keys, False)]
