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

from .neighbours import (
    COLUMN_MAX_DEGREE,
    Block,
    blocks,
    directed,
    dot_columns,
    first_min,
    first_min_columns,
    pair_dots,
    slot_columns,
    unit_directions,
)

STRAIGHT_COSINE = -0.9  # a chain a - v - b counts as straight past about 154 degrees
MAX_NEIGHBOURS = 16  # partners compared per point (keeps dense fans linear in cost)
CHUNK_POINTS = 1 << 17  # points whose partner tables are compared at a time


def chain_pairs(
    pairs: np.ndarray, limits: np.ndarray, positions: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Pairs ``(a, b)`` (``a < b``, unique, sorted) joined through a shared point along a
    straight line.

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
    assert graph.order is not None
    direction = unit_directions(graph, positions)
    ends: list[np.ndarray] = []
    partners: list[np.ndarray] = []
    for block in blocks(graph):
        width = min(block.degree, MAX_NEIGHBOURS)
        if block.degree <= COLUMN_MAX_DEGREE:
            e, f = _column_chains(direction, block, width)
            ends.append(e)
            partners.append(f)
            continue
        for lo in range(0, block.points.size, CHUNK_POINTS):
            edges = block.edges[lo : lo + CHUNK_POINTS]
            # a partner with the same end (a repeated pair, or the pair itself) has a
            # cosine >= 0, so it never passes the straightness test: no need to mask it
            cosine = pair_dots(direction, edges, width)
            cosine[:, np.arange(width), np.arange(width)] = np.inf
            best, best_cos = first_min(cosine)
            keep = best_cos <= STRAIGHT_COSINE
            ends.append(edges[keep])
            partners.append(np.take_along_axis(edges[:, :width], best, axis=1)[keep])
    del direction
    if not ends:
        return empty
    e, f = np.concatenate(ends), np.concatenate(partners)
    del ends, partners
    lim = np.concatenate([limits, limits])[graph.order]
    total = lim[e] + lim[f]
    a, b = graph.dst[e], graph.dst[f]
    del e, f, lim, graph
    keys = np.minimum(a, b) * n
    keys += np.maximum(a, b)
    del a, b
    keys, total = _sorted_by_key(keys, total, n)
    first = np.ones(keys.size, dtype=bool)
    np.not_equal(keys[1:], keys[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    if starts.size < keys.size:
        total = np.minimum.reduceat(total, starts)
        keys = keys[starts]
    out = np.empty((keys.size, 2), dtype=np.int64)
    np.floor_divide(keys, n, out=out[:, 0])
    np.subtract(keys, out[:, 0] * n, out=out[:, 1])
    return out, total


def _sorted_by_key(keys: np.ndarray, values: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``keys`` (below ``n * n``) ascending and ``values`` in the same order (among equal keys
    any order: the caller takes their minimum). With room in an int64, each key carries its
    index in its low bits and one plain sort does it (twice as fast as an argsort)."""
    shift = max(int(keys.size - 1).bit_length(), 1)
    if (max(n, 1) ** 2) << shift >= 1 << 63:
        order = np.argsort(keys)
        return keys[order], values[order]
    packed = keys << shift
    packed |= np.arange(keys.size, dtype=np.int64)
    packed.sort()
    index = packed & ((1 << shift) - 1)
    packed >>= shift
    return packed, np.take(values, index)


def _column_chains(
    direction: np.ndarray, block: Block, width: int
) -> tuple[np.ndarray, np.ndarray]:
    """``chain_pairs``' choice for a low-degree block, slot pair by slot pair: the pairs
    ``e`` (indices into the directed arrays) whose best partner ``f`` is straight enough."""
    vectors = slot_columns(direction, block)
    size = block.points.size
    out, term = np.empty(size), np.empty(size)

    def cosine(i: int, j: int) -> np.ndarray:
        return dot_columns(vectors, i, j, out, term)

    slot, best = first_min_columns(block.degree, width, size, cosine)
    keep = best <= STRAIGHT_COSINE
    # a chain whose two parts choose each other is found from both: keep it once (the
    # partner's value is the same cosine, so both are kept or neither)
    # (row i drops a partner j < i that chose i: slot pair by slot pair, no gather)
    both = np.empty(size, dtype=bool)
    for i in range(1, block.degree):
        for j in range(i):
            np.equal(slot[i], j, out=both)
            both &= slot[j] == i
            keep[i] &= ~both
    row = np.nonzero(keep)
    base = block.base[row[1]]
    return base + row[0], base + slot[keep]


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
