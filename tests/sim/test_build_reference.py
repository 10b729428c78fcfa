"""The vectorised build against plain loops: limiter chains, bend pairs and colour groups.

The references below walk every point's partners one by one in Python floats (the same
operations in the same order as the vectorised code, so ties break the same way), on meshes
that reach every path of the build: quad grids, jittered grids, triangle meshes, fans, a
capped cylinder whose pole has more partners than the column comparison handles, and random
quads with repeated and degenerate corners.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from addon.sim import (
    ClothModel,
    SimSettings,
    Simulator,
    bend_springs,
    face_edges,
    merge_with_kinds,
    shear_springs,
)
from addon.sim.mesh.neighbours import COLUMN_MAX_DEGREE
from addon.sim.model import SpringKind
from addon.sim.xpbd.build import limiter_level_count
from addon.sim.xpbd.constraint_pass import Mode
from addon.sim.xpbd.limiters import MAX_NEIGHBOURS, STRAIGHT_COSINE, TURN_COSINE, limiter_levels

from .grids import quad_grid, triangle_fan

Mesh = tuple[np.ndarray, np.ndarray, np.ndarray]


def _jittered(nx: int, ny: int, scale: float, seed: int) -> Mesh:
    positions, sizes, corners = quad_grid(nx, ny, 2.0, 1.0)
    rng = np.random.default_rng(seed)
    return positions + rng.normal(0.0, scale, positions.shape), sizes, corners


def _triangles(nx: int, ny: int) -> Mesh:
    positions, _, corners = _jittered(nx, ny, 0.004, 2)
    quads = corners.reshape(-1, 4)
    tris = np.concatenate([quads[:, [0, 1, 2]], quads[:, [0, 2, 3]]], axis=1).reshape(-1)
    return positions, np.full(2 * quads.shape[0], 3), tris


def _capped_cylinder(around: int = 24, rings: int = 8) -> Mesh:
    """Quads around a tube, an n-gon at the bottom, a triangle fan to a pole on top: the
    pole and the n-gon's corners have more partners than ``COLUMN_MAX_DEGREE``."""
    angle = 2.0 * np.pi * np.arange(around) / around
    ring = np.stack([np.cos(angle), np.sin(angle)], axis=1)
    positions = [np.column_stack([ring, np.full(around, 0.15 * j)]) for j in range(rings)]
    positions.append(np.array([[0.0, 0.0, 0.15 * rings]]))
    pole = around * rings
    sizes, corners = [], []
    for j in range(rings - 1):
        for i in range(around):
            a, b = j * around + i, j * around + (i + 1) % around
            sizes.append(4)
            corners += [a, b, b + around, a + around]
    sizes.append(around)
    corners += list(range(around))
    top = (rings - 1) * around
    for i in range(around):
        sizes.append(3)
        corners += [top + i, top + (i + 1) % around, pole]
    rng = np.random.default_rng(4)
    points = np.vstack(positions)
    return points + rng.normal(0, 0.002, points.shape), np.array(sizes), np.array(corners)


def _random_quads() -> Mesh:
    rng = np.random.default_rng(5)
    return rng.random((300, 3)), np.full(250, 4), rng.integers(0, 300, 1000)


MESHES = {
    "grid": quad_grid(9, 7, 2.0, 1.0),
    "jittered": _jittered(30, 24, 0.01, 1),
    "triangles": _triangles(25, 20),
    "fan": triangle_fan(40),
    "cylinder": _capped_cylinder(),
    "random": _random_quads(),
}


def _springs(mesh: Mesh) -> tuple[np.ndarray, np.ndarray]:
    positions, sizes, corners = mesh
    n = positions.shape[0]
    edges = face_edges(sizes, corners, n)
    shear = shear_springs(sizes, corners, n, edges=edges)
    bend = bend_springs(sizes, corners, positions, edges=edges, shear=shear)
    return merge_with_kinds(edges, shear, bend)


