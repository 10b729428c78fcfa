"""Spring sets built from a mesh's faces: structural, shear and bend, without duplicates.

Every builder returns an ``(k, 2) int64`` array of undirected pairs with ``i < j``, no
self-pairs and no repeats, in a deterministic order (sorted by ``(i, j)``). Pairs are encoded
as ``i * n + j`` in one int64 so that deduplication is one sort (``neighbours.unique_keys``).

Definitions (what "shear" and "bend" mean here):

- structural: the unique edges of the faces.
- shear: inside every face with four or more corners, each pair of corners that are not
  adjacent around the face (the two diagonals of a quad), minus pairs that are already edges.
- bend: through every vertex ``v``, a pair of its edge neighbours ``a`` and ``b`` that lie
  *opposite* through ``v``: ``a`` and ``b`` are not consecutive around ``v`` in any face
  (``a, v, b`` are not three successive corners of one face), and, among the neighbours that
  qualify, ``b`` is the one most nearly opposite ``a`` in the rest shape (smallest cosine of
  the angle ``a-v-b``), or ``a`` is the one most nearly opposite ``b``; and the angle ``a-v-b``
  is wider than 135 degrees, so the chain through ``v`` is nearly straight. On a quad grid
  this gives exactly the two straight "skip one" pairs through an inner vertex and one along
  a border (none at a corner); on a regular fan of six triangles the three pairs at 180
  degrees through the centre (the rim turns by 60 degrees per vertex: none there). Pairs that
  already are structural or shear springs are left out.
"""

from __future__ import annotations

import numpy as np

from .neighbours import (
    COLUMN_MAX_DEGREE,
    Block,
    Directed,
    blocks,
    directed,
    dot_columns,
    first_min,
    first_min_columns,
    unique_keys,
)

CHUNK_POINTS = 1 << 17  # points whose neighbour tables are compared at a time
STRAIGHT_COSINE = -np.sqrt(0.5)  # bend pairs need an angle a-v-b wider than 135 degrees


def _as_index_array(values: np.ndarray | list[int]) -> np.ndarray:
    return np.ascontiguousarray(values, dtype=np.int64).reshape(-1)


def _vertex_count(corners: np.ndarray, vertex_count: int | None) -> int:
    if vertex_count is not None:
        return int(vertex_count)
    return int(corners.max()) + 1 if corners.size else 0


def _face_starts(face_sizes: np.ndarray) -> np.ndarray:
    starts = np.zeros(face_sizes.size, dtype=np.int64)
    np.cumsum(face_sizes[:-1], out=starts[1:])
    return starts


def _next_corner(face_sizes: np.ndarray) -> np.ndarray:
    """Index of the following corner around the same face, for every corner."""
    total = int(face_sizes.sum())
    nxt = np.arange(1, total + 1, dtype=np.int64)
    starts = _face_starts(face_sizes)
    nonempty = face_sizes > 0
    ends = starts[nonempty] + face_sizes[nonempty] - 1
    nxt[ends] = starts[nonempty]
    return nxt


def _unique_pairs(a: np.ndarray, b: np.ndarray, n: int) -> np.ndarray:
    """Sorted unique undirected pairs, self-pairs dropped."""
    lo = np.minimum(a, b)
    hi = np.maximum(a, b)
    keep = lo != hi
    if keep.all():  # no self-pair (faces without repeated corners): nothing to compress
        keys = lo * n
        keys += hi
    else:
        keys = lo[keep] * n + hi[keep]
    del lo, hi, keep
    return _decode(unique_keys(keys), n)


def _decode(keys: np.ndarray, n: int) -> np.ndarray:
    out = np.empty((keys.size, 2), dtype=np.int64)
    if n:
        first = keys // n  # keys are non-negative: the remainder is keys - first * n
        out[:, 0] = first
        first *= n
        np.subtract(keys, first, out=out[:, 1])
    return out


