"""Collision benchmark (a script, not a test): solver time per frame with a mesh collider and
with self-collision, beside the analytic sphere of ``bench_solver.py`` on the same scene.

    .venv/bin/python tests/bench/bench_collide.py [--runs 3] [--frames 120] [--level 5]
        [--variants sphere,mesh,moving,self,cape]

Scene: ``bench_solver.py``'s 10k cloth (2 m square at z = 1 m, pinned at two corners) falls
onto a sphere of radius 0.3 m at (1, 0.5, 0.3) standing on the ground plane z = 0. The
sphere is an icosphere mesh (``--level`` 5: 20,480 triangles) given to ``MeshCollider``
(outer thickness 0.01 m, one-sided with 0.02 m inside), the ground stays a ``Plane``.
Variants, interleaved run by run so machine load hits them alike: the analytic sphere (the
anchor), the mesh sphere, the mesh sphere moving sideways 0.5 m/s (swept test, poses
interpolated per substep), and the mesh sphere with self-collision (distance 0.015 m). Per
variant: the median over runs of each run's median frame time (wall and process CPU),
substeps that ran the broad phase per frame, the deepest point inside the sphere (below the
inscribed radius of the mesh; negative: none), and stretch at the last frame; for
self-collision the count of intersecting cloth triangle pairs at the last frame (pairs
sharing a vertex excluded).

Variant ``cape`` (no collider): a 100 x 100 sheet at a 5 mm grid (0.495 m square) hanging
in the XZ plane from its pinned top row, self-collision 0.015 m; the top row is gathered to
70 % of its width over the first second while it swings 0.1 m along x (1 Hz) and y (0.7 Hz),
so the sheet wrinkles and folds; "deepest" does not apply.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from addon.sim import ClothModel, Plane, SimSettings, Simulator, Sphere  # noqa: E402
from addon.sim.collide.mesh_collider import MeshCollider  # noqa: E402
from addon.sim.collide.scan_count import SCANS, scan_report  # noqa: E402
from addon.sim.mesh.springs import (  # noqa: E402
    bend_springs,
    face_edges,
    merge_with_kinds,
    shear_springs,
)
from tests.bench.bench_solver import SPHERE_CENTRE, SPHERE_RADIUS, build, stretch  # noqa: E402
from tests.sim.grids import quad_grid  # noqa: E402
from tests.sim.meshes import grid_triangles, icosphere, intersecting_pairs  # noqa: E402

OUTER, INNER, SELF_DISTANCE, SPEED = 0.01, 0.02, 0.015, 0.5
CAPE_POINTS, CAPE_GRID = 100, 0.005


def run_cape(frames: int) -> dict:
    """The ``cape`` variant (see the module)."""
    n = CAPE_POINTS
    flat, sizes, corners = quad_grid(n, n, CAPE_GRID * (n - 1))
    rest = np.stack([flat[:, 0], np.zeros(n * n), 1.0 - flat[:, 1]], axis=1)
    springs, kinds = merge_with_kinds(
        face_edges(sizes, corners),
        shear_springs(sizes, corners),
        bend_springs(sizes, corners, rest),
    )
    masses = np.full(n * n, 0.3 / (n * n))
    top = np.arange(n)
    masses[top] = 0.0
    model = ClothModel(rest, masses, springs, kinds)
    triangles = grid_triangles(n, n)
    settings = SimSettings.cloth(self_collision=True, self_distance=SELF_DISTANCE)
    sim = Simulator(model, settings, triangles=triangles)
    target = rest.copy()
    middle = rest[top, 0].mean()
    times, cpu = [], []
    out = sim.positions()
    for frame in range(frames):
        t = (frame + 1) / 24.0
        gather = 1.0 - 0.3 * min(t, 1.0)
        target[top, 0] = middle + (rest[top, 0] - middle) * gather + 0.1 * np.sin(2 * np.pi * t)
        target[top, 1] = 0.1 * np.sin(2 * np.pi * 0.7 * t)
        w, c = time.perf_counter(), time.process_time()
        out = sim.step(1.0 / 24.0, pinned_targets=target[sim.pinned_ids]).positions
        times.append(time.perf_counter() - w)
        cpu.append(time.process_time() - c)
    return {
        "ms": 1e3 * statistics.median(times),
        "cpu": 1e3 * statistics.median(cpu),
        "rebuilds": 0.0,
        "deepest": -np.inf,
        "p99": float(np.percentile(stretch(model, out), 99)),
        "stable": sim.recoveries == 0,
        "crossing": intersecting_pairs(out, triangles),
        "self_rebuilds": sim._self_hits[0].rebuilds / frames,
    }


def run(variant: str, frames: int, level: int) -> dict:
    """``run_variant``, with the collision queries' counts a frame (``scans``)."""
    before = SCANS.copy()
    result = run_variant(variant, frames, level)
    result["scans"] = SCANS.since(before)
    return result


