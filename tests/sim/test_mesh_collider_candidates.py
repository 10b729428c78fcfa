"""The mesh collider's candidates against every pair: what a query keeps, what it carries
from substep to substep and pose to pose, and the grid's size, each giving the contacts (or
the cloth) that a search of every pair gives."""

from __future__ import annotations

import numpy as np
import pytest

from addon.sim import SimSettings, Simulator
from addon.sim.collide.mesh_collider import MeshCollider
from addon.sim.xpbd.solver import XpbdSolver

from .helpers import grid_model
from .meshes import icosphere
from .test_mesh_collider import _outside_margin, _resolve

OUTER, MARGIN = 0.02, 0.005
REACH = OUTER + MARGIN


def _state(points: np.ndarray) -> np.ndarray:
    return XpbdSolver.make_state(np.asarray(points, dtype=float))


def _carried_run(monkeypatch: pytest.MonkeyPatch, tolerance: float) -> tuple[np.ndarray, int, int]:
    """A cloth draped on a sphere mesh that slides sideways 0.5 m/s as a whole: the end
    positions, how many times the broad phase ran and how many times its pairs were all
    dropped and found anew."""
    import addon.sim.collide.mesh_collider as mesh_collider

    monkeypatch.setattr(mesh_collider, "RIGID_TOLERANCE", tolerance)
    asked = [0, 0]
    query = MeshCollider._query

    def counting(self, pos, here, before, chosen, reach):  # type: ignore[no-untyped-def]
        asked[0] += 1
        return query(self, pos, here, before, chosen, reach)

    class Counted(mesh_collider.AnchoredPairs):
        def __init__(self, reach: float, limit: float) -> None:
            asked[1] += 1
            super().__init__(reach, limit)

    monkeypatch.setattr(MeshCollider, "_query", counting)
    monkeypatch.setattr(mesh_collider, "AnchoredPairs", Counted)
    model = grid_model(25, size=1.0, height=0.35)
    model.rest_positions[:, :2] -= 0.5
    sim = Simulator(model, SimSettings.cloth())
    sim.reset(model.rest_positions)
    verts, faces = icosphere(3, 0.3, (0.0, 0.0, 0.0))
    collider = MeshCollider(verts, faces, outer=0.01, inner=0.02)
    for frame in range(36):
        shift = np.array([0.5 * (frame + 1) / 24.0, 0.0, 0.0])
        collider.move_to(verts + shift)
        out = sim.step(colliders=(collider,)).positions
        assert _outside_margin(out.astype(float), verts + shift, faces).min() > 0.005
    return out, asked[0], asked[1]


def test_a_surface_moving_as_a_whole_keeps_its_candidates(monkeypatch: pytest.MonkeyPatch) -> None:
    # in the frame moving with the sphere nothing moves, so the pairs found at the start
    # hold from frame to frame: the same cloth as when they are found again every window
    carried, _, anew_carried = _carried_run(monkeypatch, 1e-7)
    fresh, runs_fresh, anew_fresh = _carried_run(monkeypatch, -1.0)
    assert np.abs(carried - fresh).max() < 1e-4
    assert runs_fresh >= 2 * 36 and anew_fresh >= 36  # new pairs at every new pose
    assert anew_carried <= 2, (anew_carried, anew_fresh)


def test_candidates_found_before_a_change_of_shape_are_not_carried() -> None:
    # a sheet's pairs found, then two poses without a substep between them: the sheet
    # folds up (a change of shape), then stays; the second pose held its shape, but the
    # pairs from before the fold must not come back with it
    verts = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0]])
    faces = np.array([[0, 1, 2], [1, 3, 2]])
    collider = MeshCollider(verts, faces, outer=0.01)
    points = _state(np.array([[0.9, 0.9, 0.005]]))
    collider.begin_substep(0.0, 1.0)
    assert collider.find(points, points, 0.0)[0].size == 1  # in reach of the flat sheet
    folded = verts.copy()
    folded[3, 2] = 1.0  # the far corner lifted: the second triangle turns up
    collider.move_to(folded)
    collider.move_to(folded)
    collider.begin_substep(0.0, 1.0)
    # 5 mm in front of the lifted triangle's centroid (its normal is (-1, -1, 1) / sqrt 3)
    near = np.array([2.0, 2.0, 1.0]) / 3.0 + 0.005 * np.array([-1.0, -1.0, 1.0]) / np.sqrt(3.0)
    far = _state(near[None, :])
    idx, normals, push, _ = collider.find(far, far, 0.0)
    assert idx.size == 1 and np.isclose(push[0], 0.005, atol=1e-5)  # out to the 1 cm reach
    assert np.allclose(normals[:, 0], np.array([-1.0, -1.0, 1.0]) / np.sqrt(3.0), atol=1e-5)