def _encode(pairs: np.ndarray, n: int) -> np.ndarray:
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    return np.minimum(pairs[:, 0], pairs[:, 1]) * n + np.maximum(pairs[:, 0], pairs[:, 1])


def _without(pairs: np.ndarray, excluded: list[np.ndarray], n: int) -> np.ndarray:
    """``pairs`` (ascending, ``i < j``) less those in ``excluded``. A pair can only be one of
    its own stride ``j - i``: only the pairs of a stride some excluded pair has are looked up
    (none on a grid, whose structural, shear and bend strides all differ)."""
    if not excluded or not pairs.size:
        return pairs
    parts = [np.asarray(e, dtype=np.int64).reshape(-1, 2) for e in excluded]
    if all(not e.size or (int(e.min()) >= 0 and int(e.max()) < n) for e in parts):
        has = np.zeros(max(n, 1), dtype=bool)
        for e in parts:
            has[np.abs(e[:, 1] - e[:, 0])] = True
        maybe = np.take(has, pairs[:, 1] - pairs[:, 0])
        if not maybe.any():
            return pairs
        if not maybe.all():
            rows = np.flatnonzero(maybe)
            drop = rows[~_kept(pairs[rows], parts, n)]
            keep = np.ones(pairs.shape[0], dtype=bool)
            keep[drop] = False
            return pairs[keep]
    return pairs[_kept(pairs, parts, n)]


def _kept(pairs: np.ndarray, excluded: list[np.ndarray], n: int) -> np.ndarray:
    """Per pair, whether it is in none of ``excluded`` (keys compared, as encoded)."""
    ex = np.sort(np.concatenate([_encode(e, n) for e in excluded]), kind="stable")
    if not ex.size:
        return np.ones(pairs.shape[0], dtype=bool)
    keys = _encode(pairs, n)
    found = np.searchsorted(ex, keys).clip(max=ex.size - 1)
    return ex[found] != keys


def face_edges(
    face_sizes: np.ndarray | list[int],
    corners: np.ndarray | list[int],
    vertex_count: int | None = None,
) -> np.ndarray:
    """Unique undirected edges of n-gon faces: one spring per edge, however many faces share it."""
    sizes = _as_index_array(face_sizes)
    verts = _as_index_array(corners)
    n = _vertex_count(verts, vertex_count)
    if not verts.size:
        return np.empty((0, 2), dtype=np.int64)
    return _unique_pairs(verts, verts[_next_corner(sizes)], n)


def shear_springs(
    face_sizes: np.ndarray | list[int],
    corners: np.ndarray | list[int],
    vertex_count: int | None = None,
    edges: np.ndarray | None = None,
) -> np.ndarray:
    """Pairs of non-adjacent corners of each face (quad diagonals), minus existing edges.

    ``edges``: the face edges when already known (``face_edges`` of the same faces)."""
    sizes = _as_index_array(face_sizes)
    verts = _as_index_array(corners)
    n = _vertex_count(verts, vertex_count)
    starts = _face_starts(sizes)
    firsts: list[np.ndarray] = []
    seconds: list[np.ndarray] = []
    for size in np.unique(sizes[sizes >= 4]).tolist():
        block = verts[starts[sizes == size][:, None] + np.arange(size)]
        i, j = np.triu_indices(size, k=2)
        keep = (j - i) != size - 1  # first and last corners are adjacent
        firsts.append(block[:, i[keep]].reshape(-1))
        seconds.append(block[:, j[keep]].reshape(-1))
    if not firsts:
        return np.empty((0, 2), dtype=np.int64)
    pairs = _unique_pairs(np.concatenate(firsts), np.concatenate(seconds), n)
    return _without(pairs, [face_edges(sizes, verts, n) if edges is None else edges], n)


