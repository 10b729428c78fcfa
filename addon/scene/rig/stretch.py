"""The stretch a skinned mesh's own frame puts into its offsets, factored out (numpy only).

In Blender's column convention a SkinWeights' ``matrixOffset`` is ``O_b = B_b^-1 @ M``: ``M``
the mesh frame's combined matrix, ``B_b`` the bone's bind (rigid in real files). When ``M``
scales (non-uniformly, or mirrors), ``inverse(O_b)`` is not rigid; a Blender bone cannot hold
that at rest and its pose would need shear. So the mesh carries a common matrix ``X`` with
``O_b @ X^-1`` rigid for all its bones: the bones bind at ``X @ O_b^-1`` (rigid), the mesh
object sits at ``X``, and ``C_b @ bind_b^-1 @ X == C_b @ O_b`` skins exactly as D3D does.

``X`` is the mesh frame's matrix when that factors the offsets (the file's own placement),
else the offsets' common symmetric stretch (their polar factor), negated when they mirror.
Offsets that are rotations but for a mirror need no ``X``: a mirrored bind keeps its mirror
in the bone's pose (a negative scale Blender stores), and files round-trip as they were.
"""

from __future__ import annotations

import numpy as np

from .rig_math import det3

#: |A^T A - I| below this (per entry) counts as a rotation: file values carry ~7 digits
RIGID_TOLERANCE = 1e-4


def rigid(m3: np.ndarray, tolerance: float = RIGID_TOLERANCE) -> np.ndarray:
    """(..., 3, 3) -> (...,) bool: proper rotations within ``tolerance``."""
    m3 = np.asarray(m3, dtype=np.float64)
    gram = np.swapaxes(m3, -1, -2) @ m3
    off = np.max(np.abs(gram - np.eye(3)), axis=(-1, -2))
    return (off <= tolerance) & (det3(m3) > 0.0)


def storable(x: np.ndarray, tolerance: float = RIGID_TOLERANCE) -> bool:
    """True when the 4x4 ``x`` is location @ rotation @ scale (an object matrix): no shear."""
    m3 = np.asarray(x, dtype=np.float64)[:3, :3]
    gram = m3.T @ m3
    diag = np.sqrt(np.abs(np.diag(gram)))
    scale = np.outer(diag, diag)
    off = np.abs(gram - np.diag(np.diag(gram)))
    return bool(np.all(off <= tolerance * np.maximum(scale, 1e-300)))


def mesh_stretch(
    offsets: np.ndarray, frame_world: np.ndarray | None = None
) -> tuple[np.ndarray, str | None]:
    """The matrix ``X`` a skinned mesh carries, and a note when no common one exists.

    ``offsets``: (k, 4, 4) Blender-space offsets of one mesh's bones; ``frame_world``: the
    mesh frame's combined matrix (Blender space) or None. Identity when the offsets are rigid
    already, or when they share no common stretch (bones then keep it, as before).
    """
    offsets = np.asarray(offsets, dtype=np.float64).reshape(-1, 4, 4)
    if not len(offsets):
        return np.eye(4), None
    a = offsets[:, :3, :3]
    if bool(np.all(rigid(a))) or bool(np.all(rigid(a * np.sign(det3(a))[:, None, None]))):
        return np.eye(4), None  # rigid, or rigid but for a mirror (see the module docstring)
    if frame_world is not None and np.all(np.isfinite(frame_world)):
        m = np.asarray(frame_world, dtype=np.float64)
        if abs(float(det3(m[:3, :3]))) > 1e-12 and bool(
            np.all(rigid(a @ np.linalg.inv(m[:3, :3])))
        ):
            return m.copy(), None
    signs = np.sign(det3(a))
    if not (np.all(signs > 0) or np.all(signs < 0)):
        return np.eye(4), "its bone offsets mix mirrored and unmirrored bones"
    gram = np.mean(np.swapaxes(a, -1, -2) @ a, axis=0)
    values, vectors = np.linalg.eigh(gram)
    if float(values.min()) <= 1e-24:
        return np.eye(4), None
    stretch = (vectors * np.sqrt(values)) @ vectors.T  # symmetric positive square root
    if signs[0] < 0:
        stretch = -stretch  # det(-P) < 0 in 3D: the rest is a proper rotation
    if not bool(np.all(rigid(a @ np.linalg.inv(stretch)))):
        return np.eye(4), "its bone offsets share no common scale"
    x = np.eye(4)
    x[:3, :3] = stretch
    return x, None
