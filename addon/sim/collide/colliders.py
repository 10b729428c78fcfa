"""Sphere and plane colliders, vectorised over all points.

Positions are the solvers' storage: ``(N, 4)`` rows (x, y, z, 0), float32 or float64. A collider
only finds contacts (which points, the outward normals as ``(3, k)`` columns, how far to push:
per-contact scalars broadcast along the long axis, which numpy does ~10x faster than over a
length-4 row); the two ways of
answering a contact are shared: ``resolve_positions`` for the position-based solver (friction
limits the tangential motion made this substep to what Coulomb's law allows for the push,
so the velocity derived from positions is adjusted too) and ``resolve_velocities`` for the
classic solver (the book's: push out, cancel the inward normal velocity, scale the tangential
one).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from ..mesh.rows import dot_rows, put_columns, put_rows, squared_lengths, take_columns, take_rows

TINY_SQUARED = 1e-30  # keeps a zero slip finite: 0 / tiny, then capped at 1
Contacts = tuple[np.ndarray, np.ndarray, np.ndarray]  # indices (k,), normals (3, k), push (k,)


class Collider(Protocol):
    friction: float | None

    def contacts(
        self, pos: np.ndarray, margin: float, scratch: Scratch | None = None
    ) -> Contacts: ...


class Scratch:
    """Work buffers for finding contacts among N points without allocating per call.

    (Temporaries over ~128 KB make glibc map and unmap memory on every call.)
    """

    def __init__(self, count: int, dtype: type = np.float32) -> None:
        self.rows: np.ndarray = np.empty((count, 4), dtype=dtype)
        self.values: np.ndarray = np.empty(count, dtype=dtype)
        self.mask: np.ndarray = np.empty(count, dtype=bool)

    def fits(self, pos: np.ndarray) -> bool:
        return self.rows.shape == pos.shape and self.rows.dtype == pos.dtype


def _work(pos: np.ndarray, scratch: Scratch | None) -> Scratch:
    return scratch if scratch is not None and scratch.fits(pos) else Scratch(len(pos), pos.dtype)


def _vector3(value: np.ndarray | list[float] | tuple[float, ...], name: str) -> np.ndarray:
    vec = np.array(value, dtype=np.float64).reshape(-1)
    if vec.size != 3 or not np.isfinite(vec).all():
        raise ValueError(f"{name} must be 3 finite numbers, got {value!r}")
    return vec


@dataclass
class Sphere:
    """Points are kept outside ``radius + margin`` of ``center``."""

    center: np.ndarray
    radius: float
    friction: float | None = None  # None: the simulation's friction setting

    def __post_init__(self) -> None:
        self.center = _vector3(self.center, "sphere center")
        self.radius = abs(float(self.radius))
        if not np.isfinite(self.radius):
            raise ValueError("sphere radius must be finite")

    def contacts(self, pos: np.ndarray, margin: float, scratch: Scratch | None = None) -> Contacts:
        work = _work(pos, scratch)
        reach = self.radius + margin
        dist2 = work.values  # per axis: a (4,) row broadcast over (N, 4) is ~10x slower
        part = work.rows.reshape(-1)[: len(pos)]
        for axis in range(3):
            target = dist2 if axis == 0 else part
            np.subtract(pos[:, axis], pos.dtype.type(self.center[axis]), out=target)
            np.multiply(target, target, out=target)
            if axis:
                dist2 += part
        idx = np.flatnonzero(np.less(dist2, reach * reach, out=work.mask))
        normals = take_columns(pos, idx)
        normals -= self.center.astype(pos.dtype)[:, None]
        dist = np.sqrt(dist2[idx])
        push = (reach - dist).astype(pos.dtype)
        centred = dist <= 1e-12
        if centred.any():
            normals[:, centred] = np.array([[0.0], [0.0], [1.0]], dtype=pos.dtype)
            dist[centred] = 1.0
        normals /= dist
        return idx, normals, push


@dataclass
class Plane:
    """Points are kept on the side ``normal`` points to, ``margin`` away from the plane."""

    point: np.ndarray
    normal: np.ndarray
    friction: float | None = None

    def __post_init__(self) -> None:
        self.point = _vector3(self.point, "plane point")
        normal = _vector3(self.normal, "plane normal")
        length = float(np.linalg.norm(normal))
        if length < 1e-12:
            raise ValueError("plane normal must not be zero")
        self.normal = normal / length

    def contacts(self, pos: np.ndarray, margin: float, scratch: Scratch | None = None) -> Contacts:
        work = _work(pos, scratch)
        offset = float(self.normal @ self.point) + margin
        height = dot_rows(pos, self.normal, work.values)
        idx = np.flatnonzero(np.less(height, offset, out=work.mask))
        push = (offset - height[idx]).astype(pos.dtype)
        normals = np.broadcast_to(self.normal.astype(pos.dtype)[:, None], (3, idx.size))
        return idx, normals, push


def begin_substep(colliders: tuple[Collider, ...], t0: float, t1: float) -> None:
    """Tell moving colliders that a substep takes them from fraction ``t0`` to ``t1`` of the
    frame (a mesh collider interpolates its poses; spheres and planes have nothing to do)."""
    for collider in colliders:
        begin = getattr(collider, "begin_substep", None)
        if begin is not None:
            begin(t0, t1)


def _friction(collider: Collider, default: float) -> float:
    value = default if collider.friction is None else collider.friction
    return min(max(float(value), 0.0), 1.0)


def _movable_only(contacts: Contacts, movable: np.ndarray) -> Contacts:
    idx, normals, push = contacts
    keep = movable[idx]
    if keep.all():
        return idx, normals, push
    return idx[keep], normals[:, keep], push[keep]


def resolve_positions(
    colliders: tuple[Collider, ...] | list[Collider],
    pos: np.ndarray,
    prev: np.ndarray,
    movable: np.ndarray,
    margin: float,
    friction: float,
    scratch: Scratch | None = None,
) -> int:
    """Push movable points out; friction (Coulomb, scaled by the push) slows their slip.

    ``movable`` is a boolean ``(N,)`` mask. Returns the number of contacts. The contacts'
    rows are gathered whole and updated one strided column at a time (a cloth resting on the
    floor has thousands of contacts every substep: transposed copies cost more than the maths).
    """
    total = 0
    for collider in colliders:
        own = getattr(collider, "resolve_positions", None)
        if own is not None:  # surfaces with their own response (mesh_collider, self_collision)
            total += own(pos, prev, movable, margin, friction, scratch)
            continue
        idx, normals, push = _movable_only(collider.contacts(pos, margin, scratch), movable)
        if not idx.size:
            continue
        total += idx.size
        rows = take_rows(pos, idx)
        axes = _normal_axes(normals)
        mu = _friction(collider, friction)
        if mu > 0.0:
            _limit_slip(rows, take_rows(prev, idx), axes, push, mu)
        for axis, component in axes:
            column = rows[:, axis]
            column += component * push
        put_rows(pos, idx, rows)
    return total


def _normal_axes(normals: np.ndarray) -> list[tuple[int, Any]]:
    """``(axis, component)`` of the contact normals; one normal for all (a plane's, a
    broadcast view) gives scalar components, its zero ones left out."""
    if normals.strides[1] == 0:
        first = normals[:, 0]
        return [(axis, first.dtype.type(first[axis])) for axis in range(3) if first[axis] != 0]
    return [(axis, normals[axis]) for axis in range(3)]


def _limit_slip(
    rows: np.ndarray,
    before: np.ndarray,
    axes: list[tuple[int, Any]],
    push: np.ndarray,
    mu: float,
) -> None:
    """Coulomb: the tangential motion of this substep is removed while it is within
    ``mu * push`` (static), else shortened by that much. The push is along the normal, so
    the tangential part is the same before and after it. ``before`` is overwritten."""
    moved = np.subtract(rows, before, out=before)
    along = np.zeros(len(rows), dtype=rows.dtype)
    for axis, component in axes:
        along += moved[:, axis] * component
    for axis, component in axes:
        column = moved[:, axis]
        column -= along * component
    slip = squared_lengths(moved, along, np.empty_like(moved))
    slip += TINY_SQUARED
    np.sqrt(slip, out=slip)
    cut = np.divide(push * rows.dtype.type(mu), slip, out=slip)
    np.minimum(cut, 1.0, out=cut)
    for axis in range(3):
        column = rows[:, axis]
        column -= moved[:, axis] * cut


def resolve_velocities(
    colliders: tuple[Collider, ...] | list[Collider],
    pos: np.ndarray,
    vel: np.ndarray,
    movable: np.ndarray,
    margin: float,
    friction: float,
) -> int:
    """Push movable points out, cancel inward normal velocity, scale the tangential part."""
    total = 0
    for collider in colliders:
        idx, normals, push = _movable_only(collider.contacts(pos, margin), movable)
        if not idx.size:
            continue
        total += idx.size
        p = take_columns(pos, idx)
        p += normals * push
        put_columns(pos, idx, p)
        v = take_columns(vel, idx)
        along = np.einsum("ij,ij->j", v, normals)
        normal_part = normals * np.minimum(along, 0.0)
        tangential = v - normals * along
        mu = _friction(collider, friction)
        put_columns(vel, idx, v - normal_part - mu * tangential)
    return total
