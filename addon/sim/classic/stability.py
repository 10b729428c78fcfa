"""The explicit stability bound of the classic solver: how small a substep must be.

The classic step is symplectic Euler (``v += a dt; x += v dt``). For one mode
``x'' = -w^2 x - g x'`` it is stable when ``w^2 dt^2 + 2 g dt < 4``, that is
``dt < (sqrt(g^2 + 4 w^2) - g) / w^2`` (``2 / w`` without damping). The largest ``w^2`` and
``g`` of the whole cloth are bounded per free point by Gershgorin's theorem on the
mass-scaled stiffness and damping matrices: ``sum over its springs of k (1 / m_i +
1 / sqrt(m_i m_j))`` (the second term only when the other end is free), and the same with the
spring dampers, plus the point's own damping and drag. The bound is never below the true
one, so substeps chosen from it are stable whatever the mesh.
"""

from __future__ import annotations

import math

import numpy as np

SAFETY = 0.9  # the substep used is at most this fraction of the bound
BISECTION_STEPS = 60


def point_rates(
    springs: np.ndarray,
    ks: np.ndarray,
    kd: np.ndarray,
    inv_mass: np.ndarray,
    point_damping: np.ndarray,
    drag: np.ndarray | float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per free point: the stiffness rate ``w^2`` (1/s^2) from the springs, the damping rate
    (1/s) from the spring dampers and the damping rate from the point itself (damping and
    drag), each ``(N,)``; pinned points get zeros."""
    n = inv_mass.size
    a, b = springs[:, 0], springs[:, 1]
    root = np.sqrt(inv_mass)
    cross = root[a] * root[b]  # 1 / sqrt(m_a m_b), 0 when either end is pinned
    stiff = np.bincount(a, ks * (inv_mass[a] + cross), minlength=n)
    stiff += np.bincount(b, ks * (inv_mass[b] + cross), minlength=n)
    damp = np.bincount(a, kd * (inv_mass[a] + cross), minlength=n)
    damp += np.bincount(b, kd * (inv_mass[b] + cross), minlength=n)
    own = point_damping * inv_mass + np.asarray(drag, dtype=np.float64)
    free = inv_mass > 0
    return stiff * free, damp * free, own * free


def largest_substep(stiff: np.ndarray, damp: np.ndarray, own: np.ndarray) -> float:
    """The largest stable substep (s) for the rates of ``point_rates`` (inf: no limit)."""
    w2 = stiff
    g = damp + own
    with np.errstate(divide="ignore", invalid="ignore"):
        bound = np.where(w2 > 0, (np.sqrt(g * g + 4.0 * w2) - g) / w2, 2.0 / g)
    bound = bound[np.isfinite(bound) & (bound > 0)]
    return float(bound.min()) if bound.size else math.inf


def substeps_needed(step: float, stiff: np.ndarray, damp: np.ndarray, own: np.ndarray) -> int:
    """Substeps for one ``step`` (s) of simulated time to stay within the bound."""
    limit = SAFETY * largest_substep(stiff, damp, own)
    if not math.isfinite(limit):
        return 1
    return max(1, math.ceil(step / limit))


def stiffness_scale_for(
    step: float, substeps: int, stiff: np.ndarray, damp: np.ndarray, own: np.ndarray
) -> float:
    """The largest factor (<= 1) for every spring's ``ks`` and ``kd`` that keeps ``substeps``
    substeps of ``step`` within the bound (bisection; the point's own damping is kept)."""
    target = step / substeps

    def fits(scale: float) -> bool:
        return SAFETY * largest_substep(stiff * scale, damp * scale, own) >= target

    if fits(1.0):
        return 1.0
    low, high = 0.0, 1.0
    for _ in range(BISECTION_STEPS):
        mid = 0.5 * (low + high)
        if fits(mid):
            low = mid
        else:
            high = mid
    return low
