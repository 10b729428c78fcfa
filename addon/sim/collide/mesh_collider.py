"""A collider that is a triangle surface moving from its previous to its current pose.

The Blender side hands over world-space vertices ``(V, 3)`` and triangles ``(T, 3)`` each
frame (``move_to``); within the frame the surface is interpolated linearly from the previous
pose to the current one, substep by substep (``begin_substep(t0, t1)``, fractions of the
frame). A point is kept ``outer + margin`` (the reach) in front of the surface:

- one-sided (``inner > 0``): the front is where the (counter-clockwise) face normals point;
  a point up to ``inner`` behind the surface is pushed out to the front;
- two-sided (``inner == 0``): each point stays on the side it was on at the substep's start.

Contacts come from candidate point-triangle pairs (a grid of the triangles' boxes over the
frame, grown by the reach plus a slack, a long triangle's box cut in pieces so a limb's
slivers do not fill the grid's cells, only the triangles near the cloth's box listed:
``surface_grid.py``), kept for each point while it moves with its nearest triangle within a
slack and no farther than the grown boxes allow (``surface_pairs.py``), so a cloth resting
on a moving body is asked about about once a frame. Per substep every pair gets its closest
point and a swept test, and each point one contact (``mesh_contacts.py``); a moving
surface's pose at the substep is computed for the triangles the pairs name only
(``SurfacePose`` lazy).
"""

from __future__ import annotations

import copy
from functools import cached_property
from typing import cast

import numpy as np

from ..mesh.rows import put_rows, take_columns, take_rows
from ..mesh.triangle_geometry import closest_points, dot
from . import surface_grid
from .colliders import Collider, Contacts, Scratch, friction_of, limit_slip, normal_axes
from .inside import closed_surface
from .mesh_contacts import closest_contacts, few_pairs, no_contacts
from .record_grid import RecordGrid
from .scan_count import SCANS
from .surface_pairs import AnchoredPairs, path_lengths, query_along
from .surface_pose import SurfacePose, gather, least_at_corners, poses_ahead

WINDOW = 1.0  # a moving surface's candidates are found again every this much of a frame
# how far a point may move relative to its nearest triangle before its pairs are found
# again, in reaches: small for points in contact (fewer candidate triangles), large for the
# others
SLACK_CONTACT, SLACK_FREE = 0.25, 1.0
# how far a point may move in the drifting frame before its pairs are found again, in
# reaches: the triangles' boxes in the grid are grown by this beyond the reach
LIMIT = 0.5
RIGID_TOLERANCE = 1e-7  # a surface whose corners moved alike within this moved as a whole
# rows of named triangles computed ahead for the substeps to come, at most (a small
# cloth's few dozen triangles: the whole frame in one pass; a large one's: a substep)
AHEAD_ROWS = 4096
# a surface of at most this many triangles (a floor, a ramp) pairs every point near its box
# with each triangle: its broad phase would cost more than the exact tests it saves
FEW_TRIANGLES = 8


