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

from .neighbours import blocks, directed, first_min, pair_dots, unit_directions

STRAIGHT_COSINE = -0.9  # a chain a - v - b counts as straight past about 154 degrees
MAX_NEIGHBOURS = 16  # partners compared per point (keeps dense fans linear in cost)
CHUNK_POINTS = 1 << 17  # points whose partner tables are compared at a time


def chain_pairs(
    pairs: np.ndarray, limits: np.ndarray, positions: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Pairs ``(a, b)`` (``a < b``, unique) joined through a shared point along a straight line.

    For every pair ``(v, a)`` the partner ``b`` of ``v`` most opposite to ``a`` is chosen
    (among ``v``'s first ``MAX_NEIGHBOURS`` partners in input order; ties: the first); the
    pair is kept when the angle ``a - v - b`` is straight enough. The limit is the sum of the
    two parts' limits (the smallest one when a pair is found through several points).
    """
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    limits = np.asarray(limits, dtype=np.float64).reshape(-1)
    empty = (np.empty((0, 2), dtype=np.int64), np.empty(0, dtype=np.float64))
    if not pairs.size:
        return empty
    n = int(positions.shape[0])
    graph = directed(pairs, n)
    lim = np.concatenate([limits, limits])[graph.order]
    direction = unit_directions(graph, positions)
    ends: list[np.ndarray] = []
    partners: list[np.ndarray] = []
    for block in blocks(graph):
        width = min(block.degree, MAX_NEIGHBOURS)
        for lo in range(0, block.points.size, CHUNK_POINTS):
            edges = block.edges[lo : lo + CHUNK_POINTS]
            candidates = edges[:, :width]
            cosine = pair_dots(direction, edges, width)
            ends_of = graph.dst[edges]
            same = ends_of[:, :, None] == ends_of[:, None, :width]
            np.copyto(cosine, np.inf, where=same)
            best, best_cos = first_min(cosine)
            keep = best_cos <= STRAIGHT_COSINE
            ends.append(edges[keep])
            partners.append(np.take_along_axis(candidates, best, axis=1)[keep])
    if not ends:
        return empty
    e, f = np.concatenate(ends), np.concatenate(partners)
    a, b = graph.dst[e], graph.dst[f]
    total = lim[e] + lim[f]
    keys = np.minimum(a, b) * n + np.maximum(a, b)
    order = np.argsort(keys, kind="stable")
    keys, total = keys[order], total[order]
    first = np.ones(keys.size, dtype=bool)
    first[1:] = keys[1:] != keys[:-1]
    starts = np.flatnonzero(first)
    total = np.minimum.reduceat(total, starts) if starts.size else total
    keys = keys[starts]
    return np.stack([keys // n, keys % n], axis=1), total


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
