"""Apply a file's AnimationSets to an existing armature, matching frames to bones by name.

For animation-only files (no mesh: frames named as in another file's skeleton). Names match
bones exactly, after a prefix to strip, or by an unambiguous suffix (:mod:`.name_match`,
reported); names the armature lacks are reported and skipped; the rest imports as when the
character was loaded.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import bpy
import numpy as np

from ...xfile.views.model import SceneData, depth_first
from ..imp.context import ImportOptions
from ..imp.options import AnimationOptions
from ..rig.skeleton import SpaceConversion
from .animation import build_actions, targets_from_armature
from .name_match import match_names
from .step import timing_and_sets


@dataclass(eq=False)
class AnimationImport:
    actions: list[bpy.types.Action] = field(default_factory=list)
    matched: list[str] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # the tick rate chosen, sets together


def frame_locals(data: SceneData) -> dict[str, np.ndarray]:
    """Frame name -> its file matrix (first of a name)."""
    out: dict[str, np.ndarray] = {}
    for frame in depth_first(data.frames):
        if frame.name is not None:
            out.setdefault(frame.name, np.asarray(frame.matrix, dtype=np.float64))
    return out


def apply_animation(
    data: SceneData,
    armature: bpy.types.Object,
    conversion: SpaceConversion,
    scene: bpy.types.Scene,
    scene_timing: bool = True,
    options: AnimationOptions | None = None,
) -> AnimationImport:
    """Actions for ``data``'s sets on ``armature`` (first plays, others on NLA tracks; all
    play when they key disjoint bones). ``options``: the tick rate and sets choices (their
    ``scene_timing`` is the argument's)."""
    if armature.type != "ARMATURE":
        raise ValueError(f"{armature.name!r} is not an armature")
    out = AnimationImport()
    opts = replace(options or AnimationOptions(), scene_timing=scene_timing)
    names = sorted(
        {a.frame_name for s in data.animation_sets for a in s.animations if a.frame_name}
    )
    bones = armature.data.bones  # type: ignore[union-attr]
    match = match_names(names, [b.name for b in bones], opts.strip_prefix)
    out.notes.extend(match.notes())
    by_file = frame_locals(data)
    file_locals = {bone: by_file[name] for name, bone in match.bones.items() if name in by_file}
    targets = targets_from_armature(armature, conversion, file_locals)
    targets.bones = {name: targets.bones[bone] for name, bone in match.bones.items()}
    out.matched = [n for n in names if n in targets.bones]
    out.unmatched = [n for n in names if n not in targets.bones]
    if out.unmatched:
        out.warnings.append(
            f"{len(out.unmatched)} animated frame(s) have no bone in {armature.name!r}: "
            + ", ".join(out.unmatched[:10])
        )
        targets.skipped.update(out.unmatched)
    if not data.animation_sets:
        out.warnings.append("the file has no AnimationSet")
        return out
    rate, together = timing_and_sets(data, scene, opts, out.notes)
    out.actions, warnings = build_actions(
        data, targets, conversion, scene, scene_timing, opts.slerp_step, rate.ticks_per_second,
        together,
    )  # fmt: skip
    out.warnings.extend(warnings)
    return out


def import_animation_file(
    path: str | Path,
    armature: bpy.types.Object,
    options: ImportOptions | None = None,
    scene_timing: bool = True,
) -> AnimationImport:
    """Read ``path`` and apply its animation to ``armature`` (see :func:`apply_animation`)."""
    from ...xfile import read, scene_of

    options = options or ImportOptions()
    data = scene_of(read(str(path)))
    scene = bpy.context.scene
    assert scene is not None
    result = apply_animation(
        data, armature, options.conversion(), scene, scene_timing, options.animation
    )
    result.warnings[:0] = list(data.warnings)
    return result