def _vertices(value: np.ndarray, name: str) -> np.ndarray:
    arr = np.asarray(value, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[1] != 3:
        raise ValueError(f"{name} must be (V, 3), got {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} has non-finite coordinates")
    return arr.copy()


def _triangles(value: np.ndarray, vertex_count: int) -> np.ndarray:
    tri = np.asarray(value)
    if tri.ndim != 2 or tri.shape[1] != 3 or not np.issubdtype(tri.dtype, np.integer):
        raise ValueError(f"triangles must be (T, 3) integers, got {tri.shape} {tri.dtype}")
    tri = tri.astype(np.int64)
    if tri.size and (tri.min() < 0 or tri.max() >= vertex_count):
        raise ValueError(f"triangle corner out of range 0..{vertex_count - 1}")
    distinct = (tri[:, 0] != tri[:, 1]) & (tri[:, 1] != tri[:, 2]) & (tri[:, 0] != tri[:, 2])
    return np.ascontiguousarray(tri[distinct])


class MeshCollider(Collider):
    """Points kept ``outer + margin`` from a moving triangle surface (see the module)."""

    def __init__(
        self,
        vertices: np.ndarray,
        triangles: np.ndarray,
        previous: np.ndarray | None = None,
        outer: float = 0.02,
        inner: float = 0.0,
        friction: float | None = None,
    ) -> None:
        current = _vertices(vertices, "collider vertices")
        self.source_triangles = np.array(triangles)  # as given (degenerate ones included)
        self.triangles = _triangles(triangles, len(current))
        self.outer = max(float(outer), 0.0) if np.isfinite(outer) else 0.0
        self.inner = max(float(inner), 0.0) if np.isfinite(inner) else 0.0
        self.friction = friction
        self.rebuilds = 0  # substeps that ran the broad phase (for tests and benchmarks)
        self.poses = 0  # ``set_pose`` calls so far (a helper process's copy follows them)
        self._ids = np.zeros(0, dtype=np.int64)
        # the triangles the pairs and anchors name: a moving surface's poses compute their
        # rows at once (the rest on demand, ``SurfacePose`` lazy)
        self._wanted = np.zeros(0, dtype=np.int64)
        # the rows of the wanted triangles at the substeps to come, by time (``_look_ahead``)
        self._ahead: dict[float, tuple[np.ndarray, np.ndarray]] = {}
        self._ahead_of: np.ndarray | None = None  # the wanted triangles they are of
        self._t0 = self._t1 = 1.0
        self._pairs: AnchoredPairs | None = None
        # the surface has not moved since the pairs were made: their anchors stay put
        self._pairs_still = False
        self._cur = np.zeros((0, 3))
        self._drift = self._offset = np.zeros(3)
        # corner velocities in the drifting frame over the window (see ``_open_window``)
        self._rate = np.zeros((len(self.triangles), 12), dtype=np.float32)
        self._rate_length = np.zeros(len(self.triangles), dtype=np.float32)
        self.moving = True  # no pose yet: the first ``set_pose`` is never skipped
        self.set_pose(current if previous is None else previous, current)

    # poses -------------------------------------------------------------------------------

    def set_pose(self, previous: np.ndarray, current: np.ndarray) -> None:
        """The surface at the start and the end of the coming frame (world space)."""
        if self._still_again(previous, current):
            self.begin_substep(1.0, 1.0)  # the rest of a pose is as it was: boxes, candidates
            return
        self.poses += 1
        prev = _vertices(previous, "previous collider vertices")
        cur = _vertices(current, "collider vertices")
        if prev.shape != cur.shape:
            raise ValueError(f"collider poses differ in shape: {prev.shape} vs {cur.shape}")
        # the surface held its shape since the last pose (still, or moved as a whole):
        # in the frame moving with its mean the triangles stand still, so the candidates
        # found so far hold on (the offset keeps that frame continuous across poses)
        drift = (cur - prev).mean(axis=0) if len(cur) else np.zeros(3)
        held = (
            self._pairs is not None
            and self._cur.shape == prev.shape
            and np.array_equal(prev, self._cur)
            and float(np.abs(cur - prev - drift).max(initial=0.0)) <= RIGID_TOLERANCE
        )
        self._offset = self._offset + self._drift  # where the last pose left that frame
        self._prev, self._cur = prev, cur
        self._motion = cur - prev
        self._ahead = {}  # rows of poses to come (``_look_ahead``), of this pose only
        self.moving = not np.array_equal(prev, cur)
        # pairs kept through a move hold anchors placed at other poses
        self._pairs_still = self._pairs_still and not self.moving
        self._drift = drift
        if held:
            self._window = (0.0, 1.0)
            self._rate = np.zeros_like(self._rate)  # nothing moves in the drifting frame
            self._rate_length = np.zeros_like(self._rate_length)
        else:
            self._pairs = None  # found before this pose's change of shape: stale
            self._window = (-1.0, -1.0)  # a moving surface opens its first at the first substep
            if not self.moving:
                self._open_window(0.0, 1.0)
        self._static = self._end = self._pose(1.0)
        self.begin_substep(1.0, 1.0)

    def _still_again(self, previous: np.ndarray, current: np.ndarray) -> bool:
        """Whether the surface stood still over the last frame and stands still over the
        coming one at the same place: then a new pose would change nothing (a helper
        process's copy is not sent one either: ``poses`` stays)."""
        if self.moving or current is None or previous is None:
            return False
        cur = self._cur
        if np.shape(current) != cur.shape or np.shape(previous) != cur.shape:
            return False
        return bool(np.array_equal(current, cur)) and (
            previous is cur or bool(np.array_equal(previous, cur))
        )

    def _open_window(self, start: float, end: float) -> None:
        """Boxes, travel and candidates for the part ``start``..``end`` of the frame: pairs
        found in it hold until it ends (a moving surface's travel over a window, not over
        the whole frame, bounds how many triangles a point must keep)."""
        self._window = (start, end)
        # in the frame moving with the surface's mean (``drift``): distances are the same,
        # and a body walking by moves its triangles (and the cloth on it) far less there
        a = self._prev + (self._cur - self._prev) * start - self._shift(start)
        b = self._prev + (self._cur - self._prev) * end - self._shift(end)
        # (T, 3) boxes, one coordinate at a time (a reduction over a short axis is slow)
        self._window_poses = (a, b)  # for the pieces of the grid (``_query``)
        low, high = np.minimum(a, b), np.maximum(a, b)
        corners = [self.triangles[:, k] for k in range(3)]
        self._box_lo = np.empty((len(self.triangles), 3))
        self._box_hi = np.empty((len(self.triangles), 3))
        for axis in range(3):
            lo, hi = np.ascontiguousarray(low[:, axis]), np.ascontiguousarray(high[:, axis])
            self._box_lo[:, axis] = least_at_corners(lo, corners)
            self._box_hi[:, axis] = -least_at_corners(-hi, corners)
        # the whole surface's box over the window: a point whose substep path stays outside
        # it, grown by the reach, can touch nothing and is not asked about
        self._surface_lo = self._box_lo.min(axis=0, initial=np.inf)
        self._surface_hi = self._box_hi.max(axis=0, initial=-np.inf)
        # each corner's velocity in the drifting frame, per unit of frame: (T, 12) rows of
        # (x, y, z, 0) like ``SurfacePose.corners``, and the fastest corner's speed (T,)
        rate = (self._cur - self._prev - self._drift).astype(np.float32)
        self._rate = np.zeros((len(self.triangles), 12), dtype=np.float32)
        for k in range(3):
            self._rate[:, 4 * k : 4 * k + 3] = gather(rate, corners[k])
        speed = np.sqrt(np.einsum("ij,ij->i", rate, rate)).astype(np.float32)
        self._rate_length = -least_at_corners(-speed, corners)
        self._pairs = None
        self._grid: RecordGrid | None = None  # the triangles' boxes, for this window and reach
        self._grid_grow = 0.0
        self._grid_region = np.zeros((2, 3))  # the box (lo, hi) the grid's points lie in

    @property
    def vertex_count(self) -> int:
        return int(self._cur.shape[0])

    def move_to(self, vertices: np.ndarray) -> None:
        """Next frame: the current pose becomes the previous one."""
        self.set_pose(self._cur, vertices)

    def reach(self, margin: float) -> np.ndarray | None:
        """Its box at both poses of the frame grown by its reach (None: no vertices)."""
        start, end = self._prev, self._cur
        if not len(start):
            return None
        grow = max(self.outer + margin, self.inner)
        low = np.minimum(start.min(axis=0), end.min(axis=0)) - grow
        high = np.maximum(start.max(axis=0), end.max(axis=0)) + grow
        return np.array([low, high])

    # a helper process's copy -------------------------------------------------------------

    @property
    def version(self) -> int:
        return self.poses

    def helper_copy(self) -> MeshCollider:
        """A copy without the candidate pairs, which are for this side's points."""
        fresh = copy.copy(self)
        fresh._pairs = None
        fresh._grid = None
        return fresh

    def update_since(self, version: int) -> tuple[np.ndarray, np.ndarray] | None:
        """The last pose when the copy has the one before it (None: send a fresh copy)."""
        return (self._prev, self._cur) if version + 1 == self.poses else None

    def apply_update(self, update: object) -> None:
        previous, current = cast(tuple[np.ndarray, np.ndarray], update)  # ``update_since``'s
        self.set_pose(previous, current)

    def begin_substep(self, t0: float, t1: float) -> None:
        """The surface moves from fraction ``t0`` to ``t1`` of the frame in this substep."""
        self._t0, self._t1 = float(t0), float(t1)
        if not self.moving:
            self._start = self._end = self._static
            return
        if t0 == t1 == 1.0 and self._window[0] < 0.0:
            pass  # a new pose: the window opens at the first substep (or query) that needs it
        elif not (self._window[0] <= self._t0 and self._t1 <= self._window[1] + 1e-9):
            self._open_window(self._t0, max(self._t1, min(self._t0 + WINDOW, 1.0)))
        previous_end = self._end
        self._end = previous_end if previous_end.t == t1 else self._pose(t1)
        if t0 == t1:
            self._start = self._end
        else:
            self._start = previous_end if previous_end.t == t0 else self._pose(t0)

    def _pose(self, t: float) -> SurfacePose:
        """The surface at fraction ``t`` of the frame: a moving one's triangles computed as
        they are asked for, starting with those the pairs name."""
        if not self.moving:
            return SurfacePose(t, self._cur, self.triangles)
        pose = SurfacePose(t, self._prev, self.triangles, motion=self._motion, lazy=True)
        wanted = self._wanted
        rows = self._ahead.get(t) if self._ahead_of is wanted else None
        if rows is None and wanted.size:
            self._look_ahead(t)
            rows = self._ahead.get(t)
        if rows is None:
            pose.prepare(wanted)
        else:
            pose.fill(wanted, *rows)
        return pose

    def _look_ahead(self, t: float) -> None:
        """The rows of the triangles the pairs name at ``t`` and at the ends of this frame's
        substeps after it (``k / n``, from this substep's length), in one pass: taken by
        the poses to come while the pairs name the same triangles."""
        times = [t]
        step = self._t1 - self._t0
        if step > 0.0:
            count = round(1.0 / step)
            first = round(t * count)
            ahead = max(AHEAD_ROWS // max(self._wanted.size, 1), 1)
            if count > 0 and first / count == t:
                times = [k / count for k in range(first, min(first + ahead, count + 1))]
        corners, planes = poses_ahead(
            self._prev, self._motion, self.triangles[self._wanted], np.array(times)
        )
        self._ahead = {at: (corners[i], planes[i]) for i, at in enumerate(times)}
        self._ahead_of = self._wanted

    # contacts ----------------------------------------------------------------------------

    def contacts(self, pos: np.ndarray, margin: float, scratch: Scratch | None = None) -> Contacts:
        """Contacts at the substep's end pose, without the swept test (the classic solver)."""
        idx, normals, push, _ = self.find(pos, None, margin)
        return idx, normals, push

    def resolve_positions(
        self,
        pos: np.ndarray,
        prev: np.ndarray,
        movable: np.ndarray,
        margin: float,
        friction: float,
        scratch: Scratch | None = None,
    ) -> int:
        """Push movable points out; Coulomb friction on their slip relative to the surface
        (a point resting on a moving limb is carried with it). Returns the contact count."""
        idx, normals, push, motion = self.find(pos, prev, margin, movable)
        if not idx.size:
            return 0
        rows = take_rows(pos, idx)
        mu = friction_of(self.friction, friction)
        axes = normal_axes(normals)
        if mu > 0.0:
            before = take_rows(prev, idx)
            for axis in range(3):
                column = before[:, axis]
                column += motion[axis]
            limit_slip(rows, before, axes, push, mu)
        for axis, component in axes:
            column = rows[:, axis]
            column += component * push
        put_rows(pos, idx, rows)
        return int(idx.size)

    def find(
        self,
        pos: np.ndarray,
        prev: np.ndarray | None,
        margin: float,
        movable: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """One contact per point in reach: ids ``(k,)``, outward normals ``(3, k)``, pushes
        ``(k,)`` and the surface's motion at the contact over the substep ``(3, k)``.

        ``prev`` ``(N, 4)``: the points at the substep's start (for the swept test and the
        side a two-sided surface keeps them on); None: a static test at the end pose.
        Pairs whose point neither crossed the triangle's plane nor is within reach of both
        that plane and the triangle's bounding ball are dropped before the closest points.
        """
        dtype = pos.dtype
        reach = self.outer + max(float(margin), 0.0)
        pairs = self._candidates(pos, prev, reach, movable)
        if pairs is None:
            return no_contacts(dtype)
        one_sided = self.inner > 0.0
        limit = self.inner if one_sided else reach
        found = closest_contacts(
            pairs, pos, prev, reach, limit, one_sided, self._end, self._start, self._culled(prev)
        )
        SCANS.mesh_contacts += int(found[0].size)
        return found

    # broad phase -------------------------------------------------------------------------

    def _candidates(
        self, pos: np.ndarray, prev: np.ndarray | None, reach: float, movable: np.ndarray | None
    ) -> AnchoredPairs | None:
        """The candidate pairs, queried again for the points that moved beyond their slack."""
        if self._window[0] < 0.0:  # asked at the new pose before any substep
            self._open_window(self._t0, self._t1)
        pairs = self._pairs
        if pairs is None or pairs.reach != reach:
            pairs = self._pairs = AnchoredPairs(reach, LIMIT * reach)
            self._pairs_still = not self.moving
        ids = self._all_ids(len(pos)) if movable is None else movable.nonzero()[0]
        queries = pairs.queries
        here = self._drifted(pos, self._t1)
        start = None if prev is None else self._drifted(prev, self._t0)
        near = self._near_surface(here, start, max(reach, self.inner) + LIMIT * reach)
        away = (~near).nonzero()[0]
        if away.size:
            ids = ids[near[ids]]
            if not ids.size:
                pairs.forget(away)
                return None
        few = len(self.triangles)
        if few <= FEW_TRIANGLES:
            if prev is not None and self._culled(prev):  # still: the triangles a path nears
                pairs.assign(*few_pairs(self._static, pos, prev, ids, max(reach, self.inner)))
            else:
                pairs.assign(np.repeat(ids, few), np.tile(np.arange(few, dtype=np.int64), ids.size))
            SCANS.mesh_scanned += ids.size * few  # every pair scanned: no grid
            SCANS.mesh_in_box += ids.size * few
            SCANS.mesh_kept += pairs.count
            self.rebuilds += 1
            return pairs if pairs.count else None
        end_pose, start_pose = self._end, self._start
        t0, t1 = self._t0, self._t1

        def anchor_end(tri: np.ndarray, w: np.ndarray) -> np.ndarray:
            return self._anchor(end_pose, t1, tri, w)

        def anchor_start(tri: np.ndarray, w: np.ndarray) -> np.ndarray:
            return self._anchor(start_pose, t0, tri, w)

        pairs.refresh(
            here,
            start,
            anchor_end,
            None if start is None else anchor_start,
            ids,
            lambda chosen: self._query(pos, here, start, chosen, reach),
            still=self._pairs_still,
        )
        if away.size:
            pairs.forget(away)  # asked again when they come near (the surface may have moved)
        if pairs.queries != queries:
            self.rebuilds += 1
            named = np.concatenate([pairs.tri, pairs.anchor_tri[pairs.anchor_tri >= 0]])
            self._wanted = np.unique(named)
        return pairs if pairs.count else None

    def _culled(self, prev: np.ndarray | None) -> bool:
        """Whether the pairs come from ``few_pairs`` (a still surface of few triangles)."""
        return not self.moving and prev is not None and len(self.triangles) <= FEW_TRIANGLES

    def _near_surface(self, here: np.ndarray, start: np.ndarray | None, grow: float) -> np.ndarray:
        """Per point: does its path over the substep (its box, in the drifting frame) meet
        the surface's box over the window grown by ``grow``? ``(N,)`` bool."""
        # in the points' float32, as a scalar bound compares
        lo = (self._surface_lo - grow).astype(here.dtype)
        hi = (self._surface_hi + grow).astype(here.dtype)
        other = here if start is None else start
        # whole (N, 3) blocks compared flat against the bounds repeated per row: a (3,)
        # bound broadcast over rows runs numpy's inner loop three elements at a time (3x)
        n = len(here)
        meets = np.maximum(here, other).reshape(-1) >= np.tile(lo, n)
        meets &= np.minimum(here, other).reshape(-1) <= np.tile(hi, n)
        axes = meets.view(np.uint8).reshape(n, 3)
        out = axes[:, 0] & axes[:, 1]
        out &= axes[:, 2]
        return out.view(bool)

    def _anchor(self, pose: SurfacePose, t: float, tri: np.ndarray, w: np.ndarray) -> np.ndarray:
        """Points ``(k, 3)`` float32 at barycentric ``w`` ``(k, 3)`` of triangles ``tri`` on
        ``pose`` (at ``t``), in the drifting frame."""
        # over contiguous (k,) columns: a (k, 3) x (k, 1) broadcast costs half again as much
        # (the same products and sums in the same order)
        columns = np.ascontiguousarray(pose.corner_rows(tri).T)
        weights = np.ascontiguousarray(w.T)
        shift = self._shift(t).astype(np.float32)
        out = np.empty((len(tri), 3), dtype=np.float32)
        for axis in range(3):
            column = columns[axis] * weights[0]
            column += columns[4 + axis] * weights[1]
            column += columns[8 + axis] * weights[2]
            column -= shift[axis]
            out[:, axis] = column
        return out

    def _drifted(self, rows: np.ndarray, t: float) -> np.ndarray:
        """Points ``(N, 3)`` float32 in the frame moving with the surface's mean, at ``t``."""
        shift = self._shift(t).astype(np.float32)
        out = np.empty((len(rows), 3), dtype=np.float32)
        for k in range(3):  # a column at a time: a (N, 3) copy runs three elements a loop
            np.subtract(rows[:, k], shift[k], out=out[:, k], dtype=np.float32)
        return out

    def _shift(self, t: float) -> np.ndarray:
        """Where the frame moving with the surface's mean is at ``t``, ``(3,)``."""
        return self._offset + self._drift * t

    def _query(
        self,
        pos: np.ndarray,
        here: np.ndarray,
        before: np.ndarray | None,
        chosen: np.ndarray,
        reach: float,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Pairs of the ``chosen`` points, and each point's slack and anchor (its nearest
        triangle and the barycentric weights of its closest point there; -1 and zeros for a
        point with no triangle near).

        A triangle is kept when it may come within reach (``inner`` behind a one-sided
        surface), or nearer than the nearest, while the point stays within its slack ``s``
        of its anchor and within the grid's growth in the drifting frame: the distance now
        less a slop within that bound. The slop is the larger of ``s`` plus how far the
        triangle's corners move relative to the anchor until the window ends, and (for this
        substep, which the swept test covers) the point's path plus the corners' motion over
        the substep. A point's slack is half its gap to the reach, between the small one
        (in contact: fewer pairs) and the large one.
        """
        small, large = SLACK_CONTACT * reach, SLACK_FREE * reach
        limit = LIMIT * reach
        grow = max(reach, self.inner) + limit
        if (
            self._grid is None
            or self._grid_grow != grow
            or not surface_grid.holds(self._grid_region, here, before, chosen, grow)
        ):
            self._grid, self._grid_region = surface_grid.build(
                self._box_lo, self._box_hi, self._window_poses, self.triangles,
                here, before, grow, len(pos),
            )  # fmt: skip
            self._grid_grow = grow
        path = path_lengths(here, before, chosen)  # all in the drifting frame
        point, tri = query_along(self._grid, here, before, chosen, path, limit)
        slack = np.full(chosen.size, large, dtype=np.float32)
        anchor_tri = np.full(chosen.size, -1, dtype=np.int64)
        anchor_w = np.zeros((chosen.size, 3), dtype=np.float32)
        if not point.size:
            return chosen[point], tri, slack, anchor_tri, anchor_w
        remaining = np.float32(max(self._window[1] - self._t1, 0.0))
        substep = np.float32(max(self._t1 - self._t0, 0.0))
        speed = self._rate_length[tri]
        # no triangle farther than any slop allows is worth its closest point
        fastest = float(self._rate_length.max(initial=0.0))
        p = take_columns(pos, chosen[point]).astype(np.float32, copy=False)
        end = self._end
        planes = end.plane_columns(tri)
        height = dot(planes[0:3], p) - planes[3]
        off = p - planes[4:7]
        ball = np.sqrt(dot(off, off)) - planes[7]
        lower = np.maximum(np.abs(height), ball)
        future = max(large, limit) + 2.0 * fastest * float(remaining)
        near = lower <= max(reach, self.inner) + np.maximum(future, path[point] + fastest * substep)
        if not near.all():
            point, tri, p, height, speed = (
                point[near],
                tri[near],
                p[:, near],
                height[near],
                speed[near],
            )
        if not point.size:
            return chosen[point], tri, slack, anchor_tri, anchor_w
        SCANS.mesh_closest += int(point.size)
        abc = end.corner_columns(tri)
        q, bary, _ = closest_points(p, *abc)
        e = p - q
        dist = np.sqrt(dot(e, e))
        behind = height < 0
        in_reach = np.where(behind & (self.inner > 0), max(self.inner, reach), reach)
        # each point's nearest pair (pairs come sorted by point): its anchor
        first = np.ones(point.size, dtype=bool)
        first[1:] = point[1:] != point[:-1]
        starts = np.flatnonzero(first)
        sizes = np.diff(np.append(starts, point.size))
        nearest = np.minimum.reduceat(dist, starts)
        group = np.cumsum(first) - 1
        is_min = np.flatnonzero(dist <= nearest[group])
        top = np.ones(is_min.size, dtype=bool)
        top[1:] = point[is_min][1:] != point[is_min][:-1]
        anchor_pair = is_min[top]  # one per group, in group order
        owners = point[anchor_pair]
        w = bary[:, anchor_pair].T.astype(np.float32)
        anchor_tri[owners] = tri[anchor_pair]
        anchor_w[owners] = w
        slack[owners] = np.clip(0.5 * (nearest - reach), small, large)
        # the anchor's velocity (3, groups), then each corner's relative to it per pair
        rows = gather(self._rate, tri[anchor_pair])
        anchor_rate = (
            rows[:, 0:3] * w[:, 0:1] + rows[:, 4:7] * w[:, 1:2] + rows[:, 8:11] * w[:, 2:3]
        )
        pair_anchor = np.repeat(anchor_rate, sizes, axis=0)  # (pairs, 3)
        tri_rate = gather(self._rate, tri)
        relative = np.zeros(tri.size, dtype=np.float32)
        for k in range(3):
            d = tri_rate[:, 4 * k : 4 * k + 3] - pair_anchor
            np.maximum(relative, np.sqrt(np.einsum("ij,ij->i", d, d)), out=relative)
        s = slack[point]
        slop = np.maximum(s + relative * remaining, path[point] + speed * substep)
        slop_near = np.repeat(slop[anchor_pair], sizes)
        keep = dist <= np.minimum(in_reach + slop, np.repeat(nearest, sizes) + slop_near + slop)
        SCANS.mesh_kept += int(np.count_nonzero(keep))
        return chosen[point[keep]], tri[keep], slack, anchor_tri, anchor_w

    def surface(self) -> MeshCollider | None:
        return self if self.triangles.size else None

    @cached_property
    def closed(self) -> bool:
        """Does it close a volume (``inside.py``)? Told once, at the pose it is first asked."""
        return closed_surface(self._cur, self.triangles)

    def vertex_path(self) -> tuple[np.ndarray, np.ndarray, float, float]:
        """The vertices ``(V, 3)`` float64 at the frame's start and end (the surface moves
        linearly between them) and this substep's fractions ``t0``, ``t1`` of the frame
        (``two_way.py``: the vertices pushing a coarse cloth)."""
        return self._prev, self._cur, self._t0, self._t1

    def _all_ids(self, count: int) -> np.ndarray:
        if self._ids.size != count:
            self._ids = np.arange(count)
        return self._ids
