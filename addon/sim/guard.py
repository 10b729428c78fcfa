"""Explosion detection: a state is bad if it is non-finite, too fast or torn apart.

Checked once per frame on the solver's ``(N, 4)`` storage, cheap enough to always run: one
``isfinite`` pass, the fastest free point, and the longest structural spring that has a
free end (springs between two pinned points follow the animation, not the solver).
"""

from __future__ import annotations

import numpy as np

from .model import ClothModel, SpringKind
from .rows import squared_lengths


def squared_norms(rows: np.ndarray) -> np.ndarray:
    """``|row|^2`` of every row of an ``(N, 4)`` array (the 4th column is zero)."""
    return squared_lengths(rows, np.empty(len(rows), rows.dtype), np.empty_like(rows))


class ExplosionGuard:
    def __init__(self, model: ClothModel, max_speed: float, max_stretch: float) -> None:
        free = ~model.pinned
        watched = (model.kinds == SpringKind.STRUCTURAL) & (
            free[model.springs[:, 0]] | free[model.springs[:, 1]]
        )
        self.a = model.springs[watched, 0]
        self.b = model.springs[watched, 1]
        rest = model.rest_lengths[watched]
        typical = float(np.median(rest)) if rest.size else 0.0
        # zero-length rest springs are judged against the typical length instead
        self.limit_squared = (max_stretch * np.maximum(rest, typical)) ** 2 + 1e-12
        self.free = free
        self.max_speed_squared = max_speed * max_speed

    def problem(
        self,
        pos: np.ndarray,
        vel: np.ndarray,
        start: np.ndarray | None = None,
        frame_dt: float = 0.0,
    ) -> str | None:
        """Why the ``(N, 4)`` state is unusable, or None when it is fine.

        With ``start`` (the positions at the start of the frame) and ``frame_dt``, a free
        point that moved faster than the limit over the frame also counts: a constraint can
        snap a point far in one substep and leave it slow by the end of the frame.
        """
        if not (np.isfinite(pos).all() and np.isfinite(vel).all()):
            return "non-finite positions or velocities"
        if self.free.any():
            fastest = float(squared_norms(vel)[self.free].max())
            if start is not None and frame_dt > 0.0:
                moved = float(squared_norms(pos - start)[self.free].max()) / frame_dt**2
                fastest = max(fastest, moved)
            if fastest > self.max_speed_squared:
                return f"a point moves at {fastest**0.5:.3g} m/s"
        if self.a.size:
            stretch2 = squared_norms(pos[self.b] - pos[self.a]) / self.limit_squared
            if float(stretch2.max()) > 1.0:
                return "a spring is stretched beyond the limit"
        return None