def _partners(pairs: np.ndarray, n: int) -> list[list[tuple[int, int]]]:
    """Per point, ``(partner, pair index)`` in the order of the input's pairs forward, then
    backward (as a stable sort by point gives them)."""
    out: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    for k, (a, b) in enumerate(pairs.tolist()):
        out[a].append((b, k))
    for k, (a, b) in enumerate(pairs.tolist()):
        out[b].append((a, k))
    return out


def _unit(p: list[float], q: list[float]) -> tuple[float, float, float]:
    d = [q[0] - p[0], q[1] - p[1], q[2] - p[2]]
    norm = max(math.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]), 1e-30)
    return d[0] / norm, d[1] / norm, d[2] / norm


def _dot(u: tuple[float, ...], w: tuple[float, ...]) -> float:
    return u[0] * w[0] + u[1] * w[1] + u[2] * w[2]


def stepwise_chains(
    pairs: np.ndarray, limits: np.ndarray, positions: np.ndarray
) -> dict[tuple[int, int], float]:
    """The limiters' former definition, one level from the level below by loops: through
    every point, each partner's most opposite partner (on grids the same as
    ``reference_levels``)."""
    pos = positions.tolist()
    found: dict[tuple[int, int], float] = {}
    for v, partners in enumerate(_partners(pairs, len(pos))):
        units = [_unit(pos[v], pos[a]) for a, _ in partners]
        for i, (a, k) in enumerate(partners):
            best, best_cos = -1, math.inf
            for j, (b, _) in enumerate(partners[:MAX_NEIGHBOURS]):
                if b == a:
                    continue
                c = _dot(units[i], units[j])
                if c < best_cos:
                    best, best_cos = j, c
            if best < 0 or best_cos > STRAIGHT_COSINE:
                continue
            b, m = partners[best]
            key = (min(a, b), max(a, b))
            total = float(limits[k]) + float(limits[m])
            found[key] = min(found.get(key, math.inf), total)
    return found


def reference_levels(
    pairs: np.ndarray, limits: np.ndarray, positions: np.ndarray, levels: int
) -> list[dict[tuple[int, int], float]]:
    """``limiter_levels`` by loops. A directed pair ``(a -> v)`` (point ``a``'s partner slot)
    goes on into ``(v -> b)``, ``b`` the first of ``v``'s first ``MAX_NEIGHBOURS`` partners
    most opposite ``a`` (cosine at most ``TURN_COSINE``); level ``k``'s chain from a slot is
    level ``k - 1``'s chain from it (level 0: the slot's pair), then the one from the slot
    after its end, when the joint is straight enough; its limit sums the two halves'. Per
    level: every pair of ends (not one point) and its smallest limit."""
    pos = positions.tolist()
    partners = _partners(pairs, len(pos))  # forward halves first, as in ``_partners``
    slot_of: dict[tuple[int, int, bool], int] = {}  # (point, pair, forward) -> slot
    for v, row in enumerate(partners):
        for i, (_, k) in enumerate(row):
            slot_of[(v, k, (v, k, True) not in slot_of and int(pairs[k][0]) == v)] = i
    ahead: dict[tuple[int, int], tuple[int, int] | None] = {}
    for (a, k, forward), i in slot_of.items():
        v = partners[a][i][0]
        back = slot_of[(v, k, not forward)]  # the same pair the other way, at v
        here = _unit(pos[v], pos[a])
        best, best_cos = -1, math.inf
        for j, (b, _) in enumerate(partners[v][:MAX_NEIGHBOURS]):
            if j == back:
                continue
            c = _dot(here, _unit(pos[v], pos[b]))
            if c < best_cos:
                best, best_cos = j, c
        ok = best >= 0 and best_cos <= TURN_COSINE
        ahead[(a, i)] = (v, best) if ok else None

    def chain(slot: tuple[int, int], level: int) -> tuple[int, float, tuple[int, int]] | None:
        """(end point, limit, last slot) of the chain of 2 ** level springs from ``slot``."""
        a, i = slot
        if level == 0:
            return partners[a][i][0], float(limits[partners[a][i][1]]), slot
        first = chain(slot, level - 1)
        if first is None or ahead[first[2]] is None:
            return None
        second = chain(ahead[first[2]], level - 1)  # type: ignore[arg-type]
        if second is None:
            return None
        mid = first[0]
        c = _dot(_unit(pos[mid], pos[a]), _unit(pos[mid], pos[second[0]]))
        if c > STRAIGHT_COSINE:
            return None
        return second[0], first[1] + second[1], second[2]

    out: list[dict[tuple[int, int], float]] = []
    for level in range(1, levels + 1):
        found: dict[tuple[int, int], float] = {}
        for a, row in enumerate(partners):
            for i in range(len(row)):
                got = chain((a, i), level)
                if got is None or got[0] == a:
                    continue
                key = (min(a, got[0]), max(a, got[0]))
                found[key] = min(found.get(key, math.inf), got[1])
        if not found:
            break
        out.append(found)
    return out


