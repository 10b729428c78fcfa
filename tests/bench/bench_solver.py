"""Solver benchmark (a script, not a test): pure solver time per frame, stretch, stability,
and Blender's native Cloth modifier (quality 5, defaults) on the same grid, side by side.

    .venv/bin/python tests/bench/bench_solver.py [--runs 3] [--frames 250] [--no-blender]

Scene (the issue's): a 2 m square grid (100 x 100 = 10k vertices, or 200 x 200 = 40k) lying
flat at z = 1 m over x, y in [0, 2], mass 0.3 kg per vertex, pinned at the two corners
(0, 0, 1) and (2, 0, 1), structural + shear + bend springs, default settings (12 substeps at
24 fps). It falls and swings down onto a sphere of radius 0.3 m centred at (1, 0.5, 0.3)
(standing on the ground, under the sheet's middle column, a quarter of the way in from the
pinned edge) and onto the ground plane z = 0 (normal +z); friction 0.3, margin 5 mm.
Stretch is |length / rest - 1| over the structural springs: at the last frame (mean, p99)
and over the run (the mean of the per-frame means, the worst per-frame p99).
All figures are medians over runs (each run's median frame time) because the machine is
shared and noisy; CPU time (process) is given beside wall time, and the load average is
printed before and after.
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
    Sphere,
    SpringKind,
    bend_springs,
    face_edges,
    merge_with_kinds,
    shear_springs,
)
from tests.sim.grids import quad_grid  # noqa: E402

SIZE, HEIGHT, MASS = 2.0, 1.0, 0.3
SPHERE_CENTRE, SPHERE_RADIUS = (1.0, 0.5, 0.3), 0.3


def build(n: int, extra: bool = True) -> tuple[ClothModel, np.ndarray, np.ndarray]:
    positions, sizes, corners = quad_grid(n, n, SIZE, HEIGHT)
    parts = [face_edges(sizes, corners)]
    if extra:
        parts += [shear_springs(sizes, corners), bend_springs(sizes, corners, positions)]
    springs, kinds = merge_with_kinds(*parts)
    masses = np.full(n * n, MASS)
    masses[[0, n - 1]] = 0.0
    return ClothModel(positions, masses, springs, kinds), sizes, corners


def stretch(model: ClothModel, pos: np.ndarray) -> np.ndarray:
    structural = model.kinds == SpringKind.STRUCTURAL
    a, b = model.springs[structural].T
    length = np.linalg.norm(pos[b] - pos[a], axis=1)
    return np.abs(length / model.rest_lengths[structural] - 1.0)


def run_solver(n: int, settings: SimSettings, frames: int, runs: int, extra: bool = True) -> dict:
    colliders = (Sphere(SPHERE_CENTRE, SPHERE_RADIUS), Plane((0, 0, 0), (0, 0, 1)))
    medians, cpu_medians, setup = [], [], []
    result: dict = {}
    for _ in range(runs):
        model, _, _ = build(n, extra)
        t0 = time.perf_counter()
        sim = Simulator(model, settings)
        setup.append(time.perf_counter() - t0)
        times, cpu, means, p99s = [], [], [], []
        out = sim.positions()
        for _ in range(frames):
            t, c = time.perf_counter(), time.process_time()
            out = sim.step(1.0 / 24.0, colliders=colliders).positions
            times.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
            s = stretch(model, out)
            means.append(float(s.mean()))
            p99s.append(float(np.percentile(s, 99)))
        medians.append(statistics.median(times))
        cpu_medians.append(statistics.median(cpu))
        result = {
            "mean_stretch": means[-1],
            "p99_stretch": p99s[-1],
            "run_mean_stretch": float(np.mean(means)),
            "run_worst_p99": float(np.max(p99s)),
            "stable": bool(np.isfinite(out).all() and sim.recoveries == 0),
            "warnings": sim.warnings[:3],
        }
    result["ms_per_frame"] = 1e3 * statistics.median(medians)
    result["cpu_ms_per_frame"] = 1e3 * statistics.median(cpu_medians)
    result["setup_s"] = statistics.median(setup)
    return result


def show(name: str, r: dict) -> None:
    print(
        f"{name}: {r['ms_per_frame']:.1f} ms/frame wall, {r['cpu_ms_per_frame']:.1f} ms CPU; "
        f"build {r['setup_s']:.2f} s; stretch at the end mean {100 * r['mean_stretch']:.2f}% "
        f"p99 {100 * r['p99_stretch']:.2f}%, over the run mean {100 * r['run_mean_stretch']:.2f}% "
        f"worst p99 {100 * r['run_worst_p99']:.2f}%; stable {r['stable']} {r['warnings']}"
    )


def run_blender(n: int, frames: int) -> float | None:
    """Median ms per frame of Blender's Cloth modifier (quality 5) on the same scene."""
    try:
        import bpy
    except ImportError:
        return None
    bpy.ops.wm.read_homefile(use_empty=True)
    positions, _, corners = quad_grid(n, n, SIZE, HEIGHT)
    faces = corners.reshape(-1, 4).tolist()
    mesh = bpy.data.meshes.new("grid")
    mesh.from_pydata(positions.tolist(), [], faces)
    obj = bpy.data.objects.new("grid", mesh)
    scene = bpy.context.scene
    scene.collection.objects.link(obj)
    group = obj.vertex_groups.new(name="pins")
    group.add([0, n - 1], 1.0, "REPLACE")
    cloth = obj.modifiers.new("Cloth", "CLOTH")
    cloth.settings.quality = 5
    cloth.settings.vertex_group_mass = "pins"
    cloth.point_cache.frame_start = 1
    cloth.point_cache.frame_end = frames + 1
    bpy.ops.mesh.primitive_uv_sphere_add(radius=SPHERE_RADIUS, location=SPHERE_CENTRE)
    bpy.context.active_object.modifiers.new("Collision", "COLLISION")
    bpy.ops.mesh.primitive_plane_add(size=10.0, location=(0.0, 0.0, 0.0))
    bpy.context.active_object.modifiers.new("Collision", "COLLISION")
    scene.frame_start, scene.frame_end = 1, frames + 1
    scene.frame_set(1)
    times = []
    for frame in range(2, frames + 2):
        t = time.perf_counter()
        scene.frame_set(frame)
        obj.evaluated_get(bpy.context.evaluated_depsgraph_get())  # make sure it is computed
        times.append(time.perf_counter() - t)
    return 1e3 * statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--frames", type=int, default=250)
    parser.add_argument("--big-frames", type=int, default=60, help="frames for the 40k grid")
    parser.add_argument("--blender-frames", type=int, default=40)
    parser.add_argument("--no-blender", action="store_true")
    args = parser.parse_args()

    print(f"load average before: {os.getloadavg()}")
    cloth = run_solver(100, SimSettings.cloth(), args.frames, args.runs)
    show(f"cloth 10k XPBD ({SimSettings.cloth().substeps} substeps)", cloth)
    big = run_solver(200, SimSettings.cloth(), args.big_frames, args.runs)
    show("cloth 40k XPBD", big)
    soft = run_solver(100, SimSettings.soft_body(), args.frames, args.runs, extra=False)
    show(f"soft body 10k (structural, {SimSettings.soft_body().substeps} substeps)", soft)
    print(f"load average after the solver runs: {os.getloadavg()}")
    if args.no_blender:
        return
    native = run_blender(100, args.blender_frames)
    if native is None:
        print("bpy not importable: no Blender comparison")
        return
    print(f"Blender Cloth modifier 10k, quality 5: {native:.1f} ms/frame")
    print(f"ratio native / xof (10k): {native / cloth['ms_per_frame']:.1f}x")
    native_big = run_blender(200, max(args.blender_frames // 4, 5))
    if native_big is not None:
        print(f"Blender Cloth modifier 40k, quality 5: {native_big:.1f} ms/frame")
        print(f"ratio native / xof (40k): {native_big / big['ms_per_frame']:.1f}x")


if __name__ == "__main__":
    main()