def _face_turns(sizes: np.ndarray, verts: np.ndarray, graph: Directed) -> tuple[np.ndarray, ...]:
    """For every face corner ``p -> v -> q``: the directed pairs ``(v, p)`` and ``(v, q)`` as
    indices into ``graph`` (``graph`` sorted by source, then destination)."""
    n = graph.n
    nxt = _next_corner(sizes)
    prv = np.empty_like(nxt)
    prv[nxt] = np.arange(nxt.size, dtype=np.int64)
    keys = graph.src * n + graph.dst
    out = []
    for other in (verts[prv], verts[nxt]):
        wanted = verts * n + other
        found = np.searchsorted(keys, wanted).clip(max=max(keys.size - 1, 0))
        out.append(np.where(keys[found] == wanted, found, -1))
    ok = (out[0] >= 0) & (out[1] >= 0)
    return out[0][ok], out[1][ok]


TURN_MARGIN = 1e-9  # slack for the rounding of a differently summed cosine (the d x d tables)


def _turns_bent(sizes: np.ndarray, verts: np.ndarray, positions: np.ndarray) -> bool:
    """Whether every face corner ``p -> v -> q`` turns by more than the bend pairs' angle:
    its cosine at ``v`` is at least ``STRAIGHT_COSINE`` (with a margin). Then a turn is
    never the partner kept, masked or not (a most opposite partner that is a turn is too
    close to keep, and so is any other), and the turn lookup can be skipped. Corners with a
    non-negative dot product pass at once; the others are measured."""
    if not verts.size or int(verts.max()) >= positions.shape[0] or int(verts.min()) < 0:
        return False
    nxt = _next_corner(sizes)
    prv = np.empty_like(nxt)
    prv[nxt] = np.arange(nxt.size, dtype=np.int64)
    after = []  # q - v per corner, per axis
    for axis in range(3):
        here = np.take(np.ascontiguousarray(positions[:, axis]), verts)
        after.append(np.take(here, nxt) - here)
    # (p - v) . (q - v) = -(v - p) . (q - v), and v - p is the previous corner's ``after``
    dot = np.take(after[0], prv) * after[0]
    for axis in (1, 2):
        dot += np.take(after[axis], prv) * after[axis]
    wide = np.flatnonzero(~(dot <= 0.0))  # a negative (p - v) . (q - v), or NaN
    if not wide.size:
        return True
    u = [-np.take(np.take(w, prv), wide) for w in after]
    w = [np.take(c, wide) for c in after]
    dots = u[0] * w[0] + u[1] * w[1] + u[2] * w[2]
    norms = np.sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2])
    norms *= np.sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2])
    cosine = dots / np.maximum(norms, 1e-30)
    return bool(np.all(cosine >= STRAIGHT_COSINE + TURN_MARGIN))


