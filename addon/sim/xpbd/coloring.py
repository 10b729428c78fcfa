"""Split springs into groups that share no point, for Gauss-Seidel in numpy.

Inside a group every point appears at most once, so one vectorised gather/compute/scatter
solves the whole group exactly as a sequential loop would. Each group is a maximal matching
built in vectorised rounds: every point claims the unassigned spring of best rank touching
it, springs claimed by both their points join the group, and rounds repeat until no spring
can be added. Ranks are spring numbers with their bits reversed (by plain numbers, a chain
of consecutive springs gives one winner per round: hundreds of rounds on a big grid). That
gives about 4 colours per spring kind on a quad grid plus a small tail group, which costs a
whole group solve (numpy call overhead) for a few dozen springs on every substep; so the tail
is then recoloured into the other groups by swapping colours along alternating paths (Kempe
chains: always possible when the springs form a bipartite graph, as every spring kind of a
quad grid does), and whatever cannot be placed stays in the tail. The result depends only
on the input.
"""

from __future__ import annotations

import numpy as np

STRIDE_CHUNK = 1 << 15  # pairs whose strides and colours are worked out at a time


def colour_groups(
    springs: np.ndarray,
    point_count: int,
    by_stride: bool = False,
    columns: tuple[np.ndarray, np.ndarray] | None = None,
) -> list[np.ndarray]:
    """Spring indices per colour, each sorted ascending; together they cover every spring.
    ``by_stride``: try ``stride_colours`` first. ``columns``: the springs' two ends as
    contiguous intp arrays, when the caller has them (else copied from ``springs``)."""
    pairs = np.asarray(springs, dtype=np.int64).reshape(-1, 2)
    index = np.intp  # numpy converts any other index type on every fancy index
    if columns is None:
        columns = pairs[:, 0].astype(index), pairs[:, 1].astype(index)
    first, second = columns
    strided = stride_colours(pairs, point_count, columns) if by_stride else None
    if strided is not None:
        return strided
    count = pairs.shape[0]
    groups: list[np.ndarray] = []
    remaining = np.arange(count, dtype=index)
    # the reversed numbers themselves rank the springs (only their order matters), with
    # ``none`` above them all for a point no candidate claims
    priority, none = reversed_bits(count, index)
    claim = np.full(point_count, none, dtype=index)
    used = np.zeros(point_count, dtype=bool)
    while remaining.size:
        used[:] = False
        parts: list[np.ndarray] = []
        candidates = remaining
        if candidates.size == count:  # the first colour: every spring, in order (read only)
            a, b, rank = first, second, priority
        else:
            a, b = np.take(first, candidates), np.take(second, candidates)
            rank = np.take(priority, candidates)
        while candidates.size:
            # take, index setting (np.put with one value is slower), and one index list for
            # the four compressions: cheaper than fancy and boolean indexing
            if 8 * candidates.size > point_count:  # a big round: one fill is cheaper
                claim.fill(none)
            else:  # reset only what this round touches (rounds shrink fast)
                claim[a] = none
                claim[b] = none
            np.minimum.at(claim, a, rank)
            np.minimum.at(claim, b, rank)
            chosen = np.take(claim, a) == rank
            chosen &= np.take(claim, b) == rank
            picked = np.flatnonzero(chosen)
            parts.append(np.take(candidates, picked))
            used[np.take(a, picked)] = True
            used[np.take(b, picked)] = True
            busy = np.take(used, a)
            busy |= np.take(used, b)
            free = np.flatnonzero(~busy)
            candidates, a, b, rank = (np.take(x, free) for x in (candidates, a, b, rank))
        taken = np.zeros(count, dtype=bool)
        for part in parts:
            taken[part] = True
        groups.append(np.flatnonzero(taken))
        remaining = np.take(remaining, np.flatnonzero(~np.take(taken, remaining)))
    del claim, used, priority, first, second
    degree = int(np.bincount(pairs.ravel(), minlength=point_count).max()) if count else 0
    while len(groups) > max(degree, 1):  # fewer colours than the degree cannot be
        absorbed = _absorb_tail(pairs, groups, point_count)
        if len(absorbed) == len(groups):
            break
        groups = absorbed
    return groups


