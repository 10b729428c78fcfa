"""Solver benchmark (a script, not a test): pure solver time per frame, stretch, stability,
and Blender's native Cloth modifier (quality 5, defaults) on the same grid, side by side.

    .venv/bin/python tests/bench/bench_solver.py [--runs 3] [--frames 250] [--no-blender]

Scene: a 2 m square grid (100 x 100 = 10k vertices, or 200 x 200 = 40k) lying flat 1 m
above the ground, pinned at two adjacent corners, structural + shear + bend springs; it
swings down onto a 0.3 m sphere standing on a ground plane. All figures are medians over
runs (each run's median frame time) because the machine is shared and noisy.
"""

from __future__ import annotations

import argparse
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
    medians, setup = [], []
    result: dict = {}
    for _ in range(runs):
        t0 = time.perf_counter()
        model, _, _ = build(n, extra)
        sim = Simulator(model, settings)
        setup.append(time.perf_counter() - t0)
        times = []
        out = sim.positions()
        for _ in range(frames):
            t = time.perf_counter()
            out = sim.step(1.0 / 24.0, colliders=colliders)
            times.append(time.perf_counter() - t)
        medians.append(statistics.median(times))
        s = stretch(model, out)
        result = {
            "mean_stretch": float(s.mean()),
            "p99_stretch": float(np.percentile(s, 99)),
            "stable": bool(np.isfinite(out).all() and sim.recoveries == 0),
            "warnings": sim.warnings[:3],
        }
    result["ms_per_frame"] = 1e3 * statistics.median(medians)
    result["setup_s"] = statistics.median(setup)
    return result


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

    cloth = run_solver(100, SimSettings.cloth(), args.frames, args.runs)
    print(f"cloth 10k XPBD ({SimSettings.cloth().substeps} substeps): {cloth}")
    big = run_solver(200, SimSettings.cloth(), args.big_frames, args.runs)
    print(f"cloth 40k XPBD: {big}")
    soft = run_solver(100, SimSettings.soft_body(), args.frames, args.runs, extra=False)
    print(f"soft body 10k (structural, {SimSettings.soft_body().substeps} substeps): {soft}")
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
