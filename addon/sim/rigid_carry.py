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

from .mesh.affine import transform_points

# A pin moving faster than this fraction of ``max_speed`` over one frame would drag free
# points at about the guard's limit: the cloth cannot follow it.
FOLLOWABLE_SPEED_FRACTION = 0.5
SAME_PLACE = 1e-9  # pins spread less than this (relative to their coordinates): one place
ON_A_LINE = 1e-6  # second spread of the pins below this x the first: they lie on a line


def jump_too_far(old: np.ndarray, new: np.ndarray, frame_dt: float, max_speed: float) -> bool:
    """True when some pin moves farther in ``frame_dt`` than the cloth can follow."""
    if not old.size:
        return False
    step = np.asarray(new, np.float64) - np.asarray(old, np.float64)
    farthest = float(np.sqrt((step * step).sum(axis=1).max()))
    return farthest > FOLLOWABLE_SPEED_FRACTION * max_speed * frame_dt


def best_rigid_transform(old: np.ndarray, new: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rotation ``R`` (3, 3) and translation ``t`` minimising ``|R @ old + t - new|``.

    One pin (or pins all in one place) gives a pure shift. Pins on a line leave the turn
    about that line free, and an SVD would pick one at random (a cloth hanging from two pins
    that stay put could spin about them): the smallest turn taking the old line to the new
    one is used instead.
    """
    old = np.asarray(old, np.float64).reshape(-1, 3)
    new = np.asarray(new, np.float64).reshape(-1, 3)
    old_centre, new_centre = old.mean(axis=0), new.mean(axis=0)
    a, b = old - old_centre, new - new_centre
    spread = np.linalg.svd(a, compute_uv=False)
    rotation = np.eye(3)
    if spread.size and spread[0] > SAME_PLACE * (1.0 + float(np.abs(old).max())):
        if spread.size < 2 or spread[1] <= ON_A_LINE * spread[0]:
            far = int(np.argmax((a * a).sum(axis=1)))
            rotation = smallest_turn(a[far], b[far])
        else:
            u, _, vt = np.linalg.svd(a.T @ b)
            flip = np.sign(np.linalg.det(vt.T @ u.T)) or 1.0
            rotation = vt.T @ np.diag([1.0, 1.0, flip]) @ u.T
    if not np.isfinite(rotation).all():
        rotation = np.eye(3)
    return rotation, new_centre - rotation @ old_centre


def smallest_turn(start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """The rotation by the smallest angle turning direction ``start`` to direction ``end``."""
    length_start, length_end = np.linalg.norm(start), np.linalg.norm(end)
    if not (length_start > 0.0 and length_end > 0.0):
        return np.eye(3)
    u, v = start / length_start, end / length_end
    axis = np.cross(u, v)
    sin, cos = float(np.linalg.norm(axis)), float(u @ v)
    if sin <= 1e-12:
        if cos > 0.0:
            return np.eye(3)
        # half a turn about any axis square to u
        other = np.eye(3)[int(np.argmin(np.abs(u)))]
        axis = np.cross(u, other)
        axis /= np.linalg.norm(axis)
        return 2.0 * np.outer(axis, axis) - np.eye(3)
    k = _cross_matrix(axis / sin)
    return np.eye(3) + sin * k + (1.0 - cos) * (k @ k)


def _cross_matrix(axis: np.ndarray) -> np.ndarray:
    x, y, z = axis
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


def carry(
    pos: np.ndarray,
    vel: np.ndarray,
    rotation: np.ndarray,
    translation: np.ndarray,
) -> None:
    """Every row of the ``(N, 4)`` state moved rigidly; velocities turned with it."""
    # column updates, not ``@``: a 40k x 3 x 3 product wakes OpenBLAS's second thread
    move = np.eye(4)
    move[:3, :3], move[:3, 3] = rotation, translation
    pos[:, :3] = transform_points(move, pos[:, :3], np.float64)
    move[:3, 3] = 0.0
    vel[:, :3] = transform_points(move, vel[:, :3], np.float64)
