"""The mesh collider's broad phase (long triangles cut in pieces, a fine grid) against brute
force: the contacts of a moving limb of long, thin triangles are those of pairing every
point with every triangle, substep by substep."""

from __future__ import annotations

import numpy as np
import pytest

from addon.sim.collide import scan_count
from addon.sim.collide.broad_phase import cell_order
from addon.sim.collide.mesh_collider import MeshCollider
from addon.sim.collide.record_grid import RecordGrid, triangle_pieces
from addon.sim.xpbd.solver import XpbdSolver

from .meshes import uv_sphere

OUTER, MARGIN = 0.02, 0.005
LENGTH, RADIUS = 0.6, 0.05


def _limb() -> tuple[np.ndarray, np.ndarray]:
    """A capsule along z (a sphere's halves pulled ``LENGTH`` apart): its middle band is 24
    triangles 0.6 m long and 0.026 m wide, like a limb's."""
    verts, faces = uv_sphere(8, 12, RADIUS)
    verts[:, 2] += np.where(verts[:, 2] > 1e-9, LENGTH / 2, -LENGTH / 2)
    return verts, faces


def _swing(verts: np.ndarray, frame: float) -> np.ndarray:
    """The limb swung about its top (0.5 rad a frame, back and forth) and carried along x."""
    angle = 0.5 * np.sin(frame)
    c, s = np.cos(angle), np.sin(angle)
    top = np.array([0.0, 0.0, LENGTH / 2 + RADIUS])
    turn = np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])
    return (verts - top) @ turn.T + top + np.array([0.1 * frame, 0.0, 0.0])


def _points(rng: np.random.Generator, count: int) -> tuple[np.ndarray, np.ndarray]:
    """Points around the limb: a base (on or near the rest surface) and a wobble direction."""
    z = rng.uniform(-LENGTH / 2 - RADIUS, LENGTH / 2 + RADIUS, count)
    phi = rng.uniform(0, 2 * np.pi, count)
    r = RADIUS + rng.uniform(-0.02, 0.06, count)
    base = np.stack([r * np.cos(phi), r * np.sin(phi), z], axis=1)
    wobble = rng.normal(size=(count, 3)) * rng.choice([0.002, 0.02, 0.2], count)[:, None]
    return base, wobble


def _contacts(inner: float, every_pair: bool, frames: int = 4, substeps: int = 8) -> list:
    """Each substep's contacts ``(ids, normals, pushes, motion)`` of points carried with the
    swinging limb (and wobbling about it, some fast) against the limb's surface."""
    import addon.sim.collide.mesh_collider as mesh_collider

    verts, faces = _limb()
    base, wobble = _points(np.random.default_rng(11), 500)
    collider = MeshCollider(verts, faces, outer=OUTER, inner=inner)
    saved = mesh_collider.FEW_TRIANGLES
    mesh_collider.FEW_TRIANGLES = 10**9 if every_pair else saved  # every pair: no broad phase
    try:
        out = []
        for frame in range(frames):
            collider.move_to(_swing(verts, frame + 1.0))
            for k in range(substeps):
                t0, t1 = k / substeps, (k + 1) / substeps
                collider.begin_substep(t0, t1)
                before, after = (
                    XpbdSolver.make_state(
                        _swing(base, frame + t) + wobble * np.sin(5 * (frame + t))
                    )
                    for t in (t0, t1)
                )
                out.append(collider.find(after, before, MARGIN))
        if not every_pair:
            assert collider._grid is not None and collider._grid.count > len(faces)  # pieces
    finally:
        mesh_collider.FEW_TRIANGLES = saved
    return out


@pytest.mark.parametrize("inner", [0.0, 0.01], ids=["two-sided", "one-sided"])
def test_contacts_on_a_swinging_limb_are_those_of_every_pair(inner: float) -> None:
    searched = _contacts(inner, every_pair=False)
    every = _contacts(inner, every_pair=True)
    total = 0
    for got, want in zip(searched, every, strict=True):
        assert np.array_equal(got[0], want[0])  # the same points, each with one contact
        for a, b in zip(got[1:], want[1:], strict=True):  # normal, push, motion
            assert np.abs(a - b).max(initial=0.0) < 1e-6
        total += got[0].size
    assert total > 1500  # many contacts, on the long triangles among them


def test_triangle_pieces_cover_a_moving_long_triangle() -> None:
    # random points of each triangle, at random moments between the two poses, lie in a
    # piece box of their own triangle; a long sliver is cut, a small triangle is not
    rng = np.random.default_rng(5)
    start = np.array([[0.0, 0.0, 0.0], [0.02, 0.0, 0.0], [0.3, 1.0, 0.1], [1.0, 1.0, 1.0]])
    end = start + rng.normal(size=start.shape) * 0.2
    tris = np.array([[0, 1, 2], [1, 3, 0]])
    owner, lo, hi = triangle_pieces(start, start, tris, 0.1)
    assert np.count_nonzero(owner == 0) == 11  # longest edge 1.05 m: 11 bands of 0.1 m
    sliver = owner == 0
    assert (hi[sliver] - lo[sliver]).max() < 0.1  # not the whole sliver's 1 m box
    owner, lo, hi = triangle_pieces(start, end, tris, 0.1)
    w = rng.dirichlet(np.ones(3), 2000)
    t = rng.random(2000)[:, None]
    for k, tri in enumerate(tris):
        x = (1 - t) * (w @ start[tri]) + t * (w @ end[tri])
        mine = owner == k
        inside = (x[:, None] >= lo[mine][None] - 1e-12) & (x[:, None] <= hi[mine][None] + 1e-12)
        assert inside.all(axis=2).any(axis=1).all()


def test_a_grid_of_pieces_names_each_owner_once_as_brute_force() -> None:
    rng = np.random.default_rng(9)
    centre = rng.random((300, 3))
    lo = centre - rng.random((300, 3)) * 0.1
    hi = centre + rng.random((300, 3)) * 0.1
    owner = np.sort(rng.integers(0, 120, 300))
    points = rng.random((800, 3)).astype(np.float32)
    point, tri = RecordGrid(lo, hi, owner=owner, entries_per_box=64).query(points)
    got = list(zip(point.tolist(), tri.tolist(), strict=True))
    p = points.astype(np.float64)[:, None, :]
    inside = ((p >= lo[None]) & (p <= hi[None])).all(axis=2)  # (points, boxes)
    want = sorted({(int(i), int(owner[j])) for i, j in zip(*np.nonzero(inside), strict=True)})
    assert got == want  # distinct, sorted by (point, owner)


def test_cell_order_is_a_stable_sort() -> None:
    cells = np.random.default_rng(2).integers(0, 1 << 22, 50_000)
    assert np.array_equal(cell_order(cells), np.argsort(cells, kind="stable"))


def test_the_counts_say_what_was_scanned_and_kept() -> None:
    before = scan_count.SCANS.copy()
    _contacts(0.01, every_pair=False, frames=1)
    count = scan_count.SCANS.since(before)
    assert count.mesh_scanned >= count.mesh_in_box >= count.mesh_closest >= count.mesh_kept > 0
    assert count.mesh_contacts > 0
    # the limb's long triangles no longer fill the grid's cells: a good share of what is
    # scanned is in a box (before the pieces: about 1 in 12 on the walking body's cape)
    assert count.mesh_in_box > 0.15 * count.mesh_scanned
