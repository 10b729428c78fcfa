"""Each point's neighbours as dense tables, one per degree, for "most opposite partner" work.

Bend springs and stretch limiters both ask, for every pair ``(v, a)``, which other neighbour
``b`` of ``v`` lies most nearly opposite ``a``. Done per directed pair that is a loop over
partners; here the directed pairs are sorted by their first point (a CSR layout) and the
points of one degree ``d`` get a ``(V, d)`` table of their pairs, so the cosines of all
``(a, b)`` combinations of those points are one ``(V, d, d)`` array.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np


@dataclass
class Directed:
    """Directed pairs ``src -> dst`` sorted by ``src`` (``order`` maps them to the input's
    doubled list: the input's pairs forward, then backward); ``start``/``degree`` per pair
    give its source's segment."""

    src: np.ndarray
    dst: np.ndarray
    order: np.ndarray
    start: np.ndarray  # (n + 1,) segment starts per point
    n: int

    @property
    def degree(self) -> np.ndarray:
        return np.diff(self.start)


def directed(pairs: np.ndarray, n: int, by_destination: bool = False) -> Directed:
    """Both directions of undirected ``pairs`` ``(k, 2)``, grouped by source point.

    Within a source the input's order is kept (a stable sort), or with ``by_destination`` the
    destinations ascend.
    """
    src = np.concatenate([pairs[:, 0], pairs[:, 1]])
    dst = np.concatenate([pairs[:, 1], pairs[:, 0]])
    key = src * n + dst if by_destination else src
    order = np.argsort(key, kind="stable")
    src, dst = src[order], dst[order]
    start = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=start[1:])
    return Directed(src, dst, order, start, n)


@dataclass
class Block:
    """The points of one degree: ``points`` ``(V,)`` and their pairs ``edges`` ``(V, d)``
    (indices into the ``Directed`` arrays, in segment order)."""

    points: np.ndarray
    edges: np.ndarray

    @property
    def degree(self) -> int:
        return int(self.edges.shape[1])


def blocks(graph: Directed, min_degree: int = 2) -> Iterator[Block]:
    """One ``Block`` per degree present (at least ``min_degree``), lowest degree first."""
    degree = graph.degree
    for d in np.unique(degree[degree >= min_degree]).tolist():
        points = np.flatnonzero(degree == d)
        edges = graph.start[points][:, None] + np.arange(d, dtype=np.int64)
        yield Block(points, edges)


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
