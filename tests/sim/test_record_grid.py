"""RecordGrid (the mesh collider's grid) against a brute-force point-in-box test."""

import numpy as np

from addon.sim.collide.record_grid import RecordGrid


def _brute(points: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> set[tuple[int, int]]:
    p = points.astype(np.float64)[:, None, :]
    inside = ((p >= lo[None]) & (p <= hi[None])).all(axis=2)
    return {(int(i), int(j)) for i, j in zip(*np.nonzero(inside), strict=True)}


def test_the_same_pairs_as_brute_force_bounds_and_points_on_faces_included() -> None:
    rng = np.random.default_rng(7)
    centre = rng.random((400, 3))
    lo = centre - rng.random((400, 3)) * 0.08
    hi = centre + rng.random((400, 3)) * 0.08
    points = rng.random((900, 3)).astype(np.float32)
    # points exactly on float32-representable faces and corners of some boxes
    lo[:50] = lo[:50].astype(np.float32)
    hi[:50] = hi[:50].astype(np.float32)
    points[:50] = lo[:50]
    points[50:100] = hi[:50]
    grid = RecordGrid(lo, hi, cell=0.03)
    point, box = grid.query(points)
    assert np.all(np.diff(point) >= 0)  # sorted by point
    got = set(zip(point.tolist(), box.tolist(), strict=True))
    assert len(got) == point.size  # distinct
    want = _brute(points, lo, hi)
    assert want <= got
    # anything extra lies on a face within float32 rounding
    for i, j in got - want:
        gap = np.maximum(lo[j] - points[i], points[i] - hi[j]).max()
        assert gap <= 1e-6
    assert len(got - want) <= 2


def test_points_outside_the_grid_and_an_empty_grid() -> None:
    lo = np.array([[0.0, 0.0, 0.0]])
    hi = np.array([[1.0, 1.0, 1.0]])
    grid = RecordGrid(lo, hi)
    point, box = grid.query(np.array([[2.0, 0.5, 0.5], [0.5, 0.5, 0.5]], dtype=np.float32))
    assert point.tolist() == [1] and box.tolist() == [0]
    empty = RecordGrid(np.zeros((0, 3)), np.zeros((0, 3)))
    assert empty.query(np.zeros((3, 3), dtype=np.float32))[0].size == 0
