"""Pairs dropped before the closest points on a still surface, and sides taken without them.

A still mesh collider drops a pair when the point's whole path over the substep stays beyond
one edge of the triangle by more than the reach and the path (on the 10k cloth's floor, two
6 m triangles, every point over one was also in the other's bounding ball); a point with one
live pair takes that plane's side without the closest points at the start. Neither may change
a contact: each substep's contacts equal those with every pair kept, and the sides equal the
nearest-triangle rule run on every pair.
"""

from __future__ import annotations

import numpy as np
import pytest

from addon.sim.collide import mesh_contacts
from addon.sim.collide.mesh_collider import MeshCollider
from addon.sim.collide.surface_pose import SurfacePose
from addon.sim.xpbd.solver import XpbdSolver

from .meshes import uv_sphere

OUTER, MARGIN = 0.02, 0.005


def _surface(kind: str) -> tuple[np.ndarray, np.ndarray]:
    """A floor at z = 0 of two 6 m triangles (every point with every triangle: no grid), or a
    0.3 m sphere of 224 triangles resting on it."""
    if kind == "floor":
        floor = np.array([[-3.0, -3.0, 0.0], [3.0, -3.0, 0.0], [3.0, 3.0, 0.0], [-3.0, 3.0, 0.0]])
        return floor, np.array([[0, 1, 2], [0, 2, 3]])
    return uv_sphere(8, 16, 0.3, (0.0, 0.5, 0.3))


def _contacts(
    monkeypatch: pytest.MonkeyPatch, cull: bool, inner: float, kind: str = "floor"
) -> tuple[list, int]:
    """Each substep's contacts of points falling on, sliding over and shooting through the
    still floor and ball (some paths far longer than the reach), and the pairs dropped."""
    dropped = [0]
    original = SurfacePose.beyond_edges

    def counted(self: SurfacePose, tri: np.ndarray, *args: np.ndarray) -> np.ndarray:
        far = original(self, tri, *args) if cull else np.zeros(len(tri), dtype=bool)
        dropped[0] += int(far.sum())
        return far

    monkeypatch.setattr(SurfacePose, "beyond_edges", counted)
    verts, tris = _surface(kind)
    collider = MeshCollider(verts, tris, outer=OUTER, inner=inner)
    rng = np.random.default_rng(5)
    top = 0.1 if kind == "floor" else 0.7
    base = rng.uniform([-2.9, -2.9, -0.05], [2.9, 2.9, top], size=(3000, 3))
    if kind == "ball":
        base[:, :2] *= 0.15
    speed = rng.normal(size=(3000, 3)) * rng.choice([0.003, 0.03, 0.4], 3000)[:, None]
    out = []
    substeps = 10
    for k in range(substeps):
        collider.begin_substep(k / substeps, (k + 1) / substeps)
        before = XpbdSolver.make_state(base + speed * k)
        after = XpbdSolver.make_state(base + speed * (k + 1))
        out.append(collider.find(after, before, MARGIN))
        out.append(collider.find(after, None, MARGIN))  # the static test (no path)
    return out, dropped[0]


@pytest.mark.parametrize("kind", ["floor", "ball"])
@pytest.mark.parametrize("inner", [0.0, 0.01], ids=["two-sided", "one-sided"])
def test_culling_on_a_still_surface_keeps_every_contact(
    monkeypatch: pytest.MonkeyPatch, inner: float, kind: str
) -> None:
    culled, dropped = _contacts(monkeypatch, True, inner, kind)
    monkeypatch.undo()
    every, none = _contacts(monkeypatch, False, inner, kind)
    assert dropped > (1000 if kind == "floor" else 200) and none == 0
    total = 0
    for got, want in zip(culled, every, strict=True):
        assert np.array_equal(got[0], want[0])
        for a, b in zip(got[1:], want[1:], strict=True):  # normals, pushes, motion: the same bits
            assert np.array_equal(a, b)
        total += got[0].size
    assert total > 500


def test_the_edge_test_bounds_the_distance() -> None:
    """A point beyond a grown edge plane by d is at least d from the triangle (brute force:
    the distance to a dense sampling of the triangle)."""
    rng = np.random.default_rng(2)
    corners = rng.normal(size=(40, 3, 3)).astype(np.float32)
    pose = SurfacePose(1.0, corners.reshape(-1, 3), np.arange(120).reshape(40, 3))
    u, v = np.meshgrid(np.linspace(0, 1, 60), np.linspace(0, 1, 60))
    keep = (u + v) <= 1
    w = np.stack([1 - u[keep] - v[keep], u[keep], v[keep]])  # (3, S) barycentric samples
    for _ in range(5):
        tri = rng.integers(0, 40, 300)
        p = rng.normal(size=(3, 300)).astype(np.float32) * 2
        distance = rng.uniform(0, 1.5, 300).astype(np.float32)
        far = pose.beyond_edges(tri, p, p, distance)
        samples = np.einsum("tkc,ks->tsc", corners[tri], w)  # (300, S, 3)
        nearest = np.sqrt(((samples - p.T[:, None, :]) ** 2).sum(axis=2)).min(axis=1)
        assert np.all(nearest[far] > distance[far])
        assert far.any() and not far.all()


def test_sides_without_the_closest_points_for_lone_pairs(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[np.ndarray, np.ndarray]] = []
    original = mesh_contacts._point_sides

    def both(pairs, live, p0, c0, s0):  # type: ignore[no-untyped-def]
        fast = original(pairs, live, p0, c0, s0)
        seen.append((fast, mesh_contacts._nearest_sides(pairs, live, p0, c0, s0)))
        return fast

    monkeypatch.setattr(mesh_contacts, "_point_sides", both)
    _contacts(monkeypatch, True, 0.0, "floor")
    _contacts(monkeypatch, True, 0.0, "ball")
    assert len(seen) >= 20
    for fast, every in seen:
        assert np.array_equal(fast, every)
