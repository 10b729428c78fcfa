"""Each point's neighbours grouped by degree, for "most opposite partner" work.

Bend springs and stretch limiters both ask, for every pair ``(v, a)``, which other neighbour
``b`` of ``v`` lies most nearly opposite ``a``. The directed pairs are sorted by their first
point (a CSR layout); the points of one degree ``d`` form a block, and the values of all
``(a, b)`` combinations of a block are compared either slot pair by slot pair on ``(V,)``
columns (``first_min_columns``: a low degree, most points; the arrays stay in cache and a
symmetric value is computed once for both of its rows) or as one ``(V, d, d)`` table
(``first_min``: the few points of a high degree).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

COLUMN_MAX_DEGREE = 8  # blocks up to this degree are compared column by column


@dataclass
class Directed:
    """Directed pairs ``src -> dst`` sorted by ``src`` (``order`` maps them to the input's
    doubled list: the input's pairs forward, then backward; None when sorted by destination);
    ``start`` per point gives its segment."""

    src: np.ndarray
    dst: np.ndarray
    order: np.ndarray | None
    start: np.ndarray  # (n + 1,) segment starts per point
    n: int

    @property
    def degree(self) -> np.ndarray:
        return np.diff(self.start)


def sort_keys(keys: np.ndarray) -> None:
    """Sort distinct integer ``keys`` in place. Timsort (numpy's stable kind) finds the
    ascending runs that mesh-numbered keys are made of: several times faster than the
    default quicksort there, a fifth slower on shuffled keys; distinct keys sort alike."""
    keys.sort(kind="stable")


def unique_keys(keys: np.ndarray) -> np.ndarray:
    """``np.unique`` of 1-D integer ``keys``, sorting ``keys`` in place (``sort_keys``:
    equal integers are the same bits whatever order the sort leaves them in)."""
    out = keys.reshape(-1)
    if out.size < 2:
        return out
    sort_keys(out)
    first = np.empty(out.size, dtype=bool)
    first[0] = True
    np.not_equal(out[1:], out[:-1], out=first[1:])
    return out[first]


def directed(pairs: np.ndarray, n: int, by_destination: bool = False) -> Directed:
    """Both directions of undirected ``pairs`` ``(k, 2)``, grouped by source point.

    Within a source the input's order is kept (as a stable sort would), or with
    ``by_destination`` the destinations ascend. One plain sort of unique composite keys
    (source, then input index or destination) does either, several times faster than a
    stable argsort.
    """
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    src = np.concatenate([pairs[:, 0], pairs[:, 1]])
    dst = np.concatenate([pairs[:, 1], pairs[:, 0]])
    order: np.ndarray | None = None
    if by_destination:
        key = src * n
        key += dst
        sort_keys(key)
        src = key // max(n, 1)
        dst = key - src * n
    else:
        m = max(src.size, 1)
        key = src * m
        key += np.arange(src.size, dtype=np.int64)
        sort_keys(key)
        src = key // m
        order = key - src * m
        dst = dst[order]
    start = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=start[1:])
    return Directed(src, dst, order, start, n)


@dataclass
class Block:
    """The points of one degree: ``points`` ``(V,)`` and where their pairs start in the
    ``Directed`` arrays (``base``, ``(V,)``; slot ``j`` of point ``i`` is ``base[i] + j``)."""

    points: np.ndarray
    base: np.ndarray
    degree: int

    @property
    def edges(self) -> np.ndarray:
        """``(V, d)`` indices of every point's pairs, in segment order."""
        return self.base[:, None] + np.arange(self.degree, dtype=np.int64)


def blocks(graph: Directed, min_degree: int = 2) -> Iterator[Block]:
    """One ``Block`` per degree present (at least ``min_degree``), lowest degree first."""
    degree = graph.degree
    for d in np.unique(degree[degree >= min_degree]).tolist():
        points = np.flatnonzero(degree == d)
        yield Block(points, graph.start[points], int(d))


def unit_directions(graph: Directed, positions: np.ndarray) -> np.ndarray:
    """``(3, E)`` unit vectors along every directed pair, one row per axis (zero-length pairs
    stay tiny)."""
    out = np.empty((3, graph.src.size), dtype=np.float64)
    for axis in range(3):
        column = np.ascontiguousarray(positions[:, axis])
        np.subtract(np.take(column, graph.dst), np.take(column, graph.src), out=out[axis])
    norm = np.sqrt(out[0] * out[0] + out[1] * out[1] + out[2] * out[2])
    out /= np.maximum(norm, 1e-30)
    return out


def pair_dots(columns: np.ndarray, rows: np.ndarray, width: int) -> np.ndarray:
    """``(V, d, width)`` dot products of the vectors ``columns[:, rows]`` (``rows`` ``(V, d)``)
    with the first ``width`` of the same row; ``columns`` is ``(3, E)``. Each axis is
    gathered once and its products go through one work array."""
    out: np.ndarray | None = None
    term: np.ndarray | None = None
    for axis in range(3):
        gathered = np.take(columns[axis], rows)
        here, there = gathered[:, :, None], gathered[:, None, :width]
        if out is None:
            out = np.multiply(here, there)
            term = np.empty_like(out)
        else:
            out += np.multiply(here, there, out=term)
    assert out is not None
    return out


def first_min(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``(..., d)`` ``values``: the index of the first smallest entry and that
    entry (``inf`` rows give index 0 and ``inf``)."""
    best = np.argmin(values, axis=-1)
    return best, np.take_along_axis(values, best[..., None], axis=-1)[..., 0]


def dot_columns(
    vectors: list[list[np.ndarray]], i: int, j: int, out: np.ndarray, term: np.ndarray
) -> np.ndarray:
    """``out = x_i x_j + y_i y_j + z_i z_j`` (in this order, as ``pair_dots`` sums)."""
    a, b = vectors[i], vectors[j]
    np.multiply(a[0], b[0], out=out)
    for axis in range(1, len(a)):
        out += np.multiply(a[axis], b[axis], out=term)
    return out


def first_min_columns(
    degree: int, width: int, size: int, value: Callable[[int, int], np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """For every slot ``i < degree`` of ``size`` points: the first slot ``j < width``,
    ``j != i``, of smallest ``value(i, j)`` (symmetric, ``(size,)``; asked once per slot
    pair ``i < j``), and that value. Returns ``(degree, size)`` slots (int64) and values
    (rows without a candidate: slot 0 and ``inf``), as ``first_min`` over the table with an
    infinite diagonal gives them."""
    best = np.full((degree, size), np.inf)
    slot = np.zeros((degree, size), dtype=np.int64)
    less = np.empty(size, dtype=bool)
    for i in range(min(degree, width)):
        # rows j > i meet candidate i here, after their candidates below i; row i meets
        # j > i after its candidates below i: so every row sees its candidates ascending
        for j in range(i + 1, degree):
            v = value(i, j)
            rows = (j, i) if j < width else (j,)
            for row, candidate in zip(rows, (i, j), strict=False):
                np.less(v, best[row], out=less)
                np.copyto(best[row], v, where=less)
                np.copyto(slot[row], candidate, where=less)
    return slot, best


def components(springs: np.ndarray, n: int) -> np.ndarray:
    """Connected-component label of every point (the smallest point id in its component).

    Vectorised hooking and pointer jumping: each round hooks every root onto the smallest
    root it touches through a spring, then flattens the trees, so rounds grow with the log of
    the component size, not with its diameter.
    """
    label = np.arange(n, dtype=np.int64)
    pairs = np.asarray(springs, dtype=np.int64).reshape(-1, 2)
    if not pairs.size:
        return label
    a, b = pairs[:, 0], pairs[:, 1]
    while True:
        la, lb = label[a], label[b]
        # every root is its own label, so a round changes nothing exactly when no spring
        # joins two labels: seen here instead of by a round of hooking
        if np.array_equal(la, lb):
            return label
        low = np.minimum(la, lb)
        hooked = label.copy()
        np.minimum.at(hooked, la, low)
        np.minimum.at(hooked, lb, low)
        while True:
            jumped = hooked[hooked]
            if np.array_equal(jumped, hooked):
                break
            hooked = jumped
        label = hooked