def _turn_mask(graph: Directed, turns: tuple[np.ndarray, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Flags over every point's ``(d, d)`` table of neighbour pairs (tables laid end to end,
    points in order): True where the two neighbours are a face's corners either side of the
    point. Returns the flags and each point's table start."""
    degree = graph.degree
    table_start = np.zeros(graph.n + 1, dtype=np.int64)
    np.cumsum(degree * degree, out=table_start[1:])
    flags = np.zeros(int(table_start[-1]), dtype=bool)
    before, after = turns
    v = graph.src[before]
    slot_b = before - graph.start[v]
    slot_a = after - graph.start[v]
    d = degree[v]
    flags[table_start[v] + slot_b * d + slot_a] = True
    flags[table_start[v] + slot_a * d + slot_b] = True
    return flags, table_start


def _opposite_partners(
    graph: Directed,
    positions: np.ndarray,
    flags: np.ndarray | None,
    table_start: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray]:
    """Every ``(a, b)`` where ``b`` is the neighbour of ``v`` most opposite ``a`` (smallest
    cosine, ties: smallest ``b``), not a face turn, at an angle wider than 135 degrees.
    ``flags`` None: no turn is that wide (``_turns_bent``), so none needs masking."""
    firsts: list[np.ndarray] = []
    seconds: list[np.ndarray] = []
    columns = [np.ascontiguousarray(positions[:, axis]) for axis in range(3)]
    for block in blocks(graph):
        if block.degree <= COLUMN_MAX_DEGREE:
            a, b = _column_partners(graph, columns, flags, table_start, block)
            firsts.append(a)
            seconds.append(b)
            continue
        d = block.degree
        for lo in range(0, block.points.size, CHUNK_POINTS):
            v = block.points[lo : lo + CHUNK_POINTS]
            edges = block.edges[lo : lo + CHUNK_POINTS]
            nbr = graph.dst[edges]
            offsets = np.empty((*nbr.shape, 3), dtype=np.float64)
            for axis in range(3):
                column = columns[axis]
                here = np.take(column, v)[:, None]
                np.subtract(np.take(column, nbr), here, out=offsets[..., axis])
            norm = np.sqrt(np.einsum("vik,vik->vi", offsets, offsets))
            cosine = np.einsum("vik,vjk->vij", offsets, offsets)
            cosine /= np.maximum(norm[:, :, None] * norm[:, None, :], 1e-30)
            if flags is not None and table_start is not None:
                start = table_start[v][:, None] + np.arange(d * d)
                np.copyto(cosine, np.inf, where=np.take(flags, start).reshape(-1, d, d))
            cosine[:, np.arange(d), np.arange(d)] = np.inf
            best, best_cos = first_min(cosine)
            keep = best_cos < STRAIGHT_COSINE
            firsts.append(nbr[keep])
            seconds.append(np.take_along_axis(nbr, best, axis=1)[keep])
    if not firsts:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    return np.concatenate(firsts), np.concatenate(seconds)


def _column_partners(
    graph: Directed,
    columns: list[np.ndarray],
    flags: np.ndarray | None,
    table_start: np.ndarray | None,
    block: Block,
) -> tuple[np.ndarray, np.ndarray]:
    """``_opposite_partners`` for a low-degree block, slot pair by slot pair on ``(V,)``
    columns: the same cosines, turns and ties as the ``(V, d, d)`` table."""
    d, size = block.degree, block.points.size
    here = [np.take(column, block.points) for column in columns]
    nbr = [np.take(graph.dst, block.base + j) for j in range(d)]
    offsets = [[np.take(columns[k], nbr[j]) - here[k] for k in range(3)] for j in range(d)]
    norm = [np.sqrt(o[0] * o[0] + o[1] * o[1] + o[2] * o[2]) for o in offsets]
    del here
    table = None if table_start is None else table_start[block.points]
    out, term = np.empty(size), np.empty(size)
    turn = np.empty(size, dtype=bool)

    def cosine(i: int, j: int) -> np.ndarray:
        dot_columns(offsets, i, j, out, term)
        np.multiply(norm[i], norm[j], out=term)
        np.maximum(term, 1e-30, out=term)
        np.divide(out, term, out=out)
        if flags is not None and table is not None:
            np.take(flags, table + (i * d + j), out=turn)
            np.copyto(out, np.inf, where=turn)
        return out

    slot, best = first_min_columns(d, d, size, cosine)
    keep = best < STRAIGHT_COSINE
    stacked = np.stack(nbr).reshape(-1)  # (d * V) neighbour ids, slot by slot
    firsts, seconds = [], []
    for j in range(d):
        rows = np.flatnonzero(keep[j])
        firsts.append(nbr[j][rows])
        at = np.take(slot[j], rows)
        at *= size
        at += rows
        seconds.append(np.take(stacked, at))
    return np.concatenate(firsts), np.concatenate(seconds)


def bend_springs(
    face_sizes: np.ndarray | list[int],
    corners: np.ndarray | list[int],
    positions: np.ndarray,
    exclude: np.ndarray | None = None,
    edges: np.ndarray | None = None,
    shear: np.ndarray | None = None,
) -> np.ndarray:
    """Pairs of neighbours lying opposite through a shared vertex (see the module docstring).

    ``positions`` is the rest shape ``(n, 3)``; ``exclude`` more pairs to leave out (loose
    springs from a file). Structural and shear pairs are always left out; ``edges`` and
    ``shear`` pass them in when already built for the same faces.
    """
    sizes = _as_index_array(face_sizes)
    verts = _as_index_array(corners)
    pos = np.asarray(positions, dtype=np.float64).reshape(-1, 3)
    n = max(_vertex_count(verts, None), pos.shape[0])
    if edges is None:
        edges = face_edges(sizes, verts, n)
    if not edges.size:
        return np.empty((0, 2), dtype=np.int64)
    graph = directed(edges, n, by_destination=True)
    flags: np.ndarray | None = None
    table_start: np.ndarray | None = None
    if not _turns_bent(sizes, verts, pos):
        flags, table_start = _turn_mask(graph, _face_turns(sizes, verts, graph))
    a, b = _opposite_partners(graph, pos, flags, table_start)
    if not a.size:
        return np.empty((0, 2), dtype=np.int64)
    pairs = _unique_pairs(a, b, n)
    excluded = [edges, shear_springs(sizes, verts, n, edges) if shear is None else shear]
    if exclude is not None:
        excluded.append(np.asarray(exclude, dtype=np.int64).reshape(-1, 2))
    return _without(pairs, excluded, n)


def merge_springs(*arrays: np.ndarray) -> np.ndarray:
    """Union of spring arrays: canonical ``i < j``, no self-pairs, first occurrence kept.

    The order is that of first occurrence, so ``merge_springs(structural, shear, bend)``
    keeps each kind's block together (see ``merge_with_kinds``).
    """
    merged, _ = merge_with_kinds(*arrays)
    return merged


def merge_with_kinds(*arrays: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Like ``merge_springs`` and also the index of the array each kept pair came from."""
    parts = [np.asarray(a, dtype=np.int64).reshape(-1, 2) for a in arrays]
    if not parts or not sum(p.shape[0] for p in parts):
        return np.empty((0, 2), dtype=np.int64), np.empty(0, dtype=np.uint8)
    allpairs = np.concatenate(parts)
    source = np.repeat(np.arange(len(parts), dtype=np.uint8), [p.shape[0] for p in parts])
    # canonical already (the builders' output): the concatenation is the answer's pairs
    canonical = bool(np.all(allpairs[:, 0] < allpairs[:, 1]))
    if canonical:
        lo, hi, keep = allpairs[:, 0], allpairs[:, 1], None
    else:
        lo = np.minimum(allpairs[:, 0], allpairs[:, 1])
        hi = np.maximum(allpairs[:, 0], allpairs[:, 1])
        keep = lo != hi
        if keep.all():
            keep = None
        else:
            lo, hi, source = lo[keep], hi[keep], source[keep]
    n = int(hi.max()) + 1 if hi.size else 1
    keys = lo * n
    keys += hi

    def pairs(rows: np.ndarray | None = None) -> np.ndarray:
        if canonical:
            return allpairs if rows is None else allpairs[rows]
        if rows is None:
            return np.stack([lo, hi], axis=1)
        return np.stack([lo[rows], hi[rows]], axis=1)

    if keep is None and _distinct_parts(keys, hi - lo, [p.shape[0] for p in parts], n):
        return pairs(), source
    ordered = np.sort(keys)
    if not np.any(ordered[1:] == ordered[:-1]):  # no repeats (the builders' output): as is
        return pairs(), source
    del ordered
    _, first = np.unique(keys, return_index=True)
    first.sort()
    return pairs(first), source[first]


def _distinct_parts(keys: np.ndarray, stride: np.ndarray, sizes: list[int], n: int) -> bool:
    """Whether no key repeats, known without a sort: each part's keys ascend strictly (as the
    builders give them) and no two parts share a stride ``hi - lo`` (a pair in both would
    have one), as a grid's structural, shear and bend springs do."""
    seen = np.zeros(n, dtype=bool)
    start = 0
    for size in sizes:
        part, part_stride = keys[start : start + size], stride[start : start + size]
        start += size
        if not np.all(part[1:] > part[:-1]) or np.take(seen, part_stride).any():
            return False
        seen[part_stride] = True
    return True