def reference_bend(mesh: Mesh) -> set[tuple[int, int]]:
    """``bend_springs`` by loops: through every point, each neighbour's most opposite other
    neighbour that is not its face turn, past 135 degrees; minus edges and diagonals."""
    positions, sizes, corners = mesh
    pos = positions.tolist()
    n = len(pos)
    edges = face_edges(sizes, corners, n)
    neighbours: list[set[int]] = [set() for _ in range(n)]
    for a, b in edges.tolist():
        neighbours[a].add(b)
        neighbours[b].add(a)
    turns: set[tuple[int, int, int]] = set()
    start = 0
    for size in sizes.tolist():
        face = corners[start : start + size].tolist()
        start += size
        for c in range(size):
            p, v, q = face[c - 1], face[c], face[(c + 1) % size]
            if p in neighbours[v] and q in neighbours[v]:
                turns |= {(v, p, q), (v, q, p)}
    out: set[tuple[int, int]] = set()
    for v in range(n):
        around = sorted(neighbours[v])
        offsets = [[pos[a][k] - pos[v][k] for k in range(3)] for a in around]
        norms = [math.sqrt(_dot(o, o)) for o in offsets]
        for i, a in enumerate(around):
            best, best_cos = -1, math.inf
            for j, b in enumerate(around):
                if j == i or (v, a, b) in turns:
                    continue
                c = _dot(offsets[i], offsets[j]) / max(norms[i] * norms[j], 1e-30)
                if c < best_cos:
                    best, best_cos = j, c
            if best >= 0 and best_cos < -math.sqrt(0.5):
                b = around[best]
                out.add((min(a, b), max(a, b)))
    shear = shear_springs(sizes, corners, n, edges=edges)
    return out - {tuple(p) for p in edges.tolist()} - {tuple(p) for p in shear.tolist()}


@pytest.mark.parametrize("name", sorted(MESHES))
def test_limiter_chains_match_the_loops(name: str) -> None:
    positions, sizes, corners = MESHES[name]
    edges = face_edges(sizes, corners, positions.shape[0])
    lengths = np.linalg.norm(positions[edges[:, 1]] - positions[edges[:, 0]], axis=1)
    rng = np.random.default_rng(7)
    shuffled = rng.permutation(edges.shape[0])  # input order decides the partners' order
    for pairs, limits in ((edges, lengths), (edges[shuffled][:, ::-1], lengths[shuffled])):
        got = limiter_levels(pairs, limits, positions, 4)
        want = reference_levels(pairs, limits, positions, 4)
        assert len(got) == len(want)
        for (got_pairs, got_limits), level in zip(got, want, strict=True):
            assert [tuple(p) for p in got_pairs.tolist()] == sorted(level)
            assert got_limits.tolist() == [level[k] for k in sorted(level)]


@pytest.mark.parametrize("size", [(9, 7), (12, 12), (30, 5), (17, 3)])
def test_on_grids_the_chains_are_the_former_level_by_level_ones(size: tuple[int, int]) -> None:
    # a level from the one below (the former definition) or by doubling chains: the same
    positions, sizes, corners = quad_grid(*size, 2.0, 1.0)
    edges = face_edges(sizes, corners)
    lengths = np.linalg.norm(positions[edges[:, 1]] - positions[edges[:, 0]], axis=1)
    got = limiter_levels(edges, lengths, positions, 4)
    pairs, limits = edges, lengths
    for got_pairs, got_limits in got:
        level = stepwise_chains(pairs, limits, positions)
        assert [tuple(p) for p in got_pairs.tolist()] == sorted(level)
        assert got_limits.tolist() == [level[k] for k in sorted(level)]
        pairs, limits = got_pairs, got_limits
    assert len(got) == 4 or not stepwise_chains(pairs, limits, positions)


