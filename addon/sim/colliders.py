"""Sphere and plane colliders, vectorised over all points.

Positions are the solvers' storage: ``(N, 4)`` rows (x, y, z, 0), float32 or float64. A collider
only finds contacts (which points, the outward normal, how far to push); the two ways of
answering a contact are shared: ``resolve_positions`` for the position-based solver (friction
limits the tangential motion made this substep to what Coulomb's law allows for the push,
so the velocity derived from positions is adjusted too) and ``resolve_velocities`` for the
classic solver (the book's: push out, cancel the inward normal velocity, scale the tangential
one).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from .rows import dot_rows, squared_lengths

Contacts = tuple[np.ndarray, np.ndarray, np.ndarray]  # indices (k,), normals (k, 4), push (k,)


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
        c = np.zeros(4, dtype=pos.dtype)
        c[:3] = self.center
        d = np.subtract(pos, c, out=work.rows)
        dist2 = squared_lengths(d, work.values, d)
        idx = np.flatnonzero(np.less(dist2, reach * reach, out=work.mask))
        d = pos[idx] - c
        dist = np.sqrt(dist2[idx])
        centred = dist <= 1e-12
        normals = d / np.where(centred, 1.0, dist)[:, None]
        normals[centred] = np.array([0.0, 0.0, 1.0, 0.0], dtype=pos.dtype)
        return idx, normals, (reach - dist).astype(pos.dtype)


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
        n = np.zeros(4, dtype=pos.dtype)
        n[:3] = self.normal
        offset = float(self.normal @ self.point) + margin
        height = dot_rows(pos, self.normal, work.values)
        idx = np.flatnonzero(np.less(height, offset, out=work.mask))
        push = (offset - height[idx]).astype(pos.dtype)
        normals = np.repeat(n[None, :], idx.size, axis=0)
        return idx, normals, push


def _friction(collider: Collider, default: float) -> float:
    value = default if collider.friction is None else collider.friction
    return min(max(float(value), 0.0), 1.0)


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

    ``movable`` is a boolean ``(N,)`` mask. Returns the number of contacts.
    """
    total = 0
    for collider in colliders:
        idx, normals, push = collider.contacts(pos, margin, scratch)
        keep = movable[idx]
        idx, normals, push = idx[keep], normals[keep], push[keep]
        if not idx.size:
            continue
        total += idx.size
        p = pos[idx] + normals * push[:, None]
        mu = _friction(collider, friction)
        if mu > 0.0:
            # Coulomb: static while the tangential slip is within mu * push, else slowed by it
            moved = p - prev[idx]
            along = np.einsum("ij,ij->i", moved, normals)
            tangential = moved - normals * along[:, None]
            slip = np.sqrt(np.einsum("ij,ij->i", tangential, tangential))
            limit = mu * push
            cut = np.where(slip <= limit, 1.0, limit / np.maximum(slip, 1e-30))
            p -= tangential * cut[:, None].astype(p.dtype)
        pos[idx] = p
    return total


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
        idx, normals, push = collider.contacts(pos, margin)
        keep = movable[idx]
        idx, normals, push = idx[keep], normals[keep], push[keep]
        if not idx.size:
            continue
        total += idx.size
        pos[idx] += normals * push[:, None]
        v = vel[idx]
        along = np.einsum("ij,ij->i", v, normals)
        normal_part = normals * np.minimum(along, 0.0)[:, None]
        tangential = v - normals * along[:, None]
        mu = _friction(collider, friction)
        vel[idx] = v - normal_part - mu * tangential
    return total
