"""The import of lip-sync files: each PhonemeSequence as a shape-key action on the face.

The face is a mesh of this import with shape keys named as the map's targets (facial
targets imported with Targets as Shape Keys), else the active object when it has such keys
(added with "Add Shape Keys from .X"). The first sequence plays; others wait on NLA tracks.
Without a face the sequence stays unimported and the report says what to select.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import bpy
import numpy as np

from ...xfile.errors import printable
from ..anim.timing import MAX_FRAME
from . import actions as morph_actions
from .phonemes import parse_map, phoneme_curves, read_sequence

if TYPE_CHECKING:
    from ..imp.context import BuildContext


def _has_targets(obj: bpy.types.Object | None, targets: set[str]) -> bool:
    if obj is None or obj.type != "MESH":
        return False
    key = obj.data.shape_keys  # type: ignore[union-attr]
    return key is not None and any(b.name in targets for b in key.key_blocks[1:])


def face_object(ctx: BuildContext, targets: set[str]) -> bpy.types.Object | None:
    for obj in ctx.mesh_objects.values():
        if _has_targets(obj, targets):
            return obj
    active = bpy.context.view_layer.objects.active if bpy.context.view_layer else None
    return active if _has_targets(active, targets) else None


def import_lipsync(ctx: BuildContext) -> None:
    sequences = [o for o in ctx.scene.extras if o.template == "PhonemeSequence"]
    if not sequences:
        return
    targets, note = parse_map(ctx.options.morphs.phoneme_map)
    if note:
        ctx.result.notes.append(note)
    face = face_object(ctx, set(targets))
    if face is None:
        ctx.warn(
            "PhonemeSequence: no face to drive; select the mesh with the facial targets as "
            "shape keys (neutral, aaa, eee...; Add Shape Keys from .X adds them) and import again"
        )
        return
    key = face.data.shape_keys  # type: ignore[union-attr]
    assert key is not None
    scene = ctx.blender_scene or bpy.context.scene
    assert scene is not None
    fps = float(scene.render.fps) / float(scene.render.fps_base or 1.0)
    blocks = {b.name for b in key.key_blocks[1:]}
    basis = key.reference_key.name
    played = False
    for number, obj in enumerate(sequences):
        try:
            keys = read_sequence(obj.members)
        except ValueError as exc:
            where = ":".join(p for p in (printable(Path(ctx.filepath or "").name), obj.where) if p)
            ctx.warn(f"{where}: {exc}")
            continue
        name = obj.name or ("LipSync" if number == 0 else f"LipSync.{number:03d}")
        curves, missing = phoneme_curves(
            keys, targets, blocks, fps, float(scene.frame_start), name, basis
        )
        action, slot = morph_actions.new_morph_action(key, curves)
        ctx.track(action)
        if not played:
            morph_actions.make_active(key, action, slot)
            played = True
            if ctx.options.animation.scene_timing and not ctx.scene.animation_sets:
                end = np.clip(np.ceil(curves.end_frame), scene.frame_start + 1, MAX_FRAME)
                scene.frame_end = int(end)  # a time past Blender's last frame: its last
        else:
            morph_actions.push_to_nla(key, action, slot, curves.name)
        ctx.scene.extras.remove(obj)
        text = (
            f"PhonemeSequence of {len(keys.index)} phonemes as action {action.name!r} "
            f"on {face.name!r}"
        )
        if missing:
            text += f"; targets with no shape key (left at 0): {', '.join(missing)}"
        ctx.result.notes.append(text)