def test_the_meshes_reach_both_chain_walks(monkeypatch: pytest.MonkeyPatch) -> None:
    # a grid follows only the chains up the point numbers (the others mirror them); the
    # jittered grid, all of them
    from addon.sim.xpbd import limiter_chains

    one_way = limiter_chains._one_way
    seen: list[bool] = []

    def watched(*args: np.ndarray) -> np.ndarray | None:
        out = one_way(*args)  # type: ignore[arg-type]
        seen.append(out is not None)
        return out

    monkeypatch.setattr(limiter_chains, "_one_way", watched)
    for name in ("grid", "jittered"):
        positions, sizes, corners = MESHES[name]
        edges = face_edges(sizes, corners, positions.shape[0])
        limiter_levels(edges, np.ones(len(edges)), positions, 2)
    assert seen == [True, False]


def test_the_meshes_reach_both_comparisons() -> None:
    _, sizes, corners = MESHES["cylinder"]
    edges = face_edges(sizes, corners)
    degree = np.bincount(edges.ravel())
    assert degree.max() > COLUMN_MAX_DEGREE and degree.min() <= COLUMN_MAX_DEGREE


@pytest.mark.parametrize("name", sorted(MESHES))
def test_bend_pairs_match_the_loops(name: str) -> None:
    positions, sizes, corners = MESHES[name]
    bend = bend_springs(sizes, corners, positions)
    assert {tuple(p) for p in bend.tolist()} == reference_bend(MESHES[name])


