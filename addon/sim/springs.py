"""Spring sets built from a mesh's faces: structural, shear and bend, without duplicates.

Every builder returns an ``(k, 2) int64`` array of undirected pairs with ``i < j``, no
self-pairs and no repeats, in a deterministic order (sorted by ``(i, j)``). Pairs are encoded
as ``i * n + j`` in one int64 so that deduplication is a single ``np.unique``.

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

MAX_VERTICES_FOR_TRIPLES = 2_000_000  # (v, a, b) keys are packed into one int64
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
    keys = np.unique(lo[keep] * n + hi[keep])
    return _decode(keys, n)


def _decode(keys: np.ndarray, n: int) -> np.ndarray:
    out = np.empty((keys.size, 2), dtype=np.int64)
    if n:
        np.floor_divide(keys, n, out=out[:, 0])
        np.remainder(keys, n, out=out[:, 1])
    return out


def _encode(pairs: np.ndarray, n: int) -> np.ndarray:
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    return np.minimum(pairs[:, 0], pairs[:, 1]) * n + np.maximum(pairs[:, 0], pairs[:, 1])


def _without(pairs: np.ndarray, excluded: list[np.ndarray], n: int) -> np.ndarray:
    if not excluded or not pairs.size:
        return pairs
    ex = np.concatenate([_encode(e, n) for e in excluded])
    return pairs[~np.isin(_encode(pairs, n), ex)]


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
) -> np.ndarray:
    """Pairs of non-adjacent corners of each face (quad diagonals), minus existing edges."""
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
    return _without(pairs, [face_edges(sizes, verts, n)], n)


def _neighbour_triples(edges: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All ``(v, a, b)`` with ``a != b`` both edge neighbours of ``v``."""
    v = np.concatenate([edges[:, 0], edges[:, 1]])
    other = np.concatenate([edges[:, 1], edges[:, 0]])
    order = np.lexsort((other, v))
    v, other = v[order], other[order]
    degree = np.bincount(v, minlength=n)
    seg_start = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(degree, out=seg_start[1:])
    # each directed edge p = (v, a) pairs with every q in v's segment
    reps = degree[v]
    p = np.repeat(np.arange(v.size, dtype=np.int64), reps)
    run_start = np.repeat(np.cumsum(reps) - reps, reps)
    q = seg_start[v[p]] + (np.arange(p.size, dtype=np.int64) - run_start)
    keep = p != q
    p, q = p[keep], q[keep]
    return v[p], other[p], other[q]


def _face_corner_triples(sizes: np.ndarray, verts: np.ndarray, n: int) -> np.ndarray:
    """Keys of ``(v, min(prev, next), max(prev, next))`` for every corner of every face."""
    nxt = _next_corner(sizes)
    prv = np.empty_like(nxt)
    prv[nxt] = np.arange(nxt.size, dtype=np.int64)
    a, b = verts[prv], verts[nxt]
    return (verts * n + np.minimum(a, b)) * n + np.maximum(a, b)


def bend_springs(
    face_sizes: np.ndarray | list[int],
    corners: np.ndarray | list[int],
    positions: np.ndarray,
    exclude: np.ndarray | None = None,
) -> np.ndarray:
    """Pairs of neighbours lying opposite through a shared vertex (see the module docstring).

    ``positions`` is the rest shape ``(n, 3)``; ``exclude`` more pairs to leave out (loose
    springs from a file). Structural and shear pairs are always left out.
    """
    sizes = _as_index_array(face_sizes)
    verts = _as_index_array(corners)
    pos = np.asarray(positions, dtype=np.float64).reshape(-1, 3)
    n = max(_vertex_count(verts, None), pos.shape[0])
    if n > MAX_VERTICES_FOR_TRIPLES:
        raise ValueError(f"bend springs support at most {MAX_VERTICES_FOR_TRIPLES} vertices")
    edges = face_edges(sizes, verts, n)
    if not edges.size:
        return np.empty((0, 2), dtype=np.int64)
    v, a, b = _neighbour_triples(edges, n)
    keys = (v * n + np.minimum(a, b)) * n + np.maximum(a, b)
    candidate = ~np.isin(keys, _face_corner_triples(sizes, verts, n))
    v, a, b = v[candidate], a[candidate], b[candidate]
    if not v.size:
        return np.empty((0, 2), dtype=np.int64)
    da = pos[a] - pos[v]
    db = pos[b] - pos[v]
    norms = np.linalg.norm(da, axis=1) * np.linalg.norm(db, axis=1)
    cosine = np.einsum("ij,ij->i", da, db) / np.maximum(norms, 1e-30)
    # for each directed (v, a) keep the b with the smallest cosine (ties: smallest b)
    order = np.lexsort((b, cosine, a, v))
    v, a, b = v[order], a[order], b[order]
    first = np.ones(v.size, dtype=bool)
    first[1:] = (v[1:] != v[:-1]) | (a[1:] != a[:-1])
    first &= cosine[order] < STRAIGHT_COSINE
    pairs = _unique_pairs(a[first], b[first], n)
    excluded = [edges, shear_springs(sizes, verts, n)]
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
    lo = np.minimum(allpairs[:, 0], allpairs[:, 1])
    hi = np.maximum(allpairs[:, 0], allpairs[:, 1])
    keep = lo != hi
    lo, hi, source = lo[keep], hi[keep], source[keep]
    n = int(hi.max()) + 1 if hi.size else 1
    _, first = np.unique(lo * n + hi, return_index=True)
    first.sort()
    return np.stack([lo[first], hi[first]], axis=1), source[first]
