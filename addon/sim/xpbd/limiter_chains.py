"""Stretch limiter chains by pointer doubling: every level from the one below by gathers.

Every directed structural spring ``x = (a -> v)`` goes on into ``next(x) = (v -> b)``, ``b``
the partner of ``v`` most opposite ``a`` (among its first few; turning less than 60
degrees). Level ``k``'s chain from ``x`` is level ``k - 1``'s chain from ``x`` (level 0: the
spring) followed by the one from the spring after its end, kept when both exist and their
joint is straight enough (the cosine of the unit vectors from the joint to the two ends,
as the former level-by-level search compared partners): ``2 ** k`` springs. Per chain a few
arrays (the next chain's first spring, the end point, the summed limit ...) are gathered
at the next chain, so no level sorts or compares directions again; the work goes in
chunks whose arrays stay in cache (fresh memory is costly to touch, most at 1M points).
Where every chain down the point numbers mirrors one up them (a grid), only those up them
are followed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..mesh.neighbours import (
    COLUMN_MAX_DEGREE,
    Directed,
    blocks,
    dot_columns,
    first_min,
    first_min_columns,
    pair_dots,
    sort_keys,
)

CHUNK = 1 << 15  # chains (or points) handled at a time


def chain_levels(
    pairs: np.ndarray,
    lengths: np.ndarray,
    positions: np.ndarray,
    levels: int,
    straight: float,
    turn: float,
    max_neighbours: int,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per level ``1 .. levels`` (stopping at the first empty one): the pairs ``(a < b)``
    (unique, ascending) joined by a chain, not the same point at both ends, and the
    smallest sum of limits along a chain joining them."""
    n = int(positions.shape[0])
    graph, scratch = springs_graph(pairs, n)
    size = graph.src.size
    columns = [np.ascontiguousarray(positions[:, axis], dtype=np.float64) for axis in range(3)]
    state = Chains.allocate(size, graph.src.dtype)
    continuations(graph, columns, turn, max_neighbours, state, scratch)
    del scratch
    half = size // 2
    assert graph.order is not None
    for lo in range(0, size, CHUNK):
        part = slice(lo, min(lo + CHUNK, size))
        order = graph.order[part]
        np.take(lengths, np.where(order >= half, order - half, order), out=state.total[part])
        state.end[part] = graph.dst[part]
        _squared_chords(columns, graph.src[part], graph.dst[part], state.chord[part])
    state.valid[:size] = True
    src = graph.src.copy()  # the graph's block goes before the next level's is made
    del graph
    forward = _one_way(state, src)
    if forward is not None:  # only the chains up the point numbers need be followed
        state, src = _compacted(state, src, forward)
        size = src.size
        del forward
    spare = Chains.allocate(size, src.dtype)
    spare.mirrors = state.mirrors
    out: list[tuple[np.ndarray, np.ndarray]] = []
    for _ in range(levels):
        for lo in range(0, size, CHUNK):
            part = slice(lo, min(lo + CHUNK, size))
            double(state, spare, src, columns, part, straight)
        state, spare = spare, state
        found = level_pairs(state, src, n)
        if not found[0].size:
            break
        out.append(found)
    return out


def _one_way(state: Chains, src: np.ndarray) -> np.ndarray | None:
    """The springs running up the point numbers (``src < dst``), when the chains from the
    others are their mirrors: each spring goes on into one running the same way, and
    continuations are mutual (``x`` goes on into ``y``, so ``y`` reversed into ``x``
    reversed): then every chain down the numbers is a chain up them reversed, with the same
    joints, halves and limit. None otherwise (or with a spring from a point to itself)."""
    size = src.size
    forward = np.empty(size + 1, dtype=bool)
    forward[size] = False
    for lo in range(0, size, CHUNK):
        part = slice(lo, min(lo + CHUNK, size))
        np.less(src[part], state.end[part], out=forward[part])
    if 2 * int(np.count_nonzero(forward)) != size:
        return None
    for lo in range(0, size, CHUNK):
        part = slice(lo, min(lo + CHUNK, size))
        follow = state.jump[part]
        free = follow == size  # no continuation: nothing to check
        if not np.all(free | (np.take(forward, follow) == forward[part])):
            return None
        back = np.take(state.jump, np.take(state.back, follow))
        if not np.all(free | (back == state.back[part])):
            return None
    return np.flatnonzero(forward[:size])


