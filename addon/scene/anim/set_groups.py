"""Whether a file's AnimationSets are parts of one motion: each keys its own bones (no bpy).

Files made for blending (a torso set, one per arm, one per leg) hold several sets that key
disjoint groups of frames and are meant to play at once; sets of whole-body motions (walk,
run) key the same frames and are alternatives.
"""

from __future__ import annotations

from ...xfile.views.model import AnimationSetData, SceneData


def keyed_frames(aset: AnimationSetData) -> set[str]:
    """Names of the frames a set keys (animations without keys or a name do not count)."""
    return {
        a.frame_name
        for a in aset.animations
        if a.frame_name is not None and any(len(t.times) for t in a.tracks)
    }


def sets_key_disjoint_frames(data: SceneData) -> bool:
    """True when there are at least two sets, each keys some frame, and no frame is keyed by
    two of them."""
    groups = [keyed_frames(s) for s in data.animation_sets]
    if len(groups) < 2 or not all(groups):
        return False
    seen: set[str] = set()
    for group in groups:
        if group & seen:
            return False
        seen |= group
    return True
