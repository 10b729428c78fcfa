"""Self-collision's all-pairs search for a small cloth (``SelfCollision`` with ``dense``).

Below ``DENSE_PAIRS`` point-triangle pairs, every point is tested against every triangle's
bounding sphere in one ``(N, T)`` pass, and a mask made once leaves out the pairs too near
at rest: a few large numpy calls where the patch tree's walk makes hundreds of small ones.

The pass also keeps a *halo*: the pairs within a wider reach (the query's plus ``halo``).
A later query finds its pairs among them while the cloth has moved little since (its
motion counted after the best-fit rigid motion is taken out, which changes no distance):
a pair missing from the halo was beyond that reach, and a point moving by ``m_p`` and a
triangle's corners by ``m_t`` bring it at most ``m_p + 3 m_t`` nearer its bounding sphere
(the centroid moves ``m_t``, the radius grows ``2 m_t``). The points and the triangles that
moved more than a quarter of the spare reach get their rows and columns of the pass again;
every other pair missing from the halo stays beyond the query's reach. The halo's pairs,
rows and columns go through the pass's own test (the same float32 arithmetic), so a query
returns the very pairs the whole pass would, a few thousand gathered pairs instead of the
``(N, T)`` block (the demo cape: 0.5M pairs, ~2 ms a pass).
"""

from __future__ import annotations

import numpy as np

from ..mesh.triangle_geometry import closest_points, dot
from .slack import moved_rigidly

# a bound decides a pair alone only this clear of its threshold (squared): float rounding
# of the bound cannot then disagree with the exact test
RELATIVE_SURE = 1.0 + 1e-4
# the moved rows and columns are tested again up to this share of the whole pass's pairs;
# beyond it the whole pass runs and finds the halo again
REPASS_SHARE = 0.25