def _compacted(state: Chains, src: np.ndarray, keep: np.ndarray) -> tuple[Chains, np.ndarray]:
    """The chains ``keep`` alone, renumbered (their continuations are among them)."""
    size, count = src.size, keep.size
    index = src.dtype
    place = np.full(size + 1, count, dtype=index)
    out = Chains.allocate(count, index)
    for lo in range(0, count, CHUNK):
        hi = min(lo + CHUNK, count)
        place[keep[lo:hi]] = np.arange(lo, hi, dtype=index)
    for lo in range(0, count, CHUNK):
        part, rows = slice(lo, min(lo + CHUNK, count)), keep[lo : lo + CHUNK]
        np.take(place, np.take(state.jump, rows), out=out.jump[part])
        np.take(state.end, rows, out=out.end[part])
        np.take(state.total, rows, out=out.total[part])
        np.take(state.chord, rows, out=out.chord[part])
    out.valid[:count] = True
    out.back[:count] = count
    out.mirrors = False  # none runs down the numbers: no mirror is looked at
    return out, src[keep]


def springs_graph(pairs: np.ndarray, n: int) -> tuple[Directed, np.ndarray]:
    """``neighbours.directed(pairs, n)`` with int32 arrays where they fit, built in chunks;
    and scratch bytes for ``continuations``. All in one block of memory (returned whole to
    the system when dropped, where separate arrays could leave holes in the heap)."""
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    half = pairs.shape[0]
    size = 2 * half
    index = np.int32 if max(size, n) < (1 << 31) - 1 else np.int64
    width = np.dtype(index).itemsize
    spare = max(8 * size, 2 * width * (size + 1))
    block = np.empty(spare + 3 * width * size, dtype=np.uint8)
    keys = block[: 8 * size].view(np.int64)
    ints = block[spare:].view(index)
    src, order, dst = ints[:size], ints[size : 2 * size], ints[2 * size :]
    for lo in range(0, half, CHUNK):
        hi = min(lo + CHUNK, half)
        ids = np.arange(lo, hi, dtype=np.int64)
        np.multiply(pairs[lo:hi, 0], size, out=keys[lo:hi])
        keys[lo:hi] += ids
        np.multiply(pairs[lo:hi, 1], size, out=keys[half + lo : half + hi])
        keys[half + lo : half + hi] += ids + half
    sort_keys(keys)
    flat = pairs.reshape(-1)
    for lo in range(0, size, CHUNK):
        hi = min(lo + CHUNK, size)
        s = keys[lo:hi] // size
        p = keys[lo:hi] - s * size
        src[lo:hi] = s
        order[lo:hi] = p
        # the doubled pair p: forward (p, 1) below half, backward (p - half, 0) above
        back = p >= half
        p *= 2
        p += 1
        p[back] -= 2 * half + 1
        np.take(flat, p, out=dst[lo:hi])
    del keys
    start = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=start[1:])
    return Directed(src, dst, order, start, n), block[:spare]


def _units(columns: list[np.ndarray], frm: list[np.ndarray], to: np.ndarray) -> list[np.ndarray]:
    """Unit vectors from the points ``frm`` (their coordinates per axis) to the points
    ``to``, per axis, as ``neighbours.unit_directions`` computes them."""
    out = [np.take(c, to) - f for c, f in zip(columns, frm, strict=True)]
    norm = np.sqrt(out[0] * out[0] + out[1] * out[1] + out[2] * out[2])
    np.maximum(norm, 1e-30, out=norm)
    for axis in out:
        axis /= norm
    return out