def _turning_run(monkeypatch: pytest.MonkeyPatch, always: bool) -> tuple[np.ndarray, int, int]:
    """A cloth draped on a sphere mesh that turns (1.5 rad/s about a tilted axis) while it
    slides: the end positions, how many points the broad phase was asked about and at how
    many substeps.
    ``always``: every point's pairs are found again at every substep."""
    from addon.sim.collide.surface_pairs import AnchoredPairs

    if always:  # every point has used more than its bounds
        monkeypatch.setattr(
            AnchoredPairs,
            "_used",
            lambda self, ends, ids, still=False: np.full(ids.size, 2.0, np.float32),
        )
    model = grid_model(25, size=1.0, height=0.35)
    model.rest_positions[:, :2] -= 0.5
    sim = Simulator(model, SimSettings.cloth())
    sim.reset(model.rest_positions)
    verts, faces = icosphere(3, 0.3, (0.0, 0.0, 0.0))
    axis = np.array([0.3, 0.0, 1.0]) / np.linalg.norm([0.3, 0.0, 1.0])
    collider = MeshCollider(verts, faces, outer=0.01, inner=0.02)
    for frame in range(30):
        angle = 1.5 * (frame + 1) / 24.0
        k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
        turn = np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * (k @ k)
        posed = verts @ turn.T + np.array([0.2 * (frame + 1) / 24.0, 0.0, 0.0])
        collider.move_to(posed)
        out = sim.step(colliders=(collider,)).positions
        assert _outside_margin(out.astype(float), posed, faces).min() > 0.005
    assert collider._pairs is not None
    return out, collider._pairs.queries, collider.rebuilds