class AllPairs:
    """The pairs allowed at rest ``(N, T)``, the buffers of the sphere test and the halo of
    the last whole pass (``halo``: how far beyond a query's reach it reaches)."""

    def __init__(
        self, rest: np.ndarray, triangles: np.ndarray, excluded: float, halo: float = 0.0
    ) -> None:
        self.allowed = allowed_at_rest(rest, triangles, excluded)
        self.triangles = triangles
        self.halo = max(float(halo), 0.0)
        self._d2: np.ndarray | None = None
        self._e: np.ndarray | None = None
        self._built: np.ndarray | None = None  # (N, 3) float64: where the halo was found
        self._reach = 0.0  # the halo's reach
        self._keys = np.zeros(0, dtype=np.int64)  # its pairs, point * T + triangle, sorted
        self.passes = 0  # whole passes so far (for tests and benchmarks)
        self.tested = 0  # pairs the last query tested (for benchmarks)

    def pairs(self, xs: np.ndarray, grow: float) -> tuple[np.ndarray, np.ndarray]:
        """The allowed pairs (points, triangles), sorted by point then triangle, whose point
        at ``xs`` ``(3, N)`` float32 is within ``grow`` of the triangle's bounding sphere
        (``spheres``): those of ``near`` bit for bit, from the halo when it holds them."""
        centre, radius = centres(xs, self.triangles)
        bound = reach_bound(radius, grow)
        n, t = self.allowed.shape
        here = np.asarray(xs.T, dtype=np.float64)
        built = self._built
        if built is not None and built.shape == here.shape:
            # float32 positions: a little off the spare reach for their rounding
            spare = (self._reach - grow) * (1.0 - 1e-4) - 1e-6 * (1.0 + float(np.abs(here).max()))
            if spare > 0.0:
                rows, cols = self._moved(here, built, 0.25 * spare)
                if rows.size * t + cols.size * n <= REPASS_SHARE * n * t:
                    keys = [self._test(self._keys, xs, centre, bound)]
                    if rows.size:
                        near = self._block(xs[:, rows], centre, bound, self.allowed[rows])
                        i, j = np.divmod(np.flatnonzero(near), t)
                        keys.append(rows[i] * t + j)
                    if cols.size:
                        near = self._block(
                            xs,
                            centre.take(cols, axis=1),
                            bound[cols],
                            self.allowed.take(cols, axis=1),
                        )
                        i, j = np.divmod(np.flatnonzero(near), cols.size)
                        keys.append(i * t + cols[j])
                    self.tested = self._keys.size + rows.size * t + cols.size * n
                    key = np.unique(np.concatenate(keys)) if len(keys) > 1 else keys[0]
                    return np.divmod(key, t)
        # the whole pass, at the halo's reach; the query's pairs are among its pairs
        self._reach = grow + self.halo
        self._keys = np.flatnonzero(self.near(xs, centre, reach_bound(radius, self._reach)))
        self._built = here.copy()
        self.passes += 1
        self.tested = n * t
        return np.divmod(self._test(self._keys, xs, centre, bound), t)

    def near(self, xs: np.ndarray, centre: np.ndarray, bound: np.ndarray) -> np.ndarray:
        """``(N, T)`` bool: point ``i`` at ``xs`` ``(3, N)`` within the squared reach
        ``bound`` ``(T,)`` of triangle ``t``'s centroid ``centre`` ``(3, T)``, and allowed.

        The squared distances are summed axis by axis as the tree's sphere test does (the
        same bits), in buffers kept between queries (fresh ``(N, T)`` arrays cost more in
        page faults than the arithmetic), and with no matrix product (BLAS would spin a
        second thread)."""
        if self._d2 is None or self._e is None:
            self._d2 = np.empty(self.allowed.shape, np.float32)
            self._e = np.empty(self.allowed.shape, np.float32)
        d2, e = self._d2, self._e
        np.subtract(xs[0][:, None], centre[0], out=d2)
        np.multiply(d2, d2, out=d2)
        for k in (1, 2):
            np.subtract(xs[k][:, None], centre[k], out=e)
            np.multiply(e, e, out=e)
            np.add(d2, e, out=d2)
        near = np.less(d2, bound)
        near &= self.allowed
        return near

    @staticmethod
    def _block(
        xs: np.ndarray, centre: np.ndarray, bound: np.ndarray, allowed: np.ndarray
    ) -> np.ndarray:
        """``near`` for some rows or columns of the pairs (fresh arrays: a small block)."""
        d2 = xs[0][:, None] - centre[0]
        d2 *= d2
        for k in (1, 2):
            e = xs[k][:, None] - centre[k]
            e *= e
            d2 += e
        near = d2 < bound
        near &= allowed
        return near

    def _test(
        self, keys: np.ndarray, xs: np.ndarray, centre: np.ndarray, bound: np.ndarray
    ) -> np.ndarray:
        """The pairs ``keys`` (point * T + triangle) that pass ``near``'s test (its
        arithmetic, pair by pair; all of them are allowed)."""
        point, tri = np.divmod(keys, len(self.triangles))
        d2 = np.take(xs[0], point) - np.take(centre[0], tri)
        d2 *= d2
        for k in (1, 2):
            e = np.take(xs[k], point) - np.take(centre[k], tri)
            e *= e
            d2 += e
        return keys[d2 < np.take(bound, tri)]

    def _moved(
        self, here: np.ndarray, built: np.ndarray, step: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """The points and the triangles (a corner) that moved more than ``step`` since
        ``built`` beyond a rigid motion of the whole cloth: standing still, the mean's
        shift, then the best fit (``moved_rigidly``), the first that leaves the fewest."""
        moved = here - built
        length2 = _norm2(moved)
        step2 = step * step
        if length2.max(initial=0.0) > step2:
            shifted = _norm2(moved - moved.mean(axis=0))
            if shifted.max(initial=0.0) < length2.max(initial=0.0):
                length2 = shifted
            if length2.max(initial=0.0) > step2:
                fitted = _norm2(moved_rigidly(built, here).astype(np.float64))
                if fitted.max(initial=0.0) < length2.max(initial=0.0):
                    length2 = fitted
        fast = length2 > step2
        tri = self.triangles
        return np.flatnonzero(fast), np.flatnonzero(
            fast[tri[:, 0]] | fast[tri[:, 1]] | fast[tri[:, 2]]
        )


def _norm2(rows: np.ndarray) -> np.ndarray:
    """Squared lengths of ``(N, 3)`` rows."""
    out = rows[:, 0] * rows[:, 0]
    out += rows[:, 1] * rows[:, 1]
    out += rows[:, 2] * rows[:, 2]
    return out


def centres(xs: np.ndarray, triangles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Centroids ``(3, T)`` of ``triangles`` at ``xs`` ``(3, N)`` and the radii of their
    bounding spheres about them ``(T,)`` (the farthest corner)."""
    x = [xs.take(triangles[:, k], axis=1) for k in range(3)]
    centre = (x[0] + x[1] + x[2]) / np.float32(3.0)
    radius2 = np.maximum(
        np.maximum(dot(x[0] - centre, x[0] - centre), dot(x[1] - centre, x[1] - centre)),
        dot(x[2] - centre, x[2] - centre),
    )
    return centre, np.sqrt(radius2)


def reach_bound(radius: np.ndarray, grow: float) -> np.ndarray:
    """The squared reach of bounding spheres of ``radius`` grown by ``grow`` (float32, a
    little wide: see ``RELATIVE_SURE``)."""
    reach = radius + np.float32(grow)
    return (reach * reach * np.float32(RELATIVE_SURE)).astype(np.float32)


def spheres(xs: np.ndarray, triangles: np.ndarray, grow: float) -> tuple[np.ndarray, np.ndarray]:
    """Centroids ``(3, T)`` of ``triangles`` at ``xs`` ``(3, N)`` and the squared reach of
    their bounding spheres grown by ``grow`` ``(T,)`` (``centres``, ``reach_bound``)."""
    centre, radius = centres(xs, triangles)
    return centre, reach_bound(radius, grow)


def allowed_at_rest(rest: np.ndarray, triangles: np.ndarray, excluded: float) -> np.ndarray:
    """``(N, T)`` bool: point ``i`` is no corner of triangle ``t`` and its closest point on
    it at ``rest`` ``(3, N)`` float32 is at least ``excluded`` away (the test the tree's
    search makes, in the same float32 arithmetic), a block of points at a time."""
    n, t = rest.shape[1], len(triangles)
    allowed = np.zeros((n, t), dtype=bool)
    ex2 = np.float32(excluded * excluded)
    corners = [rest[:, triangles[:, k]] for k in range(3)]
    block = max(1, 65536 // max(t, 1))
    for start in range(0, n, block):
        ids = np.arange(start, min(start + block, n))
        p = np.repeat(rest[:, ids], t, axis=1)
        q, _, _ = closest_points(p, *(np.tile(c, len(ids)) for c in corners))
        e = p - q
        far = (dot(e, e) >= ex2).reshape(len(ids), t)
        for k in range(3):
            far &= triangles[:, k][None, :] != ids[:, None]
        allowed[ids] = far
    return allowed
