"""Split springs into groups that share no point, for Gauss-Seidel in numpy.

Inside a group every point appears at most once, so one vectorised gather/compute/scatter
solves the whole group exactly as a sequential loop would. Each group is a maximal matching
built in vectorised rounds: every point claims the lowest-numbered unassigned spring touching
it, springs claimed by both their points join the group, and rounds repeat until no spring
can be added. Colours come out close to greedy first-fit (about 12 for structural + shear +
bend springs on a quad grid) and the result depends only on the input order.
"""

from __future__ import annotations

import numpy as np


def colour_groups(springs: np.ndarray, point_count: int) -> list[np.ndarray]:
    """Spring indices per colour, each sorted ascending; together they cover every spring."""
    pairs = np.asarray(springs, dtype=np.int64).reshape(-1, 2)
    count = pairs.shape[0]
    groups: list[np.ndarray] = []
    remaining = np.arange(count, dtype=np.int64)
    claim = np.empty(point_count, dtype=np.int64)
    used = np.zeros(point_count, dtype=bool)
    while remaining.size:
        used[:] = False
        parts: list[np.ndarray] = []
        candidates = remaining
        while candidates.size:
            a = pairs[candidates, 0]
            b = pairs[candidates, 1]
            claim.fill(count)
            np.minimum.at(claim, a, candidates)
            np.minimum.at(claim, b, candidates)
            chosen_mask = (claim[a] == candidates) & (claim[b] == candidates)
            chosen = candidates[chosen_mask]
            used[a[chosen_mask]] = True
            used[b[chosen_mask]] = True
            parts.append(chosen)
            candidates = candidates[~(used[a] | used[b])]
        group = np.sort(np.concatenate(parts))
        groups.append(group)
        taken = np.zeros(count, dtype=bool)
        taken[group] = True
        remaining = remaining[~taken[remaining]]
    return groups
