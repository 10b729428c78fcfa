"""How far a cloth's points may move before self-collision looks for its pairs again.

Pairs are found within the distance and twice a slack, so they hold until a point has moved
more than the slack; motion that is a rigid turn or shift of the whole cloth changes no
distance and does not count (``moved_rigidly``). The slack is chosen for the least query
cost a substep (``cheapest_slack``).
"""

from __future__ import annotations

import numpy as np

SLACK_MIN, SLACK_MAX = 0.25, 0.5  # bounds of the slack, in distances
SLACK_STEPS = 3.0  # the slack covers this many substeps of the fastest point's motion
# a query's fixed cost (the tree walk, the cloth-wide arrays) in pairs a point, for the
# choice of the slack (``cheapest_slack``)
QUERY_PAIRS_PER_POINT = 4.0


def moved_rigidly(built: np.ndarray, here: np.ndarray) -> np.ndarray:
    """Each point's motion ``(N, 3)`` float32 from ``built`` to ``here`` (``(N, 3)``) after
    the best-fit rigid motion of all of them is taken out (Kabsch: the rotation from the
    SVD of the covariance). Any rotation would do for the pairs' distances, which no
    rotation or shift changes; the best fit leaves the least motion to count."""
    moved = np.empty((len(here), 3), dtype=np.float32)
    for k, column in enumerate(_rigid_residual(built, here)):
        moved[:, k] = column
    return moved


def farthest_rigidly2(built: np.ndarray, here: np.ndarray) -> float:
    """The largest squared length of ``moved_rigidly(built, here)``'s rows (float64)."""
    m = _rigid_residual(built, here)
    out = m[0] * m[0]
    out += m[1] * m[1]
    out += m[2] * m[2]
    return float(out.max(initial=0.0))


def _rigid_residual(built: np.ndarray, here: np.ndarray) -> list[np.ndarray]:
    """``moved_rigidly``'s motion as three float64 columns ``(N,)``, one coordinate at a time
    (a (3,) row broadcast over (N, 3) rows runs numpy's inner loop three elements at a time);
    the covariance by einsum, not a BLAS product (which wakes OpenBLAS's second thread from
    ~40k points: ``mesh/affine.py``)."""
    b = np.asarray(built, dtype=np.float64)
    x = np.asarray(here, dtype=np.float64)
    count = max(len(b), 1)
    # the means as ``mean`` sums them (pairwise), without its Python-level wrapper
    b = b - np.add.reduce(b, axis=0) / count
    x = x - np.add.reduce(x, axis=0) / count
    u, _, vt = np.linalg.svd(np.einsum("ni,nj->ij", b, x))
    if np.linalg.det(u @ vt) < 0:  # a reflection: the nearest proper rotation instead
        u[:, -1] = -u[:, -1]
    turn = (u @ vt).tolist()  # here turned back onto built, minus built
    out = []
    for k in range(3):
        row = turn[k]
        column = x[:, 0] * row[0]
        column += x[:, 1] * row[1]
        column += x[:, 2] * row[2]
        column -= b[:, k]
        out.append(column)
    return out


def farthest2(moved: np.ndarray) -> float:
    """The largest squared length of ``(N, 3)`` rows."""
    moved = moved * moved
    return float((moved[:, 0] + moved[:, 1] + moved[:, 2]).max(initial=0.0))


def cheapest_slack(
    upper: float, scale: float, reached: np.ndarray | None, last: float, points: int
) -> float:
    """The slack between ``SLACK_MIN`` times ``scale`` and ``upper`` with the least query
    cost a substep: (a query's fixed cost + its pairs) over the slack (how long its pairs
    last), the pairs within each reach counted from the last query's sorted distances
    ``reached`` (found within ``scale + 2 last``) and, beyond that reach, grown at the rate
    they grew over its last 15 %. A crumpled cloth has many pairs just beyond the distance:
    there a smaller slack and more frequent queries cost less; a sparse one keeps ``upper``."""
    low = SLACK_MIN * scale
    if reached is None or upper <= low or last <= 0.0:
        return upper
    slack = np.linspace(low, upper, 6)
    reach = scale + 2.0 * slack
    last_reach = scale + 2.0 * last
    within = np.searchsorted(reached, reach).astype(np.float64)
    total = float(reached.size)
    inner = float(np.searchsorted(reached, 0.85 * last_reach))
    rate = np.clip(np.log(max(total, 1.0) / max(inner, 1.0)) / -np.log(0.85), 3.0, 12.0)
    beyond = reach > last_reach
    within[beyond] = total * (reach[beyond] / last_reach) ** rate
    cost = (QUERY_PAIRS_PER_POINT * points + within) / slack
    return float(slack[int(np.argmin(cost))])


def slack_for(pos: np.ndarray, prev: np.ndarray, scale: float) -> float:
    """How far points may move before pairs are found again: a few substeps of the fastest
    point's motion, between ``SLACK_MIN`` and ``SLACK_MAX`` times ``scale``."""
    moved = np.asarray(pos[:, :3] - prev[:, :3], dtype=np.float32)
    moved *= moved
    step = float(np.sqrt((moved[:, 0] + moved[:, 1] + moved[:, 2]).max(initial=0.0)))
    return min(max(SLACK_STEPS * step, SLACK_MIN * scale), SLACK_MAX * scale)