def stride_colours(
    pairs: np.ndarray, point_count: int, columns: tuple[np.ndarray, np.ndarray] | None = None
) -> list[np.ndarray] | None:
    """Colours from the strides ``d = b - a`` (``a < b``) when they take at most two values
    (a row-major grid's limiters of one level: along rows and along columns), or None.

    Two springs of one stride at a point ``x`` are ``(x - d, x)`` and ``(x, x + d)``, whose
    ``a // d`` differ by one: so colouring by the stride and the parity of ``a // d`` never
    puts a point twice in a colour (unless a pair repeats: checked). When the larger stride
    ``D`` is a multiple ``k`` of the smaller ``s``, ``(a // s + c (a // D) + 2 [d = D]) % 4``
    with ``c = 1 - k`` is tried first: on a grid it steps by one along rows and columns both,
    so a point's four springs get four colours, each colour holding both directions (diagonal
    stripes; one direction per colour lets the cloth stretch more, tests/bench/README.md).
    It holds only where a row's springs stay within a row: checked at both ends.
    ``columns``: the two ends as contiguous arrays, when the caller has them."""
    count = pairs.shape[0]
    if count == 0:
        return None
    first, second = columns if columns is not None else (pairs[:, 0], pairs[:, 1])
    small, large = -1, -1  # the strides' range, a chunk at a time
    for lo in range(0, count, STRIDE_CHUNK):
        stride = np.subtract(first[lo : lo + STRIDE_CHUNK], second[lo : lo + STRIDE_CHUNK])
        np.abs(stride, out=stride)
        low_here, high_here = int(stride.min()), int(stride.max())
        small = low_here if small < 0 else min(small, low_here)
        large = max(large, high_here)
    if small <= 0:
        return None
    if small != large and large % small == 0:
        colour = np.empty(count, dtype=np.uint8)
        step = (1 - large // small) % 4
        for lo in range(0, count, STRIDE_CHUNK):
            part = slice(lo, lo + STRIDE_CHUNK)
            low = np.minimum(first[part], second[part])
            stride = np.maximum(first[part], second[part])
            stride -= low
            wide = stride == large
            if not np.all(wide | (stride == small)):
                return None
            c = low // small
            low //= large
            low *= step
            c += low
            c += 2 * wide
            c &= 3
            colour[part] = c
        # the ends of a pair are its low and high ends in some order: marking them is the same
        groups = _one_per_point(first, second, colour, point_count)
        if groups is not None:
            return groups
    low = np.minimum(first, second)
    stride = np.maximum(first, second)
    stride -= low
    wide = stride == large
    if small != large and not np.all(wide | (stride == small)):
        return None
    colour = np.floor_divide(low, stride, out=stride)
    colour &= 1
    colour += 2 * wide
    return _one_per_point(low, None, colour.astype(np.uint8), point_count)  # None: a repeat


def _one_per_point(
    low: np.ndarray, high: np.ndarray | None, colour: np.ndarray, point_count: int
) -> list[np.ndarray] | None:
    """The springs of each colour (``colour`` uint8, of 4; ascending, empty colours left
    out) when no point has two springs of one colour at its ``low`` ends (and at its ``high``
    ends too, when given), else None. A colour's ends are distinct when marking them marks
    as many points."""
    groups = [g for g in (np.flatnonzero(colour == c) for c in range(4)) if g.size]
    mark = np.zeros(max(point_count, 1), dtype=bool)
    for members in groups:
        mark[:] = False
        mark[np.take(low, members)] = True
        ends = members.size
        if high is not None:
            mark[np.take(high, members)] = True
            ends *= 2
        if np.count_nonzero(mark) != ends:
            return None
    return groups


# A tail larger than this fraction of the springs, or than this many, is left alone: the
# walk is Python, ~15 us a tail spring, while a group of its own costs ~50 us a substep
MAX_TAIL_FRACTION = 0.25
MAX_TAIL_SPRINGS = 4096
MAX_WALK_FACTOR = 64  # total path steps allowed: this many per tail spring, plus the points
MAX_WALK_POINTS = 20_000  # ... up to this many (long walks on a big mesh leave a small tail)
MAX_COLOURS = 32  # the table of springs per point and colour is N x colours


def _absorb_tail(pairs: np.ndarray, groups: list[np.ndarray], n: int) -> list[np.ndarray]:
    """Move the last group's springs into the others where a Kempe swap makes room.

    For a tail spring (u, v) with colour a free at u and b free at v (each point has at most
    one spring per colour, and the tail spring is uncoloured, so with as many colours as the
    largest degree both exist): if a is free at v too, it takes a; else the path from v along
    springs coloured a, b, a, ... has its two colours swapped, which frees a at v; it takes a
    unless the path ended at u (impossible in a bipartite graph). The walk is a chain of
    single lookups: ``item`` reads, no numpy call per step.
    """
    if len(groups) < 2:
        return groups
    tail = groups[-1]
    kept = groups[:-1]
    colours = len(kept)
    too_many = tail.size > min(MAX_TAIL_FRACTION * pairs.shape[0], MAX_TAIL_SPRINGS)
    if too_many or colours > MAX_COLOURS:
        return groups
    colour = np.full(pairs.shape[0], -1, dtype=np.int64)
    at_table = np.full((n, colours), -1, dtype=np.int64)  # the spring of each colour per point
    at_flat = at_table.reshape(-1)
    first, second = pairs[:, 0] * colours, pairs[:, 1] * colours
    for c, members in enumerate(kept):
        colour[members] = c
        at_flat[first[members] + c] = members
        at_flat[second[members] + c] = members
    del first, second
    state = _Colouring(pairs, colour, at_table)
    budget = MAX_WALK_FACTOR * tail.size + min(n, MAX_WALK_POINTS)
    left: list[int] = []
    for spring in tail.tolist():
        u, v = pairs.item(spring, 0), pairs.item(spring, 1)
        free_u = [c for c, s in enumerate(at_table[u].tolist()) if s < 0]
        free_v = [c for c, s in enumerate(at_table[v].tolist()) if s < 0]
        both = [c for c in free_u if c in free_v]
        if both:
            state.assign(spring, both[0])
            continue
        if not free_u or not free_v or budget <= 0:
            left.append(spring)
            continue
        a, b = free_u[0], free_v[0]
        path, ends_at_u = state.alternating_path(v, a, b, u)
        budget -= len(path)
        if ends_at_u:
            left.append(spring)
            continue
        state.swap(path, a, b)
        state.assign(spring, a)
    out = [np.flatnonzero(colour == c) for c in range(colours)]
    if left:
        out.append(np.array(sorted(left), dtype=np.int64))
    return [g for g in out if g.size]


class _Colouring:
    """Springs' colours and, per point, its spring of each colour (-1: the colour is free);
    the arrays are updated in place."""

    def __init__(self, pairs: np.ndarray, colour: np.ndarray, at: np.ndarray) -> None:
        self.pairs, self.colour, self.at = pairs, colour, at

    def assign(self, spring: int, c: int) -> None:
        self.colour[spring] = c
        self.at[self.pairs.item(spring, 0), c] = spring
        self.at[self.pairs.item(spring, 1), c] = spring

    def alternating_path(self, start: int, a: int, b: int, avoid: int) -> tuple[list[int], bool]:
        """Springs from ``start`` coloured a, b, a, ...; and whether the path reaches ``avoid``."""
        path: list[int] = []
        point, want, other = start, a, b
        while True:
            spring = self.at.item(point, want)
            if spring < 0:
                return path, False
            path.append(spring)
            x = self.pairs.item(spring, 0)
            point = self.pairs.item(spring, 1) if x == point else x
            if point == avoid:
                return path, True
            want, other = other, want

    def swap(self, path: list[int], a: int, b: int) -> None:
        for spring in path:  # clear first: neighbours on the path hand their colours over
            c = self.colour.item(spring)
            self.at[self.pairs.item(spring, 0), c] = -1
            self.at[self.pairs.item(spring, 1), c] = -1
        for spring in path:
            self.assign(spring, b if self.colour.item(spring) == a else a)


def reversed_bits(count: int, dtype: type = np.int64) -> tuple[np.ndarray, int]:
    """Each index of ``range(count)`` with its ``bits`` lowest bits read backwards (``bits``
    just enough for ``count - 1``), and ``2 ** bits``, above every one of them.

    Neighbours in numbering get far-apart values (all even indices before all odd ones, and
    so on recursively), so along a chain of consecutively numbered springs ranked by them
    every other spring wins its first round instead of one per chain. The values are
    distinct: they rank the indices as ``bit_reversed_ranks`` does.
    """
    bits = max(int(count - 1).bit_length(), 1)
    # reversed in k bits, the numbers below 2 ** k are those in k - 1 bits doubled, then
    # the same plus one (the top bit read backwards is the lowest): k doublings
    out: np.ndarray = np.zeros(1 << bits, dtype=dtype)
    size = 1
    for _ in range(bits):
        half = out[:size]
        half *= 2
        np.add(half, 1, out=out[size : 2 * size])
        size *= 2
    return out[:count], 1 << bits


def bit_reversed_ranks(count: int) -> np.ndarray:
    """A permutation of ``range(count)`` ranking each index by its bits read backwards
    (``reversed_bits``); the reversed numbers are distinct and below ``2 ** bits``, so their
    ranks come from a running count over that range."""
    values, top = reversed_bits(count)
    present = np.zeros(top, dtype=np.int64)
    present[values] = 1
    return np.cumsum(present)[values] - 1