def continuations(
    graph: Directed,
    columns: list[np.ndarray],
    turn: float,
    max_neighbours: int,
    out: Chains,
    scratch: np.ndarray,
) -> None:
    """Per directed pair ``x = (a -> v)`` into ``out.jump``: the pair ``(v -> b)`` continuing
    it (``b`` most opposite ``a``, their cosine at most ``turn``), or E (the pair count)
    where none does; and into ``out.back`` each pair's reverse."""
    assert graph.order is not None
    size = graph.src.size
    index = graph.src.dtype
    width = np.dtype(index).itemsize
    opposite = scratch[: width * (size + 1)].view(index)  # per (v -> a): the (v -> b) opposite
    opposite.fill(size)
    place = scratch[width * (size + 1) : width * (2 * size + 1)].view(index)
    for block in blocks(graph):
        width = min(block.degree, max_neighbours)
        for lo in range(0, block.points.size, CHUNK):
            points = block.points[lo : lo + CHUNK]
            base = block.base[lo : lo + CHUNK]
            if block.degree <= COLUMN_MAX_DEGREE:
                ends = [graph.dst[base + j] for j in range(block.degree)]
                here = [np.take(c, points) for c in columns]
                vectors = [_units(columns, here, e) for e in ends]
                slot, rows = _column_opposites(vectors, block.degree, width, turn)
                at = base[rows[1]]
                opposite[at + rows[0]] = at + slot[rows]
                continue
            edges = base[:, None] + np.arange(block.degree, dtype=np.int64)
            frm = [np.take(c, graph.src[edges.ravel()]) for c in columns]
            local = np.array(_units(columns, frm, graph.dst[edges.ravel()]))
            cos = pair_dots(local, np.arange(edges.size).reshape(edges.shape), width)
            cos[:, np.arange(width), np.arange(width)] = np.inf
            choice, choice_cos = first_min(cos)
            keep = choice_cos <= turn
            opposite[edges[keep]] = np.take_along_axis(edges[:, :width], choice, axis=1)[keep]
    # the reverse of directed pair d is the other half of its input pair
    for lo in range(0, size, CHUNK):
        hi = min(lo + CHUNK, size)
        place[graph.order[lo:hi]] = np.arange(lo, hi, dtype=index)
    reverse, follow = out.back, out.jump
    half = size // 2
    for lo in range(0, size, CHUNK):
        hi = min(lo + CHUNK, size)
        other = graph.order[lo:hi] + half
        other[other >= size] -= size
        np.take(place, other, out=reverse[lo:hi])
        np.take(opposite, reverse[lo:hi], out=follow[lo:hi])


def _column_opposites(
    vectors: list[list[np.ndarray]], degree: int, width: int, straight: float
) -> tuple[np.ndarray, tuple[np.ndarray, ...]]:
    """Per slot ``(degree, V)`` the most opposite slot, and where it is straight enough."""
    size = vectors[0][0].size
    out, term = np.empty(size), np.empty(size)

    def cosine(i: int, j: int) -> np.ndarray:
        return dot_columns(vectors, i, j, out, term)

    slot, best = first_min_columns(degree, width, size, cosine)
    return slot, np.nonzero(best <= straight)


@dataclass
class Chains:
    """One level's chains, one entry per directed spring (where the chain starts) and a last
    one E, the dead end leading to itself: the next chain's first spring (``jump``), the end
    point, the summed limit (``total``), the squared chord, whether the chain exists, and its
    last spring reversed (where its mirror starts). All in one block of memory."""

    jump: np.ndarray
    end: np.ndarray
    back: np.ndarray
    total: np.ndarray
    chord: np.ndarray
    valid: np.ndarray
    mirrors: bool = True  # whether chains down the point numbers are followed (need ``back``)

    @staticmethod
    def allocate(size: int, index: type | np.dtype) -> Chains:
        count = size + 1
        width = np.dtype(index).itemsize
        block = np.empty(count * (16 + 3 * width + 1), dtype=np.uint8)
        floats = block[: 16 * count].view(np.float64)
        ints = block[16 * count : (16 + 3 * width) * count].view(index)
        out = Chains(
            ints[:count],
            ints[count : 2 * count],
            ints[2 * count :],
            floats[:count],
            floats[count:],
            block[(16 + 3 * width) * count :].view(bool),
        )
        out.jump[size] = out.back[size] = size
        out.end[size] = 0
        out.total[size] = np.inf
        out.chord[size] = 0.0
        out.valid[size] = False
        return out


def _squared_chords(
    columns: list[np.ndarray], frm: np.ndarray, to: np.ndarray, out: np.ndarray
) -> np.ndarray:
    """``|p[to] - p[frm]| ** 2`` into ``out``."""
    term = np.empty_like(out)
    # a take converts any other index type on each call: once here for the three axes
    frm, to = frm.astype(np.intp, copy=False), to.astype(np.intp, copy=False)
    for axis, c in enumerate(columns):
        d = np.take(c, to)
        d -= np.take(c, frm)
        if axis:
            np.multiply(d, d, out=term)
            out += term
        else:
            np.multiply(d, d, out=out)
    return out


