"""Many cloth objects (a script, not a test): a World's one pass vs one Simulator each.

    .venv/bin/python tests/bench/bench_many.py [--objects 40] [--side 20] [--frames 60] [--runs 3]
        [--surface]

Scene: ``--objects`` sheets of ``--side`` x ``--side`` points (400 by default), 0.5 m
square, side by side 0.6 m apart at z = 1 m, each pinned at two corners, structural +
shear + bend springs, default settings, all hanging over one floor plane (``--surface``: a
floor mesh of two triangles, a ``MeshCollider``, as a floor object in a collider
collection gives through the handler: one for the World, one per object alone). Each run steps
the same scene ``--frames`` frames with one ``Simulator.step`` per object ("alone") and
with ``World.step`` ("world"), interleaved frame by frame, and checks that both give the
same positions. Medians of per-frame CPU and wall times over the runs (frames after the
first 5); the load average is printed.
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

from addon.sim import (  # noqa: E402
    ClothModel,
    Plane,
    SimSettings,
    Simulator,
    bend_springs,
    face_edges,
    merge_with_kinds,
    shear_springs,
)
from addon.sim.collide.mesh_collider import MeshCollider  # noqa: E402
from addon.sim.many.world import ObjectFrame, World  # noqa: E402
from tests.sim.grids import quad_grid  # noqa: E402

FLOOR = (Plane((0.0, 0.0, 0.0), (0.0, 0.0, 1.0)),)
FLOOR_MESH = np.array([(-1.0, -3.0, 0.0), (30.0, -3.0, 0.0), (30.0, 3.0, 0.0), (-1.0, 3.0, 0.0)])
FLOOR_TRIANGLES = np.array([[0, 1, 2], [0, 2, 3]])


def sheet(side: int, x: float) -> ClothModel:
    positions, sizes, corners = quad_grid(side, side, 0.5, 1.0)
    positions[:, 0] += x
    edges = face_edges(sizes, corners)
    shear = shear_springs(sizes, corners, edges=edges)
    bend = bend_springs(sizes, corners, positions, edges=edges, shear=shear)
    springs, kinds = merge_with_kinds(edges, shear, bend)
    masses = np.full(side * side, 0.3)
    masses[[0, side - 1]] = 0.0
    return ClothModel(positions, masses, springs, kinds)


def run(
    objects: int, side: int, frames: int, surface: bool = False
) -> tuple[list[float], list[float], float, bool]:
    models = [sheet(side, 0.6 * i) for i in range(objects)]
    alone = [Simulator(m, SimSettings.cloth()) for m in models]
    floors = [MeshCollider(FLOOR_MESH, FLOOR_TRIANGLES) for _ in range(objects + 1)]
    own = [(f,) if surface else FLOOR for f in floors[:-1]]
    shared = (floors[-1],) if surface else FLOOR
    t = time.process_time()
    world = World([Simulator(m, SimSettings.cloth()) for m in models])
    inputs = [ObjectFrame(colliders=shared) for _ in models]
    world.step(inputs)  # builds the merge
    merge = time.process_time() - t
    for sim, colliders in zip(alone, own, strict=True):
        sim.step(colliders=colliders)
    solo_cpu, world_cpu, same = [], [], True
    for _ in range(frames):
        for floor in floors:
            floor.move_to(FLOOR_MESH)  # a new frame for the surfaces (they stay put)
        c = time.process_time()
        results = [sim.step(colliders=c).positions for sim, c in zip(alone, own, strict=True)]
        solo_cpu.append(time.process_time() - c)
        c = time.process_time()
        together = [r.positions for r in world.step(inputs)]
        world_cpu.append(time.process_time() - c)
        same &= all(np.array_equal(a, b) for a, b in zip(results, together, strict=True))
    return solo_cpu[5:], world_cpu[5:], merge, same


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--objects", type=int, default=40)
    ap.add_argument("--side", type=int, default=20)
    ap.add_argument("--frames", type=int, default=60)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--surface", action="store_true", help="a floor mesh, not a plane")
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    solo, world, merges, same = [], [], [], True
    for _ in range(args.runs):
        s, w, m, ok = run(args.objects, args.side, args.frames, args.surface)
        solo.append(statistics.median(s))
        world.append(statistics.median(w))
        merges.append(m)
        same &= ok
    a, b = 1e3 * statistics.median(solo), 1e3 * statistics.median(world)
    floor = "floor mesh" if args.surface else "floor plane"
    print(
        f"{args.objects} objects x {args.side * args.side} points ({floor}): alone "
        f"{a:.1f} ms/frame CPU, world {b:.1f} ms/frame CPU ({a / b:.1f}x); first world step "
        f"with the merge {statistics.median(merges):.2f} s; same positions: {same}"
    )
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
