"""Tethers: each free point may not get farther from its nearest pins than it is at rest.

Long chains of springs solved a few times per substep stretch near the pins (the pins carry
the whole weight); a tether per point is a one-sided limit that removes that stretch at the
cost of one cheap pass. The limit is the rest *geodesic* distance (measured along the cloth,
so a folded rest shape may still unfold), computed once by a Dijkstra search from all pins
at the same time, keeping up to ``k`` distinct nearest pins per point.

The search is "any-angle": a path keeps an anchor point and measures the straight chord from
it while the chord is at least ``STRAIGHT_RATIO`` of the path walked along the springs, which
turns the zig-zag graph distance of a flat grid into the exact Euclidean distance, while a
fold (where the chord is much shorter than the walk) starts a new anchor.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

import numpy as np

STRAIGHT_RATIO = 0.9


@dataclass
class Tethers:
    """Per slot ``s < k``: ``points[s]`` are tethered to ``pins[s]`` within ``lengths[s]``."""

    points: list[np.ndarray]
    pins: list[np.ndarray]
    lengths: list[np.ndarray]

    @property
    def count(self) -> int:
        return sum(p.size for p in self.points)


def _adjacency(springs: np.ndarray, lengths: np.ndarray, n: int) -> list[list[tuple[int, float]]]:
    adjacent: list[list[tuple[int, float]]] = [[] for _ in range(n)]
    for (a, b), length in zip(springs.tolist(), lengths.tolist(), strict=True):
        adjacent[a].append((b, length))
        adjacent[b].append((a, length))
    return adjacent


def build_tethers(
    rest: np.ndarray,
    pinned: np.ndarray,
    springs: np.ndarray,
    lengths: np.ndarray,
    k: int = 2,
) -> Tethers:
    """Tethers from every free point reachable through ``springs`` to its ``k`` nearest pins."""
    n = rest.shape[0]
    pin_ids = np.flatnonzero(pinned)
    empty = Tethers([], [], [])
    if not pin_ids.size or pin_ids.size == n or not springs.size:
        return empty
    adjacent = _adjacency(springs, lengths, n)
    coords = rest.tolist()
    settled: list[list[tuple[int, float]]] = [[] for _ in range(n)]
    # entries: (distance, point, pin, anchor, anchor distance, walked since anchor)
    heap: list[tuple[float, int, int, int, float, float]] = [
        (0.0, p, p, p, 0.0, 0.0) for p in pin_ids.tolist()
    ]
    heapq.heapify(heap)
    while heap:
        dist, v, pin, anchor, anchor_dist, walked = heapq.heappop(heap)
        labels = settled[v]
        if len(labels) >= k or any(q == pin for q, _ in labels):
            continue
        labels.append((pin, dist))
        if pinned[v] and v != pin:
            continue  # paths do not run through other pins
        for u, edge in adjacent[v]:
            near = settled[u]
            if len(near) >= k or any(q == pin for q, _ in near):
                continue
            chord = math.dist(coords[anchor], coords[u])
            along = walked + edge
            if chord >= STRAIGHT_RATIO * along:
                heapq.heappush(heap, (anchor_dist + chord, u, pin, anchor, anchor_dist, along))
            else:
                heapq.heappush(heap, (dist + edge, u, pin, v, dist, edge))
    points: list[list[int]] = [[] for _ in range(k)]
    pins: list[list[int]] = [[] for _ in range(k)]
    limits: list[list[float]] = [[] for _ in range(k)]
    for v in np.flatnonzero(~pinned).tolist():
        for slot, (pin, dist) in enumerate(settled[v]):
            points[slot].append(v)
            pins[slot].append(pin)
            limits[slot].append(dist)
    slots = [s for s in range(k) if points[s]]
    return Tethers(
        [np.array(points[s], dtype=np.int64) for s in slots],
        [np.array(pins[s], dtype=np.int64) for s in slots],
        [np.array(limits[s], dtype=np.float32) for s in slots],
    )