def double(
    old: Chains,
    new: Chains,
    src: np.ndarray,
    columns: list[np.ndarray],
    part: slice,
    straight: float,
) -> None:
    """``new`` for the chains ``part``: each chain of ``old`` followed by the one after it,
    kept where the two turn straight enough at their joint: with ``a``, ``b`` the halves'
    squared chords and ``c`` the whole's, the joint's cosine is ``(a + b - c) / 2 sqrt(a b)``
    (no direction is gathered, and ``c`` is the next level's ``a``)."""
    g = old.jump[part].astype(np.intp, copy=False)  # converted once for the six takes
    ok = np.take(old.valid, g, mode="clip")
    ok &= old.valid[part]
    end = np.take(old.end, g, out=new.end[part], mode="clip")
    c = _squared_chords(columns, src[part], end, new.chord[part])
    a = old.chord[part]
    b = np.take(old.chord, g, mode="clip")
    bound = a * b
    np.sqrt(bound, out=bound)
    bound *= 2.0 * straight
    ok &= bound < 0.0  # no zero-length half
    b += a
    b -= c
    ok &= b <= bound
    new.valid[part] = ok
    np.add(old.total[part], np.take(old.total, g, mode="clip"), out=new.total[part])
    if old.mirrors:
        np.take(old.back, g, out=new.back[part], mode="clip")
    np.take(old.jump, g, out=new.jump[part], mode="clip")


def level_pairs(chains: Chains, src: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The pairs ``(a < b)`` (unique, ascending) of the valid chains, their smallest limits.
    A chain from ``a`` to ``b < a`` whose mirror (from its last spring reversed) ends at
    ``a`` with no larger limit is left to the mirror."""
    size = src.size
    keep_all = np.empty(size, dtype=bool)
    count = 0
    for lo in range(0, size, CHUNK):  # which chains are kept: the output is then made once
        part = slice(lo, min(lo + CHUNK, size))
        a, b, total = src[part], chains.end[part], chains.total[part]
        keep = np.logical_and(chains.valid[part], a != b, out=keep_all[part])
        if chains.mirrors:  # only the kept backward chains look up their mirrors
            back = np.flatnonzero(keep & (a > b))
            if back.size:
                mirror = chains.back[part][back]
                mirrored = np.take(chains.valid, mirror, mode="clip")
                mirrored &= np.take(chains.end, mirror, mode="clip") == a[back]
                mirrored &= np.take(chains.total, mirror, mode="clip") <= total[back]
                keep[back[mirrored]] = False
        count += int(np.count_nonzero(keep))
    pairs, lim = _pairs_and_limits(count)
    ascending = True
    last = -1
    at = 0
    for lo in range(0, size, CHUNK):  # the kept chains' pairs and limits written in place
        part = slice(lo, min(lo + CHUNK, size))
        rows = np.flatnonzero(keep_all[part])
        if not rows.size:
            continue
        here = slice(at, at + rows.size)
        at += rows.size
        a, b = src[part].take(rows), chains.end[part].take(rows)
        pair = pairs[here]
        np.minimum(a, b, out=pair[:, 0])
        np.maximum(a, b, out=pair[:, 1])
        chains.total[part].take(rows, out=lim[here])
        if ascending:
            keys = pair[:, 0] * n
            keys += pair[:, 1]
            ascending = bool(keys[0] > last) and bool(np.all(keys[1:] > keys[:-1]))
            last = int(keys[-1])
    del keep_all
    if ascending:
        return pairs, lim
    keys = pairs[:, 0] * n
    keys += pairs[:, 1]
    del pairs
    keys, lim = sorted_by_key(keys, lim, n)
    first = np.ones(keys.size, dtype=bool)
    np.not_equal(keys[1:], keys[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    if starts.size < keys.size:
        lim = np.minimum.reduceat(lim, starts)
        keys = keys[starts]
    out, limits = _pairs_and_limits(keys.size)
    np.floor_divide(keys, n, out=out[:, 0])
    np.subtract(keys, out[:, 0] * n, out=out[:, 1])
    limits[:] = lim
    return out, limits


def _pairs_and_limits(count: int) -> tuple[np.ndarray, np.ndarray]:
    """Empty ``(count, 2)`` int64 pairs and ``(count,)`` limits in one block of memory (a
    level's output lives until it is coloured: one block leaves no hole in the heap)."""
    block = np.empty(24 * count, dtype=np.uint8)
    return block[: 16 * count].view(np.int64).reshape(count, 2), block[16 * count :].view(
        np.float64
    )


def sorted_by_key(keys: np.ndarray, values: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``keys`` (below ``n * n``) ascending and ``values`` in the same order (among equal keys
    any order: the caller takes their minimum). With room in an int64, each key carries its
    index in its low bits and one plain sort does it (twice as fast as an argsort)."""
    shift = max(int(keys.size - 1).bit_length(), 1)
    if (max(n, 1) ** 2) << shift >= 1 << 63:
        order = np.argsort(keys)
        return keys[order], values[order]
    packed = keys << shift
    packed |= np.arange(keys.size, dtype=np.int64)
    sort_keys(packed)
    index = packed & ((1 << shift) - 1)
    packed >>= shift
    return packed, np.take(values, index)