def test_pairs_kept_on_a_turning_surface_give_the_same_cloth(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # points resting on a turning sphere move with it: their pairs are kept while they stay
    # near their anchors; the cloth is the same as when every pair is found at every substep
    from addon.sim.collide import surface_pairs

    monkeypatch.setattr(surface_pairs, "EARLY_SHARE", 1.0)  # only the points beyond
    kept, asked_kept, _ = _turning_run(monkeypatch, always=False)
    fresh, asked_fresh, _ = _turning_run(monkeypatch, always=True)
    assert np.abs(kept - fresh).max() < 1e-4
    assert asked_kept < 0.3 * asked_fresh, (asked_kept, asked_fresh)


def test_points_near_their_bounds_join_a_query_and_the_cloth_is_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a query asks about the points past half their bounds too (EARLY_SHARE): fewer broad
    # phases (the demo cape: 13 -> 5.4 a frame), and the same contacts, since any
    # point's pairs found earlier are as complete: the cloth is the same, bit for bit
    from addon.sim.collide import surface_pairs

    early, _, early_queries = _turning_run(monkeypatch, always=False)
    monkeypatch.setattr(surface_pairs, "EARLY_SHARE", 1.0)  # only the points beyond
    late, _, late_queries = _turning_run(monkeypatch, always=False)
    assert np.array_equal(early, late)
    assert early_queries < 0.9 * late_queries, (early_queries, late_queries)  # 271 vs 318


def test_points_whose_path_misses_the_surface_box_are_not_asked_about() -> None:
    # an icosphere of radius 0.3 (box +-0.3): a point 1 m above it stays out of the search,
    # one crossing the box in a single substep (from 1 m above to its centre) is caught
    verts, faces = icosphere(3, 0.3, (0.0, 0.0, 0.0))
    collider = MeshCollider(verts, faces, outer=OUTER)
    far = np.array([[0.0, 0.0, 1.3]])
    collider.begin_substep(0.0, 1.0)
    out, count = _resolve(collider, far - [0.0, 0.0, 0.01], far)
    assert count == 0 and collider.rebuilds == 0
    before, after = np.array([[0.05, 0.03, 1.3]]), np.array([[0.05, 0.03, 0.0]])
    out, count = _resolve(collider, after, before)
    assert count == 1 and collider.rebuilds == 1
    # back in front of the facet it crossed, at its reach (a neighbour's plane may be
    # farther: the largest plane distance), on top
    assert REACH - 1e-5 < _outside_margin(out, verts, faces)[0] < 2 * REACH and out[0, 2] > 0.3


def test_a_point_that_left_and_came_back_is_asked_about_again() -> None:
    # pairs found near the sphere, the point goes far (out of the search), the sphere's
    # shape changes while it is away, then the point comes back: its old pairs are not used
    verts, faces = icosphere(3, 0.3, (0.0, 0.0, 0.0))
    collider = MeshCollider(verts, faces, outer=OUTER)
    near = np.array([[0.0, 0.0, 0.3 + 0.5 * REACH]])
    collider.begin_substep(0.0, 1.0)
    assert _resolve(collider, near, near)[1] == 1
    away = np.array([[0.0, 0.0, 2.0]])
    collider.begin_substep(0.0, 1.0)
    assert _resolve(collider, away, away)[1] == 0
    grown = verts * (0.4 / 0.3)  # the sphere swells to radius 0.4 (a change of shape)
    collider.move_to(grown)
    collider.move_to(grown)
    collider.begin_substep(0.0, 1.0)
    back = np.array([[0.0, 0.0, 0.4 + 0.5 * REACH]])
    out, count = _resolve(collider, back, back)
    assert count == 1 and 0.4 + REACH - 1e-3 < out[0, 2] <= 0.4 + REACH + 1e-5


def test_a_floor_of_two_triangles_gives_what_the_broad_phase_gives(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a few-triangle surface pairs every near point with each triangle instead of searching:
    # the same cloth as through the broad phase
    import addon.sim.collide.mesh_collider as mesh_collider

    floor = np.array([[-3.0, -3.0, 0.0], [3.0, -3.0, 0.0], [3.0, 3.0, 0.0], [-3.0, 3.0, 0.0]])
    faces = np.array([[0, 1, 2], [0, 2, 3]])

    def run() -> np.ndarray:
        model = grid_model(20, size=1.0, height=0.3)
        sim = Simulator(model, SimSettings.cloth())
        sim.reset(model.rest_positions)
        collider = MeshCollider(floor, faces, outer=0.01)
        for _ in range(30):
            out = sim.step(colliders=(collider,)).positions
        assert collider.rebuilds > 0
        return out.astype(float)

    few = run()
    monkeypatch.setattr(mesh_collider, "FEW_TRIANGLES", 0)
    searched = run()
    assert few[:, 2].min() > 0.01 + 0.005 - 1e-4  # resting on the floor, outside its reach
    assert np.abs(few - searched).max() < 1e-5


def _prescribed_contacts(substeps: int = 8, frames: int = 4) -> list[tuple[np.ndarray, ...]]:
    """Contacts of points on prescribed paths (slow ones, and fast ones whose substep paths
    are several grid growths long) around a turning, swelling icosphere, every substep."""
    verts, faces = icosphere(3, 0.3, (0.0, 0.0, 0.0))
    rng = np.random.default_rng(3)
    count = 600
    direction = rng.normal(size=(count, 3))
    direction /= np.linalg.norm(direction, axis=1)[:, None]
    radius = 0.3 + rng.uniform(-0.03, 0.08, count)
    wobble = rng.normal(size=(count, 3)) * rng.choice([0.002, 0.02, 0.3], count)[:, None]
    collider = MeshCollider(verts, faces, outer=OUTER, inner=0.01)

    def points(t: float) -> np.ndarray:
        return direction * radius[:, None] + wobble * np.sin(7.0 * t)

    out = []
    for frame in range(frames):
        angle = 0.3 * (frame + 1)
        c, s = np.cos(angle), np.sin(angle)
        turn = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
        collider.move_to((verts * (1.0 + 0.05 * np.sin(frame + 1.0))) @ turn.T)
        for k in range(substeps):
            t0, t1 = k / substeps, (k + 1) / substeps
            collider.begin_substep(t0, t1)
            before, after = _state(points(frame + t0)), _state(points(frame + t1))
            idx, normals, push, motion = collider.find(after, before, MARGIN)
            out.append((idx, normals, push, motion))
    return out


def test_contacts_through_the_grid_are_those_of_every_pair(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the grid query (end points only for short paths, samples along long ones) and the
    # kept pairs give the contacts of pairing every point with every triangle
    import addon.sim.collide.mesh_collider as mesh_collider

    searched = _prescribed_contacts()
    monkeypatch.setattr(mesh_collider, "FEW_TRIANGLES", 10**9)
    every = _prescribed_contacts()
    total = 0
    for got, want in zip(searched, every, strict=True):
        assert np.array_equal(got[0], want[0])
        for a, b in zip(got[1:], want[1:], strict=True):
            assert np.abs(a - b).max(initial=0.0) < 1e-6
        total += got[0].size
    assert total > 1000  # many contacts, fast points among them


def _still_then_moving_contacts(
    monkeypatch: pytest.MonkeyPatch, skip: bool
) -> tuple[list[tuple[np.ndarray, ...]], int]:
    """Contacts of points moving around an icosphere that stands still for frames, moves,
    stands still again (at its new place) and is posed with a copy of the same vertices."""
    import addon.sim.collide.mesh_collider as mesh_collider

    if not skip:
        monkeypatch.setattr(mesh_collider.MeshCollider, "_still_again", lambda *a: False)
    verts, faces = icosphere(2, 0.3, (0.0, 0.0, 0.0))
    rng = np.random.default_rng(5)
    direction = rng.normal(size=(300, 3))
    direction /= np.linalg.norm(direction, axis=1)[:, None]
    radius = 0.3 + rng.uniform(-0.03, 0.06, 300)
    collider = MeshCollider(verts, faces, outer=OUTER)
    shifts = [0.0, 0.0, 0.0, 0.05, 0.05, 0.05, 0.05, 0.1, 0.1]
    out = []
    for frame, shift in enumerate(shifts):
        pose = verts + np.array([shift, 0.0, 0.0])
        collider.move_to(pose.copy() if frame % 2 else pose)
        for k in range(4):
            t0, t1 = k / 4, (k + 1) / 4
            collider.begin_substep(t0, t1)
            wave = 0.04 * np.sin(3.0 * (frame + np.array([t0, t1])))
            before = _state(direction * (radius + wave[0])[:, None])
            after = _state(direction * (radius + wave[1])[:, None])
            out.append(collider.find(after, before, MARGIN))
        mesh_collider.MeshCollider.begin_substep(collider, 1.0, 1.0)
    return out, collider.poses


def test_a_still_surface_posed_again_in_place_skips_the_pose(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a pose equal to the last one of a surface that stood still changes nothing: skipped
    # (no new boxes, no pose for a helper process's copy), the same contacts bit for bit
    skipped, poses = _still_then_moving_contacts(monkeypatch, skip=True)
    full, all_poses = _still_then_moving_contacts(monkeypatch, skip=False)
    assert all_poses == 10 and poses == 5  # posed at the build and frames 3, 4, 7, 8
    total = 0
    for got, want in zip(skipped, full, strict=True):
        assert len(got) == len(want)
        for a, b in zip(got, want, strict=True):
            assert a.dtype == b.dtype and np.array_equal(a, b)
        total += got[0].size
    assert total > 100


def test_a_few_points_get_a_coarser_grid_and_the_same_contacts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the grid is built every window for about the cloth's points: 60 points by a
    # 1,280-triangle sphere (fewer than a quarter of its pieces) list fewer entries a box,
    # and find the contacts a grid of ENTRIES a box finds
    from addon.sim.collide import surface_grid

    verts, faces = icosphere(3, 0.3)
    rng = np.random.default_rng(7)
    dirs = rng.normal(size=(60, 3))
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    before = _state(dirs * rng.uniform(0.28, 0.33, (60, 1)))
    after = _state(dirs * rng.uniform(0.28, 0.33, (60, 1)))

    def run() -> tuple[tuple[np.ndarray, ...], int]:
        collider = MeshCollider(verts, faces, outer=0.01)
        collider.move_to(verts * 1.02)  # growing: a moving surface, swept boxes
        collider.begin_substep(0.0, 1.0)
        found = collider.find(after, before, 0.005)
        assert collider._grid is not None
        return found, len(collider._grid.boxes)

    coarse, listed_coarse = run()
    monkeypatch.setattr(surface_grid, "FEW_POINTS", 1e-9)  # as many points as pieces
    fine, listed_fine = run()
    assert listed_coarse < 0.6 * listed_fine, (listed_coarse, listed_fine)  # 11,761 vs 43,633
    assert coarse[0].size > 10  # points in reach of the sphere (47)
    for a, b in zip(coarse, fine, strict=True):
        assert np.array_equal(a, b)


def _cap_then_across_contacts() -> tuple[list[tuple[np.ndarray, ...]], list[int], int]:
    """Contacts of 80 points resting on the +x cap of a swelling 1,280-triangle icosphere,
    half of which cross to the -x cap in the third of four substeps; per substep the number
    of pieces the grid listed, and the pieces of every triangle."""
    from addon.sim.collide.record_grid import triangle_pieces

    verts, faces = icosphere(3, 0.3)
    rng = np.random.default_rng(11)
    direction = rng.normal(size=(80, 3)) * np.array([0.15, 1.0, 1.0])
    direction[:, 0] = np.abs(direction[:, 0]) + 1.0
    direction /= np.linalg.norm(direction, axis=1)[:, None]
    radius = 0.3 + rng.uniform(-0.01, 0.04, 80)
    near = direction * radius[:, None]
    far = near * np.array([-1.0, 1.0, 1.0])
    crossing = np.arange(80) % 2 == 0
    collider = MeshCollider(verts, faces, outer=OUTER)
    collider.move_to(verts * 1.02)  # moving: the grid is built over the frame's window
    out, listed = [], []
    for k in range(4):
        collider.begin_substep(k / 4, (k + 1) / 4)
        before = np.where(crossing[:, None] & (k >= 3), far, near)
        after = np.where(crossing[:, None] & (k >= 2), far, near)
        out.append(collider.find(_state(after), _state(before), MARGIN))
        listed.append(0 if collider._grid is None else collider._grid.count)
    pieces = len(triangle_pieces(verts, verts * 1.02, faces, 2.0 * REACH * 1.5)[0])
    return out, listed, pieces


def test_the_grid_lists_the_triangles_near_the_cloth_and_again_when_points_leave_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the grid lists the triangles near the box of the cloth's points (at +x: not the far
    # cap's); points that cross to -x within the window are asked about on a grid built
    # again for their new box: every substep's contacts are those of every pair
    import addon.sim.collide.mesh_collider as mesh_collider

    searched, listed, pieces = _cap_then_across_contacts()
    assert 0 < listed[0] == listed[1] < 0.6 * pieces  # the cap's triangles, a grid a window
    assert listed[2] > listed[1]  # built again for the points at -x
    monkeypatch.setattr(mesh_collider, "FEW_TRIANGLES", 10**9)
    every, _, _ = _cap_then_across_contacts()
    total = crossed = 0
    for got, want in zip(searched, every, strict=True):
        assert np.array_equal(got[0], want[0])
        for a, b in zip(got[1:], want[1:], strict=True):
            assert np.abs(a - b).max(initial=0.0) < 1e-6
        total += got[0].size
    crossed = sum(int(np.count_nonzero(got[0] % 2 == 0)) for got in searched[2:])
    assert total > 200 and crossed > 40  # contacts on both caps


def test_rows_computed_ahead_give_the_cloth_of_poses_computed_each_substep(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the named triangles' rows for the frame's substeps to come, in one pass a query
    # (``_look_ahead``): the cloth on the turning sphere is the one of poses computing their
    # rows substep by substep, bit for bit, with far fewer passes over the rows
    from addon.sim.collide import surface_pose

    passes = [0]
    rows = surface_pose.packed_rows

    def counted(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        passes[0] += 1
        return rows(x)

    monkeypatch.setattr(surface_pose, "packed_rows", counted)
    ahead, _, _ = _turning_run(monkeypatch, always=False)
    ahead_passes = passes[0]
    monkeypatch.setattr(MeshCollider, "_look_ahead", lambda self, t: None)
    passes[0] = 0
    each, _, _ = _turning_run(monkeypatch, always=False)
    assert np.array_equal(ahead, each)
    assert ahead_passes < passes[0], (ahead_passes, passes[0])
