"""One colour group's projection against the XPBD formula evaluated point by point."""

from __future__ import annotations

import numpy as np

from addon.sim.xpbd.constraint_pass import ConstraintGroup, Mode, PassBuffers, solve_group
from addon.sim.xpbd.solver import XpbdSolver, as_complex

DT = 0.01


def _reference(
    pos: np.ndarray, a: int, b: int, target: float, k: float, wa: float, wb: float
) -> tuple[np.ndarray, np.ndarray]:
    """XPBD with a zero start multiplier: dx_a = +w_a/(w_a+w_b+1/(k dt^2)) * C * n."""
    d = pos[b] - pos[a]
    length = float(np.sqrt(d @ d))
    c = length - target
    denom = wa + wb + (1.0 / (k * DT * DT) if k > 0 else np.inf)
    n = d / length
    return pos[a] + wa / denom * c * n, pos[b] - wb / denom * c * n


def _group(
    mode: Mode,
    pairs: list[tuple[int, int]],
    rest: list[float],
    k: list[float],
    inv: np.ndarray,
    **extra: np.ndarray,
) -> ConstraintGroup:
    ends = np.array(pairs, dtype=np.int64)
    g = ConstraintGroup(
        mode=mode,
        ends=np.concatenate([ends[:, 0], ends[:, 1]]),
        rest=np.array(rest, dtype=np.float32),
        stiffness=np.array(k, dtype=np.float64),
        inv_a=inv[ends[:, 0]],
        inv_b=inv[ends[:, 1]],
        **extra,
    )
    g.prepare(DT)
    return g


def _solve(points: np.ndarray, g: ConstraintGroup) -> np.ndarray:
    state = XpbdSolver.make_state(points)
    solve_group(as_complex(state), g, PassBuffers(g.size).views(g.size))
    return state[:, :3].astype(np.float64)


POINTS = np.array(
    [[0.0, 0, 0], [1.3, 0.2, -0.1], [2.0, 1.0, 0.0], [2.5, 1.0, 0.4],
     [0.0, 3.0, 0.0], [0.0, 3.5, 0.0], [5.0, 5.0, 5.0], [5.0, 5.0, 5.0]]
)  # fmt: skip
INV = np.array([1.0, 2.0, 0.0, 0.5, 1.0, 1.0, 1.0, 1.0])


def test_springs_match_the_formula_with_unequal_masses_and_a_pin() -> None:
    g = _group(Mode.SPRING, [(0, 1), (2, 3), (4, 5)], [1.0, 0.5, 0.7], [1e4, 1e6, 50.0], INV)
    out = _solve(POINTS, g)
    for (a, b), target, k in [((0, 1), 1.0, 1e4), ((2, 3), 0.5, 1e6), ((4, 5), 0.7, 50.0)]:
        ra, rb = _reference(POINTS, a, b, target, k, INV[a], INV[b])
        assert np.allclose(out[a], ra, atol=1e-5) and np.allclose(out[b], rb, atol=1e-5)
    assert (out[2] == POINTS[2]).all()  # pinned end untouched


def test_limiter_pulls_only_when_longer_than_its_limit() -> None:
    # (0, 1) is 1.33 long with limit 1.0: pulled; (4, 5) is 0.5 long with limit 2.0: left alone
    g = _group(Mode.LIMITER, [(0, 1), (4, 5)], [1.0, 2.0], [1e6, 1e6], INV)
    out = _solve(POINTS, g)
    ra, rb = _reference(POINTS, 0, 1, 1.0, 1e6, INV[0], INV[1])
    assert np.allclose(out[0], ra, atol=1e-5) and np.allclose(out[1], rb, atol=1e-5)
    assert np.allclose(out[[4, 5]], POINTS[[4, 5]], atol=0)


def test_limited_spring_is_soft_within_and_hard_beyond_its_limit() -> None:
    # (0, 1): length 1.33, rest 1.0, limit 1.2 -> the soft spring toward 1.0 and the hard
    # limiter toward 1.2, both from the same start; (4, 5): 0.5 < limit 0.8 -> soft only
    g = _group(
        Mode.LIMITED_SPRING, [(0, 1), (4, 5)], [1.0, 0.3], [10.0, 10.0], INV,
        limit=np.array([1.2, 0.8], dtype=np.float32), hard_stiffness=np.array([1e6, 1e6]),
    )  # fmt: skip
    out = _solve(POINTS, g)
    ha, hb = _reference(POINTS, 0, 1, 1.2, 1e6, INV[0], INV[1])
    sa, sb = _reference(POINTS, 0, 1, 1.0, 10.0, INV[0], INV[1])
    assert np.allclose(out[0], ha + sa - POINTS[0], atol=1e-5)
    assert np.allclose(out[1], hb + sb - POINTS[1], atol=1e-5)
    assert not np.allclose(out[0], ha, atol=1e-5)  # the soft part is there
    ra, rb = _reference(POINTS, 4, 5, 0.3, 10.0, INV[4], INV[5])
    assert np.allclose(out[4], ra, atol=1e-6) and np.allclose(out[5], rb, atol=1e-6)


