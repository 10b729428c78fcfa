"""Cloth through the REAL frame handler (Blender I/O included) vs Blender's Cloth modifier.

A script, not a test: ``.venv/bin/python tests/bench/bench_cloth_handler.py [--runs 3]``.
Scene (bench_solver's): an N x N grid (2 m, horizontal at z = 1, 0.3 kg per point) pinned
at two corners, structural + shear + bend springs, a 0.3 m sphere under it on a floor plane.
Every figure is a median over ``--runs`` runs of the per-frame median (the machine is
shared and noisy):

- xof handler time per frame (timed by handlers placed just before and after ours) and the
  whole ``scene.frame_set`` time (which includes evaluating the modifier that shows the
  simulated shape), wall and process CPU time side by side (on a shared machine
  wall time includes waiting for a core), 10k vertices for ``--frames`` frames, with the stretch of
  the structural springs (mean and 99th percentile of |len / rest - 1|) at the last frame
  and the worst over all frames; 40k vertices (frames/s); soft body at 10k; cached frames.
- Blender's native Cloth modifier (quality 5, defaults otherwise, pins in the pin group, the
  same sphere and plane as Collision objects) on the same grid, ``scene.frame_set`` per frame.
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


class HandlerTimer:
    """Two frame_change_post handlers around xof's: the time between them is xof's."""

    def __init__(self) -> None:
        self.samples: list[float] = []
        self.cpu_samples: list[float] = []
        self.thread_samples: list[float] = []  # CPU of the calling thread only (not Blender's)
        self._t0 = self._c0 = self._h0 = 0.0

    def before(self, *_args: Any) -> None:
        self._t0, self._c0 = time.perf_counter(), time.process_time()
        self._h0 = time.thread_time()

    def after(self, *_args: Any) -> None:
        self.samples.append(time.perf_counter() - self._t0)
        self.cpu_samples.append(time.process_time() - self._c0)
        self.thread_samples.append(time.thread_time() - self._h0)

    def install(self) -> None:
        from xof.operators import sim_handler

        handlers = bpy.app.handlers.frame_change_post
        index = list(handlers).index(sim_handler.on_frame_change)
        handlers.insert(index, self.before)
        handlers.insert(index + 2, self.after)

    def uninstall(self) -> None:
        for h in (self.before, self.after):
            if h in bpy.app.handlers.frame_change_post:
                bpy.app.handlers.frame_change_post.remove(h)


def build_scene(n: int, native: bool = False, kind: str = "CLOTH", shapes: str = "SURFACE") -> Any:
    """``shapes``: SURFACE (ball and floor collide as their meshes, what a user gets) or
    ANALYTIC (the collider shape set to Sphere / Plane: the scene's figures before mesh
    colliders, and bench_solver's)."""
    bpy.ops.wm.read_homefile(use_empty=True)
    obj = fx.grid_object(bpy, "Cloth", n, n)
    obj.location = (0.0, 0.0, 1.0)
    sphere_mesh = bpy.data.meshes.new("Ball")
    import bmesh

    bm = bmesh.new()
    bmesh.ops.create_icosphere(bm, subdivisions=3, radius=0.3)
    bm.to_mesh(sphere_mesh)
    bm.free()
    ball = bpy.data.objects.new("Ball", sphere_mesh)
    ball.location = (0.0, 0.5, 0.3)  # bench_solver's scene: 0.5 m from the pinned edge
    floor = bpy.data.objects.new("Floor", bpy.data.meshes.new("Floor"))
    floor.data.from_pydata([(-3, -3, 0), (3, -3, 0), (3, 3, 0), (-3, 3, 0)], [], [(0, 1, 2, 3)])
    floor.location = (0.0, 0.0, 0.0)
    colliders = bpy.data.collections.new("Colliders")
    bpy.context.scene.collection.children.link(colliders)
    for o in (ball, floor):
        colliders.objects.link(o)
    bpy.context.view_layer.update()
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 250
    if native:
        pins = np.zeros(n * n)
        pins[[0, n - 1]] = 1.0
        fx_group = obj.vertex_groups.new(name="pin")
        fx_group.add([0, n - 1], 1.0, "REPLACE")
        mod = obj.modifiers.new("Cloth", "CLOTH")
        mod.settings.quality = 5
        mod.settings.vertex_group_mass = "pin"
        mod.point_cache.frame_start, mod.point_cache.frame_end = 1, 250
        for o in (ball, floor):
            o.modifiers.new("Collision", "COLLISION")
        return obj
    from xof.addon.scene.cloth.data import MASS_GROUP, set_group_weights

    masses = np.full(n * n, MASS)  # Blender's Cloth default mass, as bench_solver uses
    masses[[0, n - 1]] = 0.0
    set_group_weights(obj, MASS_GROUP, masses)
    props = obj.xof_physics
    props.enabled = True
    props.sim_type = kind
    props.use_shear = props.use_bend = kind == "CLOTH"
    props.collider_collection = colliders
    if shapes == "ANALYTIC":
        ball.xof_physics.collider_shape = "SPHERE"
        floor.xof_physics.collider_shape = "PLANE"
    props.frame_start, props.frame_end = 1, 250
    return obj


def stretch(obj: Any, edges: np.ndarray, rest_len: np.ndarray) -> np.ndarray:
    pos = fx.on_screen(obj).astype(np.float64)  # the shown (evaluated) shape
    length = np.linalg.norm(pos[edges[:, 1]] - pos[edges[:, 0]], axis=1)
    return np.abs(length / rest_len - 1.0)


def run_xof(n: int, frames: int, kind: str = "CLOTH", shapes: str = "SURFACE") -> dict[str, Any]:
    from xof.addon.sim.collide.scan_count import SCANS

    scans = SCANS.copy()
    obj = build_scene(n, kind=kind, shapes=shapes)
    scene = bpy.context.scene
    timer = HandlerTimer()
    timer.install()
    edges = fx.mesh_edges_of(obj)
    rest = fx.positions(obj).astype(np.float64)
    rest_len = np.linalg.norm(rest[edges[:, 1]] - rest[edges[:, 0]], axis=1)
    whole: list[float] = []
    whole_cpu: list[float] = []
    worst_mean = worst_p99 = 0.0
    finite = True
    for f in range(1, frames + 1):
        t0, c0 = time.perf_counter(), time.process_time()
        scene.frame_set(f)
        whole.append(time.perf_counter() - t0)
        whole_cpu.append(time.process_time() - c0)
        if kind == "CLOTH" and (f % 10 == 0 or f == frames):
            s = stretch(obj, edges, rest_len)
            worst_mean = max(worst_mean, float(s.mean()))
            worst_p99 = max(worst_p99, float(np.percentile(s, 99)))
    final = stretch(obj, edges, rest_len)
    finite = bool(np.isfinite(fx.on_screen(obj)).all())
    stepped = timer.samples[1:]  # frame 1 is the reset
    stepped_cpu = timer.cpu_samples[1:]
    stepped_thread = timer.thread_samples[1:]
    # cached frames: scrub back through what was simulated
    timer.samples.clear()
    for f in range(frames, 1, -max(1, frames // 50)):
        scene.frame_set(f)
    cached = list(timer.samples)
    timer.uninstall()
    from xof.addon.scene.cloth import runtime as cloth_runtime

    warnings = cloth_runtime.peek_runtime(obj).warnings
    return {
        "handler_ms": 1e3 * statistics.median(stepped),
        "handler_cpu_ms": 1e3 * statistics.median(stepped_cpu),
        "handler_thread_ms": 1e3 * statistics.median(stepped_thread),
        "frame_set_ms": 1e3 * statistics.median(whole[1:]),
        "frame_set_cpu_ms": 1e3 * statistics.median(whole_cpu[1:]),
        "cached_ms": 1e3 * statistics.median(cached),
        "mean_stretch": float(final.mean()),
        "p99_stretch": float(np.percentile(final, 99)),
        "worst_mean": worst_mean,
        "worst_p99": worst_p99,
        "finite": float(finite),
        "warnings": float(len(warnings)),
        "scans": SCANS.since(scans),  # the collision queries' work (in this process)
    }


def run_native(n: int, frames: int) -> tuple[float, float]:
    """Median wall and CPU ms per ``frame_set`` (CPU may exceed wall: Blender's threads)."""
    build_scene(n, native=True)
    scene = bpy.context.scene
    scene.frame_set(1)
    times, cpu = [], []
    for f in range(2, frames + 2):
        t0, c0 = time.perf_counter(), time.process_time()
        scene.frame_set(f)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return 1e3 * statistics.median(times), 1e3 * statistics.median(cpu)


def median_of(runs: list[dict[str, Any]], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--frames", type=int, default=250)
    ap.add_argument(
        "--native-frames",
        type=int,
        default=0,
        help="frames of Blender's Cloth (default: as many as ours, the same stretch of motion)",
    )
    ap.add_argument("--big-frames", type=int, default=60)
    ap.add_argument("--no-native", action="store_true")
    ap.add_argument(
        "--shapes",
        choices=("SURFACE", "ANALYTIC"),
        default="SURFACE",
        help="the ball and floor as their meshes (default) or as a sphere and a plane",
    )
    args = ap.parse_args()
    args.native_frames = args.native_frames or args.frames
    fx.register_physics()

    cloth = [run_xof(100, args.frames, shapes=args.shapes) for _ in range(args.runs)]
    native = (
        [] if args.no_native else [run_native(100, args.native_frames) for _ in range(args.runs)]
    )
    big = (  # --big-frames 0: no 40k run
        [run_xof(200, args.big_frames, shapes=args.shapes) for _ in range(args.runs)]
        if args.big_frames > 0
        else []
    )
    soft = [
        run_xof(100, min(args.frames, 60), kind="SOFT", shapes=args.shapes)
        for _ in range(args.runs)
    ]

    h = median_of(cloth, "handler_ms")
    whole = median_of(cloth, "frame_set_ms")
    print(f"load average: {os.getloadavg()}")
    print(
        f"10k cloth, {args.frames} frames, colliders {args.shapes}, median of {args.runs} runs "
        "(wall / CPU):"
    )
    print(
        f"  xof handler {h:.2f} / {median_of(cloth, 'handler_cpu_ms'):.2f} ms/frame; whole "
        f"frame_set {whole:.2f} / {median_of(cloth, 'frame_set_cpu_ms'):.2f} ms/frame"
    )
    print(f"  cached frames: handler {median_of(cloth, 'cached_ms'):.3f} ms")
    from xof.addon.sim.collide.scan_count import scan_report

    for line in scan_report(cloth[0]["scans"], args.frames).splitlines()[:1]:
        print(f"  {line}")
    print(
        f"  stretch at the last frame: mean {100 * median_of(cloth, 'mean_stretch'):.2f} %, "
        f"p99 {100 * median_of(cloth, 'p99_stretch'):.2f} %; worst over the run: mean "
        f"{100 * median_of(cloth, 'worst_mean'):.2f} %, "
        f"p99 {100 * median_of(cloth, 'worst_p99'):.2f} %"
    )
    print(
        f"  finite: {all(r['finite'] for r in cloth)}; solver warnings: "
        f"{max(r['warnings'] for r in cloth):.0f}"
    )
    if native:
        nat = statistics.median(w for w, _ in native)
        nat_cpu = statistics.median(c for _, c in native)
        cpu_whole = median_of(cloth, "frame_set_cpu_ms")
        print(
            f"  Blender Cloth modifier (quality 5): {nat:.1f} / {nat_cpu:.1f} ms/frame "
            f"({args.native_frames} frames) -> xof frame_set is {nat / whole:.1f}x faster "
            f"by wall time (handler alone {nat / h:.1f}x), {nat_cpu / cpu_whole:.1f}x by CPU"
        )
    if big:
        bh = median_of(big, "frame_set_ms")
        bh_cpu = median_of(big, "frame_set_cpu_ms")
        print(
            f"40k cloth, {args.big_frames} frames (wall / CPU): handler "
            f"{median_of(big, 'handler_ms'):.1f} / {median_of(big, 'handler_cpu_ms'):.1f} ms, "
            f"frame_set {bh:.1f} / {bh_cpu:.1f} ms/frame = {1e3 / bh:.1f} / "
            f"{1e3 / bh_cpu:.1f} frames/s; stretch at the last frame p99 "
            f"{100 * median_of(big, 'p99_stretch'):.2f} %"
        )
    print(
        f"10k soft body (wall / CPU): handler {median_of(soft, 'handler_ms'):.2f} / "
        f"{median_of(soft, 'handler_cpu_ms'):.2f} ms/frame (its own thread's CPU "
        f"{median_of(soft, 'handler_thread_ms'):.2f}: the rest is Blender's threads), frame_set "
        f"{median_of(soft, 'frame_set_ms'):.2f} / "
        f"{median_of(soft, 'frame_set_cpu_ms'):.2f} ms/frame"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