@pytest.mark.parametrize("name", sorted(MESHES))
def test_solver_groups_cover_every_constraint_once_and_share_no_point(name: str) -> None:
    positions = MESHES[name][0]
    n = positions.shape[0]
    springs, kinds = _springs(MESHES[name])
    masses = np.full(n, 0.3)
    masses[[0, n // 3]] = 0.0
    model = ClothModel(positions, masses, springs, kinds)
    settings = SimSettings.cloth(stretch_limit_levels=4)
    sim = Simulator(model, settings)
    solver = sim.solver
    limiters: dict[tuple[int, int], float] = {}
    spring_ids: list[np.ndarray] = []
    for group, source in zip(solver.groups, solver.sources, strict=True):
        g = group.size
        ends = group.ends
        assert np.unique(ends).size == 2 * g  # no point twice in a group
        if group.mode == Mode.LIMITER:
            rows = zip(ends[:g].tolist(), ends[g:].tolist(), group.rest.tolist(), strict=True)
            for a, b, rest in rows:
                key = (min(a, b), max(a, b))
                assert key not in limiters  # each limiter in one group only
                limiters[key] = rest
        else:
            assert source.spring_ids is not None
            assert np.array_equal(springs[source.spring_ids], model.springs[source.spring_ids])
            assert np.array_equal(np.sort(ends[:g]), np.sort(model.springs[source.spring_ids, 0]))
            spring_ids.append(source.spring_ids)
    ids = np.concatenate(spring_ids)
    assert np.unique(ids).size == ids.size  # every spring in one group at most ...
    free = ~model.pinned
    movable = free[model.springs[:, 0]] | free[model.springs[:, 1]]
    assert np.array_equal(np.sort(ids), np.flatnonzero(movable))  # ... and every one solved
    # the limiters: every level's chains (by loops), less the pairs springs already join
    # and those between two pins
    structural = model.springs[model.kinds == SpringKind.STRUCTURAL]
    lengths = model.rest_lengths[model.kinds == SpringKind.STRUCTURAL]
    have = {tuple(p) for p in model.springs.tolist()}
    want: dict[tuple[int, int], float] = {}
    for level in reference_levels(
        structural, lengths, positions, limiter_level_count(settings, model)
    ):
        for key, limit in level.items():
            if key not in have and (free[key[0]] or free[key[1]]):
                want[key] = limit
    assert limiters.keys() == want.keys()
    assert np.allclose([limiters[k] for k in want], [want[k] for k in want], rtol=1e-6)


def test_a_pair_given_twice_takes_its_limit_on_the_first_spring_only_if_bend() -> None:
    from addon.sim.xpbd.build import limiter_sets

    positions, sizes, corners = quad_grid(5, 5, 4.0)  # 1 m springs
    edges = face_edges(sizes, corners)
    bend = bend_springs(sizes, corners, positions)
    twice = bend[:1]  # (0, 2) also as a structural spring, listed before the bend one
    springs = np.vstack([edges, twice, bend, bend[1:2]])  # and (1, 3) as a second bend
    kinds = np.concatenate(
        [np.zeros(len(edges) + 1), np.full(len(bend) + 1, SpringKind.BEND)]
    ).astype(np.uint8)
    model = ClothModel(positions, np.full(25, 0.3), springs, kinds)
    sets, bend_limit = limiter_sets(model, SimSettings.cloth(stretch_limit_levels=1), np.ones(25))
    first_bend = len(edges) + 1
    assert np.isnan(bend_limit[first_bend])  # its pair's first spring is structural
    assert bend_limit[first_bend + 1] == 2.0  # (1, 3): the first of its two bend springs
    assert np.isnan(bend_limit[-1])  # ... not the repeat
    assert np.all(bend_limit[first_bend + 2 : -1] == 2.0)
    assert np.isnan(bend_limit[:first_bend]).all()
    (pairs, limits), *_ = sets  # the span-2 chains that are no spring: (0, 3) through 2
    structural = model.springs[model.kinds == SpringKind.STRUCTURAL]
    lengths = np.linalg.norm(np.diff(positions[structural], axis=1)[:, 0], axis=1)
    chains = reference_levels(structural, lengths, positions, 1)[0]
    have = {tuple(p) for p in springs.tolist()}
    want = {k: v for k, v in chains.items() if k not in have}
    assert [tuple(p) for p in pairs.tolist()] == sorted(want) == [(0, 3)]
    assert limits.tolist() == [want[k] for k in sorted(want)] == [3.0]


@pytest.mark.parametrize("pins", [[0, 8], [2, 6, 18, 26, 40], list(range(0, 81, 1))[:70]])
def test_limiters_between_two_pins_are_dropped(pins: list[int], monkeypatch) -> None:
    # a few pins (found by bisection) or many (every pair tested): the chains, less the
    # pairs springs already join and those between two pins
    from addon.sim.xpbd import build as xpbd_build
    from addon.sim.xpbd.build import FEW_PINS, limiter_sets

    monkeypatch.setattr(xpbd_build, "COARSE_SPAN_SHARE", 1.0)  # all 3 levels on 8 springs

    positions, sizes, corners = quad_grid(9, 9, 8.0)
    springs, kinds = _springs((positions, sizes, corners))
    masses = np.full(81, 0.3)
    masses[pins] = 0.0
    model = ClothModel(positions, masses, springs, kinds)
    inv_mass = np.where(masses > 0, 1.0 / np.maximum(masses, 1e-30), 0.0)
    settings = SimSettings.cloth(stretch_limit_levels=3)
    sets, _ = limiter_sets(model, settings, inv_mass)
    structural = model.springs[model.kinds == SpringKind.STRUCTURAL]
    lengths = model.rest_lengths[model.kinds == SpringKind.STRUCTURAL]
    have = {tuple(p) for p in model.springs.tolist()}
    levels = reference_levels(structural, lengths, positions, limiter_level_count(settings, model))
    assert len(sets) == len(levels) == 3
    for (pairs, limits), level in zip(sets, levels, strict=True):
        want = {k: v for k, v in level.items() if k not in have and not set(k) <= set(pins)}
        assert [tuple(p) for p in pairs.tolist()] == sorted(want)
        assert limits.tolist() == [want[k] for k in sorted(want)]
    assert (len(pins) > FEW_PINS) == (pins[-1] == 69)
    assert any(set(k) <= set(pins) for level in levels for k in level)  # some were dropped
