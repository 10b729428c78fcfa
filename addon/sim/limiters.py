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
level 2 chains two level-1 limiters, and so on.
"""

from __future__ import annotations

import numpy as np

STRAIGHT_COSINE = -0.9  # a chain a - v - b counts as straight past about 154 degrees
MAX_NEIGHBOURS = 16  # partners compared per point (keeps dense fans linear in cost)


def chain_pairs(
    pairs: np.ndarray, limits: np.ndarray, positions: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Pairs ``(a, b)`` (``a < b``, unique) joined through a shared point along a straight line.

    For every pair ``(v, a)`` the partner ``b`` of ``v`` most opposite to ``a`` is chosen; the
    pair is kept when the angle ``a - v - b`` is straight enough. The limit is the sum of the
    two parts' limits (the smallest one when a pair is found through several points).
    """
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    limits = np.asarray(limits, dtype=np.float64).reshape(-1)
    empty = (np.empty((0, 2), dtype=np.int64), np.empty(0, dtype=np.float64))
    if not pairs.size:
        return empty
    src = np.concatenate([pairs[:, 0], pairs[:, 1]])
    dst = np.concatenate([pairs[:, 1], pairs[:, 0]])
    lim = np.concatenate([limits, limits])
    order = np.argsort(src, kind="stable")
    src, dst, lim = src[order], dst[order], lim[order]
    n_edges = src.size
    starts = np.searchsorted(src, src, side="left")
    degree = np.searchsorted(src, src, side="right") - starts
    direction = positions[dst] - positions[src]
    norm = np.linalg.norm(direction, axis=1)
    direction /= np.maximum(norm, 1e-30)[:, None]
    best_cos = np.full(n_edges, np.inf)
    best = np.full(n_edges, -1, dtype=np.int64)
    own = np.arange(n_edges)
    for offset in range(min(int(degree.max()), MAX_NEIGHBOURS)):
        other = starts + offset
        valid = (offset < degree) & (other != own)
        other = np.where(valid, other, own)
        cos = np.einsum("ij,ij->i", direction, direction[other])
        better = valid & (cos < best_cos) & (dst[other] != dst)
        best_cos = np.where(better, cos, best_cos)
        best = np.where(better, other, best)
    keep = (best >= 0) & (best_cos <= STRAIGHT_COSINE)
    a = dst[keep]
    b = dst[best[keep]]
    total = lim[keep] + lim[best[keep]]
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    n = int(positions.shape[0])
    keys = lo * n + hi
    order = np.lexsort((total, keys))
    keys, total = keys[order], total[order]
    first = np.ones(keys.size, dtype=bool)
    first[1:] = keys[1:] != keys[:-1]
    keys, total = keys[first], total[first]
    out = np.stack([keys // n, keys % n], axis=1) if n else empty[0]
    return out, total


def limiter_levels(
    structural: np.ndarray, lengths: np.ndarray, positions: np.ndarray, levels: int
) -> list[tuple[np.ndarray, np.ndarray]]:
    """``levels`` sets of limiters, spanning 2, 4, 8 ... structural springs."""
    out: list[tuple[np.ndarray, np.ndarray]] = []
    pairs, limits = np.asarray(structural, dtype=np.int64).reshape(-1, 2), np.asarray(lengths)
    for _ in range(max(int(levels), 0)):
        pairs, limits = chain_pairs(pairs, limits, positions)
        if not pairs.size:
            break
        out.append((pairs, limits))
    return out
