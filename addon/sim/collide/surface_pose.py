"""A triangle surface at one moment of the frame, packed for gathers (mesh colliders)."""

from __future__ import annotations

from functools import cached_property

import numpy as np

from ..mesh.triangle_geometry import CROSSING_TOLERANCE, cross, dot, unit_normals


class SurfacePose:
    """The surface at fraction ``t`` of the frame, per triangle packed in rows so one gather
    of 32- or 48-byte items fetches a pair's data (numpy's gathers cost per item, ~10x an
    arithmetic pass, so fewer and wider is faster):

    - ``planes`` ``(T, 8)`` float32: unit normal, plane offset (``n . x`` on the plane),
      centroid, bounding radius about the centroid;
    - ``corners`` ``(T, 12)`` float32: a, b, c as (x, y, z, 0).
    """

    def __init__(
        self,
        t: float,
        vertices: np.ndarray,
        triangles: np.ndarray,
        motion: np.ndarray | None = None,
        lazy: bool = False,
    ) -> None:
        """The pose of ``triangles`` over ``vertices`` ``(V, 3)`` (cast to float32), moved by
        ``motion * t`` when ``motion`` ``(V, 3)`` is given (a surface moving linearly).

        ``lazy``: no triangle's rows are computed until asked for (``plane_columns``,
        ``corner_columns``, ``corner_rows``, ``prepare``); the rows of ``corners`` and
        ``planes`` not asked for yet are undefined (not even zeroed: a body's pose a substep
        would clear 340 kB). A substep's pairs name a few dozen of a body's thousands of
        triangles: their rows cost a tenth of the whole pose's."""
        self.t = t
        # contiguous rows, gathered as one item each (``gather``)
        self._vertices = np.ascontiguousarray(vertices)
        self._motion = None if motion is None else np.ascontiguousarray(motion)
        self._triangles = triangles
        count = len(triangles)
        self._done: np.ndarray | None = None
        if lazy:
            self.corners = np.empty((count, 12), dtype=np.float32)
            self.planes = np.empty((count, 8), dtype=np.float32)
            self._done = np.zeros(count, dtype=bool)
        else:
            self.corners, self.planes = self._rows(triangles)

    def _rows(self, triangles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``corners`` ``(k, 12)`` and ``planes`` ``(k, 8)`` of ``triangles`` ``(k, 3)``:
        the same arithmetic whichever triangles are asked for, so the same bits."""
        ids = triangles.reshape(-1)
        x = gather(self._vertices, ids)
        if self._motion is not None:
            x = x + gather(self._motion, ids) * self.t
        return packed_rows(x)

    def fill(self, tri: np.ndarray, corners: np.ndarray, planes: np.ndarray) -> None:
        """Take the rows of triangles ``tri`` (distinct) computed elsewhere for this pose
        (``poses_ahead``) instead of computing them (a lazy pose)."""
        if self._done is None:
            return
        put(self.corners, tri, corners)
        put(self.planes, tri, planes)
        self._done[tri] = True

    def prepare(self, tri: np.ndarray) -> None:
        """Compute the rows of triangles ``tri`` not computed yet (a lazy pose)."""
        done = self._done
        if done is None:
            return
        missing = tri[~done[tri]]
        if not missing.size:
            return
        if missing.size > 1:
            # each once: a query's pairs name a triangle many times (a body's 10k-point cape:
            # 291k asked, 39k distinct, 18 ms a frame of rows computed again)
            once = np.zeros(len(done), dtype=bool)
            once[missing] = True
            missing = np.flatnonzero(once)
        corners, planes = self._rows(self._triangles[missing])
        put(self.corners, missing, corners)
        put(self.planes, missing, planes)
        done[missing] = True

    def prepared(self) -> np.ndarray:
        """The triangles whose rows are computed (sorted ids)."""
        if self._done is None:
            return np.arange(len(self.planes))
        return np.flatnonzero(self._done)

    @cached_property
    def edge_planes(self) -> np.ndarray:
        """``(T, 12)`` float32: per edge (ab, bc, ca) its outward unit normal in the triangle's
        plane and offset, grown by the crossing test's tolerance (``inside_triangle``): a
        point beyond one is at least that far from the triangle (zeros for degenerate ones)."""
        if self._done is not None:
            self.prepare(np.flatnonzero(~self._done))
        corners = [np.ascontiguousarray(self.corners[:, 4 * k : 4 * k + 3].T) for k in range(3)]
        normals = np.ascontiguousarray(self.planes[:, 0:3].T)
        area_normals = cross(corners[1] - corners[0], corners[2] - corners[0])
        twice_area = np.sqrt(dot(area_normals, area_normals))
        out = np.zeros((len(self.planes), 12), dtype=np.float32)
        for k in range(3):
            start, end = corners[k], corners[(k + 1) % 3]
            outward = cross(end - start, normals)
            length = np.sqrt(dot(outward, outward))
            with np.errstate(invalid="ignore", divide="ignore"):
                outward /= np.where(length > 0, length, np.inf)
                altitude = np.where(length > 0, twice_area / length, 0.0)
            out[:, 4 * k : 4 * k + 3] = outward.T
            out[:, 4 * k + 3] = dot(outward, start) + np.float32(CROSSING_TOLERANCE) * altitude
        return out

    def beyond_edges(
        self, tri: np.ndarray, p1: np.ndarray, p0: np.ndarray, distance: np.ndarray
    ) -> np.ndarray:
        """Per pair, whether both ``p1`` and ``p0`` ``(3, k)`` lie beyond one grown edge plane
        of triangle ``tri`` by more than ``distance``: the point's straight path then stays
        farther than that from the triangle and never crosses it."""
        block = np.ascontiguousarray(gather(self.edge_planes, tri).T)
        far = np.zeros(len(tri), dtype=bool)
        for k in range(3):
            normal, offset = block[4 * k : 4 * k + 3], block[4 * k + 3] + distance
            far |= (dot(normal, p1) > offset) & (dot(normal, p0) > offset)
        return far

    def plane_columns(self, tri: np.ndarray) -> np.ndarray:
        """``(8, k)`` rows of ``planes`` for triangles ``tri``: nx ny nz offset cx cy cz r."""
        self.prepare(tri)
        return np.ascontiguousarray(gather(self.planes, tri).T)

    def corner_columns(self, tri: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The corners a, b, c of triangles ``tri``, each ``(3, k)``."""
        block = np.ascontiguousarray(self.corner_rows(tri).T)
        return block[0:3], block[4:7], block[8:11]

    def corner_rows(self, tri: np.ndarray) -> np.ndarray:
        """Rows of ``corners`` for triangles ``tri`` ``(k, 12)``."""
        self.prepare(tri)
        return gather(self.corners, tri)


def packed_rows(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``corners`` ``(k, 12)`` and ``planes`` ``(k, 8)`` (``SurfacePose``) of the triangles
    whose corners are the rows of ``x`` ``(3 k, 3)``, three a triangle: column by column,
    so a triangle's rows do not depend on which others are packed with it."""
    count = len(x) // 3
    # the corners as 16-byte rows (x, y, z, 0), then as contiguous columns for the
    # arithmetic (strided or transposed columns cost several times more)
    rows = np.zeros((len(x), 4), dtype=np.float32)
    rows[:, :3] = x
    corners = rows.reshape(count, 12)
    columns = np.ascontiguousarray(corners.T)
    a, b, c = columns[0:3], columns[4:7], columns[8:11]
    normals = unit_normals(a, b, c)
    centres = (a + b + c) / np.float32(3.0)
    ca, cb, cc = (x - centres for x in (a, b, c))
    radii = np.sqrt(np.maximum(np.maximum(dot(ca, ca), dot(cb, cb)), dot(cc, cc)))
    planes = np.empty((8, count), dtype=np.float32)
    planes[0:3] = normals
    planes[3] = dot(normals, a)
    planes[4:7] = centres
    planes[7] = radii
    return corners, np.ascontiguousarray(planes.T)


def poses_ahead(
    vertices: np.ndarray, motion: np.ndarray, triangles: np.ndarray, times: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The rows of ``triangles`` ``(k, 3)`` on the surface moving linearly from
    ``vertices`` by ``motion`` (``(V, 3)``), at each of ``times`` ``(S,)`` at once:
    ``corners`` ``(S, k, 12)`` and ``planes`` ``(S, k, 8)``, each time's rows those a
    ``SurfacePose`` at that time computes (the same arithmetic, bit for bit), in one pass
    rather than one a substep."""
    ids = triangles.reshape(-1)
    x = gather(np.ascontiguousarray(vertices), ids)
    moved = gather(np.ascontiguousarray(motion), ids)
    at = x[None] + moved[None] * times[:, None, None]  # (S, 3 k, 3)
    corners, planes = packed_rows(at.reshape(-1, 3))
    k, steps = len(triangles), len(times)
    return corners.reshape(steps, k, 12), planes.reshape(steps, k, 8)


# the row items of ``gather`` and ``put`` by size in bytes: making a void dtype costs as
# much as the gather of a few dozen rows it serves
_ROW_ITEMS: dict[int, np.dtype] = {}


def _row_item(size: int) -> np.dtype:
    item = _ROW_ITEMS[size] = np.dtype((np.void, size))
    return item


def gather(records: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """``records[ids]`` for a C-contiguous 2-D array, each row moved as one item."""
    item = _ROW_ITEMS.get(records.shape[1] * records.itemsize)
    if item is None:
        item = _row_item(records.shape[1] * records.itemsize)
    flat = records.view(item).reshape(-1)
    return flat.take(ids).view(records.dtype).reshape(len(ids), records.shape[1])


def put(records: np.ndarray, ids: np.ndarray, rows: np.ndarray) -> None:
    """``records[ids] = rows`` for C-contiguous 2-D arrays, each row moved as one item."""
    item = _ROW_ITEMS.get(records.shape[1] * records.itemsize)
    if item is None:
        item = _row_item(records.shape[1] * records.itemsize)
    records.view(item).reshape(-1)[ids] = np.ascontiguousarray(rows).view(item).reshape(-1)


def least_at_corners(values: np.ndarray, corners: list[np.ndarray]) -> np.ndarray:
    """Per triangle, the least of ``values`` (one per vertex) at its three corners."""
    return np.minimum(np.minimum(values[corners[0]], values[corners[1]]), values[corners[2]])
