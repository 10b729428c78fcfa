"""Pins teleported in one frame carry the cloth with them instead of tearing it.

An object moved 1e8 m in one frame (or pinned targets that jump) drags its pinned points
there; the free points could only follow faster than ``max_speed``, which the guard calls an
explosion, and restoring the last good state would leave springs 1e8 m long to the pins. So a
jump the cloth cannot follow is treated as a move of the whole piece: the best-fit rigid
transform of the pins' old -> new positions (Kabsch) is applied to every point (velocities
rotated with it), then the frame is simulated from there.
"""

from __future__ import annotations

import numpy as np

# A pin moving faster than this fraction of ``max_speed`` over one frame would drag free
# points at about the guard's limit: the cloth cannot follow it.
FOLLOWABLE_SPEED_FRACTION = 0.5


def jump_too_far(old: np.ndarray, new: np.ndarray, frame_dt: float, max_speed: float) -> bool:
    """True when some pin moves farther in ``frame_dt`` than the cloth can follow."""
    if not old.size:
        return False
    step = np.asarray(new, np.float64) - np.asarray(old, np.float64)
    farthest = float(np.sqrt((step * step).sum(axis=1).max()))
    return farthest > FOLLOWABLE_SPEED_FRACTION * max_speed * frame_dt


def best_rigid_transform(old: np.ndarray, new: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rotation ``R`` (3, 3) and translation ``t`` minimising ``|R @ old + t - new|``.

    One pin gives a pure translation; pins on a line leave the turn about that line free
    (the smallest turn that fits is taken).
    """
    old = np.asarray(old, np.float64).reshape(-1, 3)
    new = np.asarray(new, np.float64).reshape(-1, 3)
    old_centre, new_centre = old.mean(axis=0), new.mean(axis=0)
    cross = (old - old_centre).T @ (new - new_centre)
    u, _, vt = np.linalg.svd(cross)
    flip = np.sign(np.linalg.det(vt.T @ u.T)) or 1.0
    rotation = vt.T @ np.diag([1.0, 1.0, flip]) @ u.T
    if not np.isfinite(rotation).all():
        rotation = np.eye(3)
    return rotation, new_centre - rotation @ old_centre


def carry(
    pos: np.ndarray,
    vel: np.ndarray,
    rotation: np.ndarray,
    translation: np.ndarray,
) -> None:
    """Every row of the ``(N, 4)`` state moved rigidly; velocities turned with it."""
    points = pos[:, :3].astype(np.float64) @ rotation.T + translation
    pos[:, :3] = points
    vel[:, :3] = vel[:, :3].astype(np.float64) @ rotation.T