def test_limited_spring_without_bending_stiffness_still_limits() -> None:
    g = _group(
        Mode.LIMITED_SPRING, [(0, 1), (4, 5)], [1.0, 0.3], [0.0, 0.0], INV,
        limit=np.array([1.2, 0.8], dtype=np.float32), hard_stiffness=np.array([1e6, 1e6]),
    )  # fmt: skip
    out = _solve(POINTS, g)
    ra, _ = _reference(POINTS, 0, 1, 1.2, 1e6, INV[0], INV[1])
    assert np.allclose(out[0], ra, atol=1e-5)
    assert np.allclose(out[[4, 5]], POINTS[[4, 5]], atol=0)


def test_coincident_ends_give_no_nan() -> None:
    g = _group(Mode.SPRING, [(6, 7)], [0.1], [1e6], INV)
    out = _solve(POINTS, g)
    assert np.isfinite(out).all()
    assert np.allclose(out[[6, 7]], POINTS[[6, 7]])


def test_period_two_uses_twice_the_step() -> None:
    once = _group(Mode.SPRING, [(0, 1)], [1.0], [100.0], INV)
    twice = _group(Mode.SPRING, [(0, 1)], [1.0], [100.0], INV)
    twice.period = 2
    twice.prepare(DT)
    step = (1 / (100.0 * (2 * DT) ** 2), 1 / (100.0 * DT**2))
    for g, compliance in ((twice, step[0]), (once, step[1])):
        expected = INV[0] / (INV[0] + INV[1] + compliance)
        assert g.coefs is not None and g.coef is None  # unequal masses: each end its own
        assert np.isclose(g.coefs[0, 0, 0], expected, rtol=1e-6)
        assert np.isclose(g.coefs[1, 0, 0], INV[1] / (INV[0] + INV[1] + compliance), rtol=1e-6)
        assert np.isclose(g.coefs[0, 1, 0], expected * 1.0, rtol=1e-6)  # times the rest length


EQUAL = np.array([1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0])  # one mass, point 2 pinned


def _general(g: ConstraintGroup) -> ConstraintGroup:
    """The same group on the path for unequal masses (each end's coefficients applied
    alone)."""
    assert g.coef is not None
    other = ConstraintGroup(mode=g.mode, ends=g.ends, rest=g.rest, stiffness=g.stiffness)
    other.__dict__.update({k: v for k, v in g.__dict__.items() if k not in ("coef", "coefs")})
    pinned = np.stack([g.ends[: g.size] == 2, g.ends[g.size :] == 2])  # point 2: none
    other.coef = None
    other.coefs = np.where(pinned[:, None, :], np.float32(0), g.coef[None])
    return other


def test_equal_masses_take_the_symmetric_path_with_the_formula_and_the_same_bits() -> None:
    # (2, 3) has the pin as its first end; every mode
    pairs = [(0, 1), (2, 3), (5, 4)]
    for mode, extra in (
        (Mode.SPRING, {}),
        (Mode.LIMITER, {}),
        (Mode.LIMITED_SPRING, {"limit": np.array([1.2, 0.6, 0.8], np.float32),
                               "hard_stiffness": np.full(3, 1e6)}),
    ):  # fmt: skip
        g = _group(mode, pairs, [1.0, 0.5, 0.3], [1e4, 1e6, 50.0], EQUAL, **extra)
        assert g.coef is not None and g.coefs is None
        assert g.fixed is not None and list(g.fixed) == [1]  # the pin, a first end
        out = _solve(POINTS, g)
        assert (out[2] == POINTS[2]).all()  # the pinned end put back exactly
        assert np.array_equal(out, _solve(POINTS, _general(g)))
        if mode == Mode.SPRING:
            for (a, b), target, k in zip(pairs, [1.0, 0.5, 0.3], [1e4, 1e6, 50.0], strict=True):
                ra, rb = _reference(POINTS, a, b, target, k, EQUAL[a], EQUAL[b])
                assert np.allclose(out[a], ra, atol=1e-5) and np.allclose(out[b], rb, atol=1e-5)


def test_a_pin_stays_put_even_when_its_partner_is_not_finite() -> None:
    points = POINTS.copy()
    points[3] = np.nan
    g = _group(Mode.SPRING, [(2, 3)], [0.5], [1e6], EQUAL)
    out = _solve(points, g)
    assert (out[2] == POINTS[2]).all()
