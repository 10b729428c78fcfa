"""Cloth quality on irregular meshes (a script, not a test): stretch and stability of the
default XPBD cloth where the stretch limiters' chains are not straight grid lines.

    .venv/bin/python tests/bench/bench_quality.py [--frames 250] [--root OTHER_CHECKOUT]

The scene of ``bench_solver.py`` (a 2 m sheet at z = 1 m pinned at two corners, falling onto
a sphere and the ground; 24 fps, default settings), on three 100 x 100 meshes: the grid, the
grid with every inner vertex moved by up to 30 % of a cell in the sheet's plane (fixed seed),
and the grid's quads cut into triangles along random diagonals (fixed seed). Stretch is
|length / rest - 1| over the structural springs (for triangles: the face edges), at the
last frame and over the run. ``--root`` imports ``addon.sim`` from another checkout, so an
older solver runs on the same meshes; ``--blender`` runs Blender's Cloth (quality 5, defaults)
on the same meshes and measures its mesh edges the same way.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
N, SIZE, HEIGHT, MASS = 100, 2.0, 1.0, 0.3
SPHERE_CENTRE, SPHERE_RADIUS = (1.0, 0.5, 0.3), 0.3


def grid() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    xs = np.linspace(0.0, SIZE, N)
    gx, gy = np.meshgrid(xs, xs)
    positions = np.stack([gx.ravel(), gy.ravel(), np.full(N * N, HEIGHT)], axis=1)
    i, j = np.meshgrid(np.arange(N - 1), np.arange(N - 1))
    v0 = (j * N + i).ravel()
    corners = np.stack([v0, v0 + 1, v0 + 1 + N, v0 + N], axis=1)
    return positions, np.full(len(v0), 4, dtype=np.int64), corners.ravel().astype(np.int64)


def jittered() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    positions, sizes, corners = grid()
    cell = SIZE / (N - 1)
    rng = np.random.default_rng(20261202)
    col, row = np.arange(N * N) % N, np.arange(N * N) // N
    inner = (col > 0) & (col < N - 1) & (row > 0) & (row < N - 1)
    positions[inner, :2] += rng.uniform(-0.3, 0.3, (int(inner.sum()), 2)) * cell
    return positions, sizes, corners


def triangles() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    positions, _, corners = grid()
    quads = corners.reshape(-1, 4)
    flip = np.random.default_rng(20261203).random(len(quads)) < 0.5
    first = np.where(flip[:, None], quads[:, [0, 1, 2]], quads[:, [0, 1, 3]])
    second = np.where(flip[:, None], quads[:, [0, 2, 3]], quads[:, [1, 2, 3]])
    tris = np.concatenate([first, second])
    return positions, np.full(len(tris), 3, dtype=np.int64), tris.ravel().astype(np.int64)


def run(sim_mod, mesh, frames: int) -> dict:
    positions, sizes, corners = mesh
    parts = [
        sim_mod.face_edges(sizes, corners),
        sim_mod.shear_springs(sizes, corners),
        sim_mod.bend_springs(sizes, corners, positions),
    ]
    springs, kinds = sim_mod.merge_with_kinds(*parts)
    masses = np.full(len(positions), MASS)
    masses[[0, N - 1]] = 0.0
    model = sim_mod.ClothModel(positions, masses, springs, kinds)
    t0 = time.process_time()
    sim = sim_mod.Simulator(model, sim_mod.SimSettings.cloth())
    build = time.process_time() - t0
    structural = model.kinds == sim_mod.SpringKind.STRUCTURAL
    a, b = model.springs[structural].T
    rest = model.rest_lengths[structural]
    colliders = (sim_mod.Sphere(SPHERE_CENTRE, SPHERE_RADIUS), sim_mod.Plane((0, 0, 0), (0, 0, 1)))
    means, p99s, cpu = [], [], []
    out = sim.positions()
    for _ in range(frames):
        c = time.process_time()
        out = sim.step(1.0 / 24.0, colliders=colliders).positions
        cpu.append(time.process_time() - c)
        s = np.abs(np.linalg.norm(out[b] - out[a], axis=1) / rest - 1.0)
        means.append(float(s.mean()))
        p99s.append(float(np.percentile(s, 99)))
    below = float(np.sum(out[:, 2] < -1e-3))  # points through the ground
    return {
        "end_mean": means[-1],
        "end_p99": p99s[-1],
        "run_mean": float(np.mean(means)),
        "worst_p99": float(np.max(p99s)),
        "stable": bool(np.isfinite(out).all() and sim.recoveries == 0),
        "below_ground": below,
        "build_s": build,
        "cpu_ms": 1e3 * float(np.median(cpu)),
    }


def run_blender(mesh, frames: int) -> dict:
    import bpy

    positions, sizes, corners = mesh
    bpy.ops.wm.read_homefile(use_empty=True)
    faces = np.split(corners, np.cumsum(sizes)[:-1])
    data = bpy.data.meshes.new("sheet")
    data.from_pydata(positions.tolist(), [], [f.tolist() for f in faces])
    obj = bpy.data.objects.new("sheet", data)
    scene = bpy.context.scene
    scene.collection.objects.link(obj)
    obj.vertex_groups.new(name="pins").add([0, N - 1], 1.0, "REPLACE")
    cloth = obj.modifiers.new("Cloth", "CLOTH")
    cloth.settings.quality = 5
    cloth.settings.vertex_group_mass = "pins"
    cloth.point_cache.frame_start, cloth.point_cache.frame_end = 1, frames + 1
    bpy.ops.mesh.primitive_uv_sphere_add(radius=SPHERE_RADIUS, location=SPHERE_CENTRE)
    bpy.context.active_object.modifiers.new("Collision", "COLLISION")
    bpy.ops.mesh.primitive_plane_add(size=10.0, location=(0.0, 0.0, 0.0))
    bpy.context.active_object.modifiers.new("Collision", "COLLISION")
    scene.frame_start, scene.frame_end = 1, frames + 1
    edges = np.empty(2 * len(data.edges), dtype=np.int64)
    data.edges.foreach_get("vertices", edges)
    a, b = edges.reshape(-1, 2).T
    rest = np.linalg.norm(positions[b] - positions[a], axis=1)
    means, p99s = [], []
    out = positions
    for frame in range(1, frames + 2):
        scene.frame_set(frame)
        evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get()).data
        flat = np.empty(3 * len(evaluated.vertices))
        evaluated.vertices.foreach_get("co", flat)
        out = flat.reshape(-1, 3)
        if frame > 1:
            s = np.abs(np.linalg.norm(out[b] - out[a], axis=1) / rest - 1.0)
            means.append(float(s.mean()))
            p99s.append(float(np.percentile(s, 99)))
    return {
        "end_mean": means[-1],
        "end_p99": p99s[-1],
        "run_mean": float(np.mean(means)),
        "worst_p99": float(np.max(p99s)),
        "stable": bool(np.isfinite(out).all()),
        "below_ground": float(np.sum(out[:, 2] < -1e-3)),
        "build_s": 0.0,
        "cpu_ms": float("nan"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--frames", type=int, default=250)
    parser.add_argument("--root", type=Path, default=ROOT, help="checkout whose addon.sim runs")
    parser.add_argument("--blender", action="store_true", help="Blender's Cloth instead")
    args = parser.parse_args()
    sys.path.insert(0, str(args.root.resolve()))
    import addon.sim as sim_mod

    if args.blender:
        print("Blender's Cloth, quality 5")
    print(f"addon.sim from {Path(sim_mod.__file__).parents[1]}; load {os.getloadavg()}")
    for name, make in (("grid", grid), ("jittered", jittered), ("triangles", triangles)):
        mesh = make()
        r = run_blender(mesh, args.frames) if args.blender else run(sim_mod, mesh, args.frames)
        print(
            f"{name}: stretch end mean {100 * r['end_mean']:.3f}% p99 {100 * r['end_p99']:.3f}%, "
            f"run mean {100 * r['run_mean']:.3f}% worst p99 {100 * r['worst_p99']:.3f}%; "
            f"stable {r['stable']}, below ground {r['below_ground']:.0f}; "
            f"build {r['build_s']:.3f} s, {r['cpu_ms']:.1f} ms/frame CPU"
        )


if __name__ == "__main__":
    main()
