"""Matrices Blender cannot hold, set aside before the build (no bpy).

A frame matrix or a bone offset that is NaN, infinite or past float32 (a value of 1e300 in
a text file) cannot be stored in Blender, and its products overflow through the rig's
arithmetic. Such a frame matrix becomes the identity; such an offset becomes NaN, which
the rig already treats as no offset (the bone's bind then comes from its frames). The
view's arrays are replaced, not written (the document keeps the file's values).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...xfile.views.model import SceneData, depth_first

FLOAT32_MAX = float(np.finfo(np.float32).max)


def _unusable(m: np.ndarray) -> bool:
    with np.errstate(invalid="ignore"):
        return not bool(np.all(np.abs(m) <= FLOAT32_MAX))  # NaN compares False


def finite_matrices(scene: SceneData) -> list[str]:
    """Set unusable frame matrices to the identity and unusable skin offsets to NaN; one
    warning for each kind, naming up to five."""
    frames = [f for f in depth_first(scene.frames) if _unusable(np.asarray(f.matrix))]
    for frame in frames:
        frame.matrix = np.eye(4)
    offsets = []
    for mesh in scene.all_meshes():
        for sw in mesh.skin.weights if mesh.skin is not None else []:
            if _unusable(np.asarray(sw.offset)):
                sw.offset = np.full((4, 4), np.nan)
                offsets.append(sw.frame_name)
    warnings = []
    if frames:
        names = _names([f.name for f in frames])
        warnings.append(
            f"{len(frames)} frame matrix(es) not finite or past 32-bit floats: identity used "
            f"({names})"
        )
    if offsets:
        warnings.append(
            f"{len(offsets)} bone offset(s) not finite or past 32-bit floats: those bones' "
            f"binds come from their frames ({_names(offsets)})"
        )
    return warnings


def _names(names: Sequence[str | None]) -> str:
    shown = [repr(n) if n else "unnamed" for n in names[:5]]
    return ", ".join(shown) + (", ..." if len(names) > 5 else "")
