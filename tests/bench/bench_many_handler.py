"""Many cloth objects through the REAL frame handler vs Blender's Cloth modifier.

A script, not a test: ``.venv/bin/python tests/bench/bench_many_handler.py [--runs 3]``.
Scene: ``--objects`` sheets of ``--side`` x ``--side`` points (40 of 400 by default), 0.5 m
square, 0.6 m apart at z = 1 m, each pinned at its two top corners (mass 0.3 kg a point),
structural + shear + bend springs, over a floor plane in a collider collection. xof: every
sheet enabled, ``scene.frame_set`` per frame (one World step for all of them). Blender: the
same sheets with a Cloth modifier each (quality 5, the pins in the pin group) and the floor
with a Collision modifier. Medians of the per-frame wall and process CPU time over
``--runs`` runs (frame 1, the reset, left out), xof's CPU also with its helper processes'
(``sim.parallel``); the load average is printed. Stretch: ``|length / rest - 1|`` over the
mesh edges of every eighth sheet, read from the shown (evaluated) mesh every tenth frame
outside the timing, for both (``--substeps`` sets xof's, to see what fewer would give).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import bpy  # noqa: E402

import tests.conftest  # noqa: E402,F401  (puts the package on sys.path as `xof`)
from tests.scene import cloth_fixtures as fx  # noqa: E402

MASS = 0.3


def build(objects: int, side: int, native: bool, substeps: int = 0) -> list[Any]:
    bpy.ops.wm.read_homefile(use_empty=True)
    if not native:
        fx.register_physics()
    floor = bpy.data.objects.new("Floor", bpy.data.meshes.new("Floor"))
    floor.data.from_pydata([(-1, -3, 0), (30, -3, 0), (30, 3, 0), (-1, 3, 0)], [], [(0, 1, 2, 3)])
    colliders = bpy.data.collections.new("Colliders")
    bpy.context.scene.collection.children.link(colliders)
    colliders.objects.link(floor)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 250
    sheets = []
    for i in range(objects):
        obj = fx.grid_object(bpy, f"Sheet{i}", side, side, size=0.5)
        obj.location = (0.6 * i, 0.0, 1.0)
        pins = [side * (side - 1), side * side - 1]  # the top row's corners
        if native:
            group = obj.vertex_groups.new(name="pin")
            group.add(pins, 1.0, "REPLACE")
            mod = obj.modifiers.new("Cloth", "CLOTH")
            mod.settings.quality = 5
            mod.settings.vertex_group_mass = "pin"
            mod.point_cache.frame_start, mod.point_cache.frame_end = 1, 250
        else:
            from xof.addon.scene.cloth.data import MASS_GROUP, set_group_weights

            masses = np.full(side * side, MASS)
            masses[pins] = 0.0
            set_group_weights(obj, MASS_GROUP, masses)
            props = obj.xof_physics
            props.enabled = True
            props.use_shear = props.use_bend = True
            props.collider_collection = colliders
            props.frame_start, props.frame_end = 1, 250
            if substeps:
                props.substeps = substeps
        sheets.append(obj)
    if native:
        floor.modifiers.new("Collision", "COLLISION")
    bpy.context.view_layer.update()
    return sheets


def _helper_cpu() -> float:
    """CPU seconds of xof's helper processes so far (0 where there are none)."""
    try:
        from xof.addon.sim.many import parallel
    except ImportError:
        return 0.0
    return parallel.helper_cpu()


def edge_stretch(sheets: list[Any]) -> np.ndarray:
    """``|length / rest - 1|`` of the mesh edges of every eighth sheet, as shown now."""
    out = []
    for obj in sheets[::8]:
        mesh = obj.data
        ends = np.empty(2 * len(mesh.edges), dtype=np.int32)
        mesh.edges.foreach_get("vertices", ends)
        rest = np.empty(3 * len(mesh.vertices), dtype=np.float32)
        mesh.vertices.foreach_get("co", rest)
        a, b = ends[0::2], ends[1::2]
        rest_xyz = rest.reshape(-1, 3).astype(np.float64)
        now = fx.evaluated_positions(bpy, obj).astype(np.float64)
        length = np.linalg.norm(now[a] - now[b], axis=1)
        rest_length = np.linalg.norm(rest_xyz[a] - rest_xyz[b], axis=1)
        out.append(np.abs(length / rest_length - 1.0))
    return np.concatenate(out)


def play(frames: int, sheets: list[Any] | None = None) -> tuple[float, float, float]:
    """Median wall and CPU ms/frame; CPU with the helper processes' own added. With
    ``sheets``, their stretch is printed (median and worst of the samples' p99, the worst
    edge), measured outside the timed calls."""
    scene = bpy.context.scene
    scene.frame_set(1)
    wall, cpu, total = [], [], []
    p99, worst = [], 0.0
    for f in range(2, frames + 2):
        t0, c0, h0 = time.perf_counter(), time.process_time(), _helper_cpu()
        scene.frame_set(f)
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        total.append(cpu[-1] + _helper_cpu() - h0)
        if sheets and f % 10 == 0:
            stretch = edge_stretch(sheets)
            p99.append(float(np.percentile(stretch, 99)))
            worst = max(worst, float(stretch.max()))
    if p99:
        print(
            f"  stretch p99 median {100 * statistics.median(p99):.2f} %, worst "
            f"{100 * max(p99):.2f} %, worst edge {100 * worst:.2f} %",
            flush=True,
        )
    return tuple(1e3 * statistics.median(v) for v in (wall, cpu, total))  # type: ignore[return-value]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--objects", type=int, default=40)
    ap.add_argument("--side", type=int, default=20)
    ap.add_argument("--frames", type=int, default=60)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--substeps", type=int, default=0, help="xof's substeps (0: the default)")
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f}", flush=True)
    ours, theirs = [], []
    for _ in range(args.runs):
        sheets = build(args.objects, args.side, native=False, substeps=args.substeps)
        print("xof:", flush=True)
        ours.append(play(args.frames, sheets))
        moved = float(fx.evaluated_positions(bpy, sheets[0])[:, 2].min() + 1.0)  # world z
        fx.unregister_physics()
        native = build(args.objects, args.side, native=True)
        print("Blender:", flush=True)
        theirs.append(play(args.frames, native))
    a_wall = statistics.median(r[0] for r in ours)
    a_cpu = statistics.median(r[1] for r in ours)
    a_all = statistics.median(r[2] for r in ours)
    b_wall = statistics.median(r[0] for r in theirs)
    b_cpu = statistics.median(r[1] for r in theirs)
    print(
        f"{args.objects} x {args.side * args.side} points, {args.frames} frames: "
        f"xof {a_wall:.1f} ms/frame wall ({a_cpu:.1f} CPU, {a_all:.1f} with helpers); "
        f"Blender Cloth q5 {b_wall:.1f} ms wall ({b_cpu:.1f} CPU): {b_wall / a_wall:.1f}x wall, "
        f"{b_cpu / a_cpu:.1f}x CPU; xof's lowest point at the end z = {moved:.2f} m"
    )
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
