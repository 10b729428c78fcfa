"""Self-collision's all-pairs search for a small cloth (``SelfCollision`` with ``dense``).

Below ``DENSE_PAIRS`` point-triangle pairs, every point is tested against every triangle's
bounding sphere in one ``(N, T)`` pass, and a mask made once leaves out the pairs too near
at rest: a few large numpy calls where the patch tree's walk makes hundreds of small ones.
"""

from __future__ import annotations

import numpy as np

from ..mesh.triangle_geometry import closest_points, dot


class AllPairs:
    """The pairs allowed at rest ``(N, T)`` and the buffers of the sphere test."""

    def __init__(self, rest: np.ndarray, triangles: np.ndarray, excluded: float) -> None:
        self.allowed = allowed_at_rest(rest, triangles, excluded)
        self._d2: np.ndarray | None = None
        self._e: np.ndarray | None = None

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
