"""Long-range stretch limiters: one-sided constraints along straight chains of springs.

One Gauss-Seidel pass per substep moves a correction only a spring or two, so a long chain
under load (cloth hanging over a ball, pulled by its own weight) stretches far more than its
stiffness says. Tethers fix that only where the cloth runs straight to a pin. A limiter joins
the two ends ``a`` and ``b`` of a nearly straight chain ``a - v - b`` and keeps ``|a - b|``
at most the chain's rest length along the springs (``limit(a, v) + limit(v, b)``), so a pull
travels 2, 4, 8 springs per pass. By the triangle inequality an unstretched cloth always
satisfies every limiter, whatever its rest shape: limiters never resist bending, folding or
compression, only stretching.

Level 1 chains two structural springs (on a quad grid: the same pairs as the bend springs),
level 2 two level-1 chains that continue each other, and so on (``limiter_chains``).
"""

from __future__ import annotations

import numpy as np

from .limiter_chains import chain_levels

STRAIGHT_COSINE = -0.75  # a chain a - v - b counts as straight past about 139 degrees
TURN_COSINE = -0.5  # a spring goes on into its most opposite one if that turns < 60 degrees
MAX_NEIGHBOURS = 16  # partners compared per point (keeps dense fans linear in cost)


def limiter_levels(
    structural: np.ndarray, lengths: np.ndarray, positions: np.ndarray, levels: int
) -> list[tuple[np.ndarray, np.ndarray]]:
    """``levels`` sets of limiters (pairs ``a < b`` ascending, limits), spanning 2, 4, 8 ...
    structural springs (``limiter_chains.chain_levels``), up to the first empty level."""
    pairs = np.asarray(structural, dtype=np.int64).reshape(-1, 2)
    levels = max(int(levels), 0)
    if not levels or not pairs.size:
        return []
    return chain_levels(
        pairs,
        np.asarray(lengths, dtype=np.float64).reshape(-1),
        np.asarray(positions, dtype=np.float64),
        levels,
        STRAIGHT_COSINE,
        TURN_COSINE,
        MAX_NEIGHBOURS,
    )
