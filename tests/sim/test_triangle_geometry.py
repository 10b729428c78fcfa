"""Closest points on triangles and the grid broad phase against brute-force references."""

from __future__ import annotations

import numpy as np

from addon.sim.collide.broad_phase import box_pairs
from addon.sim.mesh.triangle_geometry import closest_points, inside_triangle


def _segment_closest(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    d = b - a
    t = np.clip((p - a) @ d / max(d @ d, 1e-300), 0.0, 1.0)
    return a + t * d


def _reference(p: np.ndarray, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Closest point by cases, float64: the plane projection when it falls inside (solved
    with lstsq for the barycentric weights), else the best of the three edges."""
    m = np.stack([b - a, c - a], axis=1)
    (v, w), *_ = np.linalg.lstsq(m, p - a, rcond=None)
    if v >= 0 and w >= 0 and v + w <= 1:
        return a + m @ np.array([v, w])
    candidates = [_segment_closest(p, a, b), _segment_closest(p, b, c), _segment_closest(p, c, a)]
    return min(candidates, key=lambda q: float(np.linalg.norm(p - q)))


def test_closest_points_match_the_case_by_case_reference() -> None:
    rng = np.random.default_rng(3)
    k = 3000
    a, b, c = (rng.normal(0.0, 1.0, (k, 3)) for _ in range(3))
    p = rng.normal(0.0, 1.5, (k, 3))
    p[:500] = a[:500] + rng.normal(0, 1e-3, (500, 3))  # near a corner
    q, bary, face = closest_points(*(np.ascontiguousarray(x.T) for x in (p, a, b, c)))
    expected = np.array([_reference(p[i], a[i], b[i], c[i]) for i in range(k)])
    assert np.abs(q.T - expected).max() < 1e-9
    # the weights rebuild the point, and the face region has all weights inside (0, 1)
    rebuilt = a * bary[0][:, None] + b * bary[1][:, None] + c * bary[2][:, None]
    assert np.abs(rebuilt - expected).max() < 1e-9
    assert np.allclose(bary.sum(axis=0), 1.0)
    assert 0 < face.sum() < k and (bary[:, face] >= -1e-9).all()


def test_closest_point_is_never_beaten_by_dense_samples() -> None:
    rng = np.random.default_rng(5)
    a, b, c = rng.normal(0.0, 1.0, (3, 3))
    s, t = np.meshgrid(np.linspace(0, 1, 201), np.linspace(0, 1, 201))
    keep = s + t <= 1
    samples = a + np.outer(s[keep], b - a) + np.outer(t[keep], c - a)
    points = rng.normal(0.0, 2.0, (200, 3))
    cols = [np.repeat(x[:, None], 200, axis=1) for x in (a, b, c)]
    q, _, _ = closest_points(np.ascontiguousarray(points.T), *cols)
    best = np.linalg.norm(points[:, None] - samples[None], axis=2).min(axis=1)
    found = np.linalg.norm(points - q.T, axis=1)
    assert (found <= best + 1e-12).all()
    assert (best - found).max() < 0.01  # the samples are 1/200 of an edge apart


def test_degenerate_triangles_give_a_point_on_them() -> None:
    a = np.array([[0.0], [0.0], [0.0]])
    b = np.array([[1.0], [0.0], [0.0]])
    p = np.array([[0.5], [1.0], [0.0]])
    q, _, _ = closest_points(p, a, b, b.copy())  # a segment
    assert np.allclose(q[:, 0], [0.5, 0.0, 0.0])
    q, _, _ = closest_points(p, a, a.copy(), a.copy())  # a point
    assert np.allclose(q[:, 0], [0.0, 0.0, 0.0])


def test_inside_triangle_by_projection() -> None:
    a, b, c = (np.array(v, float)[:, None] for v in ([0, 0, 0], [1, 0, 0], [0, 1, 0]))
    x = np.array([[0.2, 0.6, -0.1, 0.3], [0.2, 0.6, 0.5, 0.3], [5.0, -3.0, 0.0, 0.0]])
    ok = inside_triangle(x, *(np.repeat(v, 4, axis=1) for v in (a, b, c)))
    assert ok.tolist() == [True, False, False, True]


def test_box_pairs_match_brute_force() -> None:
    rng = np.random.default_rng(11)
    points = rng.uniform(-1, 1, (3000, 3))
    lo = rng.uniform(-1.2, 1.0, (700, 3))
    hi = lo + rng.uniform(0.0, 0.3, (700, 3))
    hi[:5] = lo[:5] + 1.5  # a few big boxes among small ones
    point, box = box_pairs(points, lo, hi)
    inside = ((points[:, None] >= lo[None]) & (points[:, None] <= hi[None])).all(axis=2)
    expected = set(zip(*np.nonzero(inside), strict=True))
    found = list(zip(point.tolist(), box.tolist(), strict=True))
    assert len(found) == len(set(found))
    assert set(found) == {(int(i), int(j)) for i, j in expected}
    assert box_pairs(points, lo + 10, hi + 10)[0].size == 0


def test_box_pairs_stays_bounded_for_a_huge_box_and_tiny_ones() -> None:
    points = np.random.default_rng(2).uniform(-100, 100, (2000, 3))
    lo = np.vstack([[[-100.0, -100, -100]], np.zeros((50, 3))])
    hi = np.vstack([[[100.0, 100, 100]], np.full((50, 3), 1e-6)])
    _, box = box_pairs(points, lo, hi)
    assert (box == 0).sum() == 2000 and (box != 0).sum() == 0


def test_intersection_count_of_known_configurations() -> None:
    from .meshes import intersecting_pairs

    base = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0]])
    # a triangle piercing the base, one above it, one sharing a vertex (excluded), one
    # touching nothing
    piercing = np.array([[0.6, 0.1, -0.5], [0.7, 0.1, 0.5], [0.6, 0.2, 0.5]])
    above = base + np.array([0.0, 0.0, 0.1])
    sharing = np.array([[0.0, 0, 0], [0.5, 0.5, 0.05], [0.5, 0.5, -0.05]])  # crosses the base
    far = base + np.array([5.0, 0.0, 0.0])
    pos = np.vstack([base, piercing, above, sharing[1:], far])
    tris = np.array([[0, 1, 2], [3, 4, 5], [6, 7, 8], [0, 9, 10], [11, 12, 13]])
    # base x piercing and above x piercing; sharing crosses the base along the diagonal but
    # shares its corner 0, so it does not count; it passes beside the piercing one
    assert intersecting_pairs(pos, tris) == 2
    assert intersecting_pairs(pos, tris[[0, 3]]) == 0
    moved = pos.copy()
    moved[9:11] += np.array([0.0, 0.0, 0.3])  # now it meets "above", sharing nothing with it
    assert intersecting_pairs(moved, tris[[2, 3]]) == 1
