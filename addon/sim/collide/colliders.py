"""What a collider is (``Collider``), and the sphere and the plane, vectorised over all points.

Positions are the solvers' storage: ``(N, 4)`` rows (x, y, z, 0), float32 or float64. A
``Collider`` answers what the solvers, a ``World``'s merged pass and its helper processes ask
(see the class); a shape that only finds contacts (which points, the outward normals as
``(3, k)`` columns, how far to push: per-contact scalars broadcast along the long axis, which
numpy does ~10x faster than over a length-4 row) gets the two ways of answering them from the
base class: ``resolve_positions`` for the position-based solver (friction limits the
tangential motion made this substep to what Coulomb's law allows for the push, so the
velocity derived from positions is adjusted too) and ``resolve_velocities`` for the classic
solver (the book's: push out, cancel the inward normal velocity, scale the tangential one).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..mesh.rows import dot_rows, put_columns, put_rows, squared_lengths, take_columns, take_rows

if TYPE_CHECKING:  # the mesh collider subclasses Collider: for annotations only
    from .mesh_collider import MeshCollider

TINY_SQUARED = 1e-30  # keeps a zero slip finite: 0 / tiny, then capped at 1
Contacts = tuple[np.ndarray, np.ndarray, np.ndarray]  # indices (k,), normals (3, k), push (k,)


class Collider:
    """A collider kind: what the solvers, the World's merge and the helper processes ask.

    A new kind subclasses this and writes ``contacts`` (and ``reach`` when it has an
    extent); the rest has defaults for a shape that stays as it is over a frame. Kinds that
    move within a frame or answer contacts their own way override more (``MeshCollider``,
    ``SelfCollision``).

    - ``friction``: its Coulomb coefficient, None for the simulation's setting;
    - ``contacts(pos, margin, scratch)``: the points within ``margin`` of it (see the module);
    - ``resolve_positions(pos, prev, movable, margin, friction, scratch)``: push the movable
      points out with friction, return the contact count (default: from ``contacts``);
    - ``begin_substep(t0, t1)``: the substep about to run takes it from fraction ``t0`` to
      ``t1`` of the frame (default: nothing to do);
    - ``reach(margin)``: ``(2, 3)`` lower and upper corner of where it can push a point this
      frame, or None for anywhere (default); a ``World`` skips it for the substeps no point
      comes near it;
    - for a helper process's copy: ``helper_copy()`` is what is sent (picklable, without
      caches that belong to this process's points; default: itself); ``version`` changes
      whenever that copy must change (default: never: a shape that moves is a new object);
      ``update_since(version)`` what brings a copy made at ``version`` to now (None: send a
      fresh copy, the default), which the copy takes in ``apply_update``.
    """

    friction: float | None = None

    def contacts(self, pos: np.ndarray, margin: float, scratch: Scratch | None = None) -> Contacts:
        raise NotImplementedError(f"{type(self).__name__} finds no contacts")

    def resolve_positions(
        self,
        pos: np.ndarray,
        prev: np.ndarray,
        movable: np.ndarray,
        margin: float,
        friction: float,
        scratch: Scratch | None = None,
    ) -> int:
        """Push movable points out; friction (Coulomb, scaled by the push) slows their slip.

        The contacts' rows are gathered whole and updated one strided column at a time (a
        cloth resting on the floor has thousands of contacts every substep: transposed
        copies cost more than the maths)."""
        idx, normals, push = _movable_only(self.contacts(pos, margin, scratch), movable)
        if not idx.size:
            return 0
        rows = take_rows(pos, idx)
        axes = normal_axes(normals)
        mu = friction_of(self.friction, friction)
        if mu > 0.0:
            limit_slip(rows, take_rows(prev, idx), axes, push, mu)
        for axis, component in axes:
            column = rows[:, axis]
            column += component * push
        put_rows(pos, idx, rows)
        return int(idx.size)

    def begin_substep(self, t0: float, t1: float) -> None:
        del t0, t1

    def reach(self, margin: float) -> np.ndarray | None:
        del margin
        return None

    def surface(self) -> MeshCollider | None:
        """The triangle surface whose vertices also push a coarse cloth's triangles
        (``two_way.py``), or None: kinds without vertices (a sphere, a plane) push points only."""
        return None

    @property
    def version(self) -> int:
        return 0

    def helper_copy(self) -> Collider:
        return self

    def update_since(self, version: int) -> object | None:
        del version
        return None

    def apply_update(self, update: object) -> None:
        raise ValueError(f"{type(self).__name__} takes no updates")


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
class Sphere(Collider):
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

    def reach(self, margin: float) -> np.ndarray | None:
        grow = self.radius + margin
        return np.array([self.center - grow, self.center + grow])


@dataclass
class Plane(Collider):
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


def begin_substep(colliders: Sequence[Collider], t0: float, t1: float) -> None:
    """Tell the colliders that a substep takes them from fraction ``t0`` to ``t1`` of the
    frame (a mesh collider interpolates its poses; spheres and planes have nothing to do)."""
    for collider in colliders:
        collider.begin_substep(t0, t1)


def friction_of(own: float | None, default: float) -> float:
    """A collider's friction coefficient (``default``: the simulation's), within 0..1."""
    value = default if own is None else own
    return min(max(float(value), 0.0), 1.0)


def _movable_only(contacts: Contacts, movable: np.ndarray) -> Contacts:
    idx, normals, push = contacts
    keep = movable[idx]
    if keep.all():
        return idx, normals, push
    return idx[keep], normals[:, keep], push[keep]


def resolve_positions(
    colliders: Sequence[Collider],
    pos: np.ndarray,
    prev: np.ndarray,
    movable: np.ndarray,
    margin: float,
    friction: float,
    scratch: Scratch | None = None,
) -> int:
    """Every collider's ``resolve_positions`` in turn (``movable``: a boolean ``(N,)``
    mask). Returns the number of contacts."""
    total = 0
    for collider in colliders:
        total += collider.resolve_positions(pos, prev, movable, margin, friction, scratch)
    return total


def normal_axes(normals: np.ndarray) -> list[tuple[int, Any]]:
    """``(axis, component)`` of the contact normals; one normal for all (a plane's, a
    broadcast view) gives scalar components, its zero ones left out."""
    if normals.strides[1] == 0:
        first = normals[:, 0]
        return [(axis, first.dtype.type(first[axis])) for axis in range(3) if first[axis] != 0]
    return [(axis, normals[axis]) for axis in range(3)]


def limit_slip(
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
    colliders: Sequence[Collider],
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
        mu = friction_of(collider.friction, friction)
        put_columns(vel, idx, v - normal_part - mu * tangential)
    return total