def run_variant(variant: str, frames: int, level: int) -> dict:
    if variant == "cape":
        return run_cape(frames)
    model, _, _ = build(100)
    settings = SimSettings.cloth(self_collision=variant == "self", self_distance=SELF_DISTANCE)
    sim = Simulator(model, settings, triangles=grid_triangles(100, 100))
    verts, tris = icosphere(level, SPHERE_RADIUS, SPHERE_CENTRE)
    plane = Plane((0, 0, 0), (0, 0, 1))
    mesh = MeshCollider(verts, tris, outer=OUTER, inner=INNER)
    times, cpu, deepest = [], [], -np.inf
    out = sim.positions()
    centre = np.array(SPHERE_CENTRE)
    for frame in range(frames):
        if variant == "sphere":
            colliders: tuple = (Sphere(SPHERE_CENTRE, SPHERE_RADIUS + OUTER), plane)
        else:
            if variant == "moving":
                centre = np.array(SPHERE_CENTRE) + np.array([SPEED * (frame + 1) / 24.0, 0, 0])
                mesh.move_to(verts + (centre - SPHERE_CENTRE))
            colliders = (mesh, plane)
        t, c = time.perf_counter(), time.process_time()
        out = sim.step(1.0 / 24.0, colliders=colliders).positions
        times.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
        inscribed = float(np.linalg.norm(verts[tris].mean(axis=1) - SPHERE_CENTRE, axis=1).min())
        deepest = max(deepest, float((inscribed - np.linalg.norm(out - centre, axis=1)).max()))
    s = stretch(model, out)
    result = {
        "ms": 1e3 * statistics.median(times),
        "cpu": 1e3 * statistics.median(cpu),
        "rebuilds": mesh.rebuilds / frames,
        "deepest": deepest,
        "p99": float(np.percentile(s, 99)),
        "stable": sim.recoveries == 0,
    }
    if variant == "self":
        result["crossing"] = intersecting_pairs(out, grid_triangles(100, 100))
        result["self_rebuilds"] = sim._self_hits[0].rebuilds / frames
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--frames", type=int, default=120)
    parser.add_argument("--level", type=int, default=5, help="icosphere subdivisions")
    parser.add_argument("--variants", default="sphere,mesh,moving,self")
    args = parser.parse_args()
    variants = args.variants.split(",")
    print(f"load average before: {os.getloadavg()}")
    results: dict[str, list[dict]] = {v: [] for v in variants}
    for _ in range(args.runs):
        for v in variants:
            results[v].append(run(v, args.frames, args.level))
    for v in variants:
        rs = results[v]
        line = (
            f"{v}: {statistics.median(r['ms'] for r in rs):.1f} ms/frame wall, "
            f"{statistics.median(r['cpu'] for r in rs):.1f} ms CPU; rebuilds/frame "
            f"{rs[-1]['rebuilds']:.2f}; deepest inside {1e3 * rs[-1]['deepest']:.1f} mm "
            "(-inf: no collider); "
            f"stretch p99 {100 * rs[-1]['p99']:.2f}%; stable {all(r['stable'] for r in rs)}"
        )
        if "crossing" in rs[-1]:
            line += (
                f"; intersecting pairs at the end {rs[-1]['crossing']}; self rebuilds/frame "
                f"{rs[-1]['self_rebuilds']:.2f}"
            )
        print(line)
        for part in scan_report(rs[-1]["scans"], args.frames).splitlines():
            if ("mesh" in part and v in ("mesh", "moving", "self")) or (
                "self" in part and v in ("self", "cape")
            ):
                print(f"  {part}")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
