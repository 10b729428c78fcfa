"""A still floor of few triangles pairs each point only with the triangles its path comes
near (``mesh_contacts.few_pairs``): checked against float64 brute force."""

from __future__ import annotations

import numpy as np

from addon.sim.collide.mesh_collider import MeshCollider
from addon.sim.collide.mesh_contacts import few_pairs
from addon.sim.xpbd.solver import XpbdSolver

# a 2 x 2 m quad at z = 0 in two triangles (sharing the diagonal from (-1, -1) to (1, 1))
QUAD = np.array([[-1.0, -1.0, 0.0], [1.0, -1.0, 0.0], [1.0, 1.0, 0.0], [-1.0, 1.0, 0.0]])
FACES = np.array([[0, 1, 2], [0, 2, 3]])
OUTER, MARGIN = 0.02, 0.005
REACH = OUTER + MARGIN


def _segment_closest(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    d = b - a
    t = np.clip((p - a) @ d / (d @ d), 0.0, 1.0)
    return a + t * d


def _closest(p: np.ndarray, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Closest point of triangle (a, b, c) to p, float64, by cases (written for this test)."""
    m = np.stack([b - a, c - a], axis=1)
    (v, w), *_ = np.linalg.lstsq(m, p - a, rcond=None)
    if v >= 0 and w >= 0 and v + w <= 1:
        return a + m @ np.array([v, w])
    edges = [_segment_closest(p, a, b), _segment_closest(p, b, c), _segment_closest(p, c, a)]
    return min(edges, key=lambda q: float(np.linalg.norm(p - q)))


def _points(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Points over the quad and beyond its edges, many near the diagonal, at heights in and
    out of reach, each moving a few millimetres (never through the floor)."""
    xy = rng.uniform(-1.1, 1.1, (n, 2))
    xy[: n // 3, 1] = xy[: n // 3, 0] + rng.normal(0.0, 0.01, n // 3)  # about the diagonal
    z = rng.uniform(0.004, 0.06, n)
    after = np.column_stack([xy, z])
    before = after + rng.normal(0.0, 0.003, (n, 3))
    before[:, 2] = np.maximum(before[:, 2], 0.003)
    return after, before


def test_few_pairs_keep_every_triangle_a_path_comes_within_reach_of() -> None:
    rng = np.random.default_rng(11)
    after, before = _points(rng, 800)
    collider = MeshCollider(QUAD, FACES, outer=OUTER)
    pos, prev = XpbdSolver.make_state(after), XpbdSolver.make_state(before)
    ids = np.arange(len(after))
    point, tri = few_pairs(collider._static, pos, prev, ids, REACH)
    kept = set(zip(point.tolist(), tri.tolist(), strict=True))
    assert np.all(np.diff(point) >= 0)  # sorted by point, as the pairs are kept
    left_out = 0
    for i in range(len(after)):
        for t, face in enumerate(FACES):
            # the path's nearest approach to the triangle, sampled finely (float64)
            path = before[i] + np.linspace(0.0, 1.0, 33)[:, None] * (after[i] - before[i])
            nearest = min(np.linalg.norm(x - _closest(x, *QUAD[face])) for x in path)
            if (i, t) not in kept:
                left_out += 1
                assert nearest > REACH, (i, t, nearest)
    assert left_out > 500  # most points are over one triangle only: half the pairs go


def test_contacts_on_a_still_quad_are_the_brute_force_ones() -> None:
    rng = np.random.default_rng(12)
    after, before = _points(rng, 2000)
    collider = MeshCollider(QUAD, FACES, outer=OUTER)
    pos, prev = XpbdSolver.make_state(after), XpbdSolver.make_state(before)
    count = collider.resolve_positions(pos, prev, np.ones(len(after), dtype=bool), MARGIN, 0.0)
    out = pos[:, :3].astype(float)
    expected_count = 0
    for i, p in enumerate(after):
        q = min(
            (_closest(p, *QUAD[face]) for face in FACES), key=lambda x: float(np.linalg.norm(p - x))
        )
        d = float(np.linalg.norm(p - q))
        if d < REACH:
            expected_count += 1
            expected = q + (p - q) / d * REACH
        else:
            expected = p
        assert np.allclose(out[i], expected, atol=2e-6), (i, out[i], expected)
    assert count == expected_count > 500
