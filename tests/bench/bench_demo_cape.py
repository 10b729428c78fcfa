"""Demo cape benchmark (a script, not a test; needs bpy): ``make demo``'s cape through the
frame handler, xof vs Blender's Cloth on the same cape in the same run.

    .venv/bin/python tests/bench/bench_demo_cape.py [--frames 42] [--profiled 6]
        [--root CHECKOUT] [--no-blender] [--profile FILE] [--save FILE.npy]

Scene: ``examples/character.x`` imported and dressed as ``examples/demo.py`` does (its own
functions): the walking 2,240-face body as the cape's surface collider (thickness 0.012,
margin 0.008), the 513-point cape with 16 substeps, self-collision on, a breeze. The anchor
is a copy of the cape made before xof plays, with Blender's Cloth (its defaults, pinned by
the imported ``cloth_pin`` group, collision and self-collision on) and the body's Collision
modifier (thickness_outer 0.012).

Per side: median wall and CPU ms of ``frame_set`` over frames 2..N, then the look at the
last frame and over the run: the cape's nearest point to the body (``mathutils`` BVHTree,
signed by the face normal; negative = inside) and the frames with a point inside, crossing
cape triangle pairs (sharing no vertex) and stretch p99 over the cape's edges. For xof, a
further ``--profiled`` frames (after the timed ones, not timed) under cProfile give the
Python-level calls a frame (``--profile`` writes them for ``python -m pstats``). ``--root``
imports xof from another checkout (the scene still comes from this one): the code before a
change, in the same run's conditions. ``--save`` writes xof's last-frame positions.
"""

from __future__ import annotations

import argparse
import cProfile
import importlib.util
import os
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parents[2]


def _args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--frames", type=int, default=42, help="timed frames: 2..N")
    parser.add_argument("--profiled", type=int, default=6, help="frames under cProfile")
    parser.add_argument("--root", type=Path, default=HERE, help="the xof checkout to run")
    parser.add_argument("--no-blender", action="store_true")
    parser.add_argument("--profile", help="write the cProfile of the profiled frames here")
    parser.add_argument("--save", help="write xof's positions at frame N here (.npy)")
    return parser.parse_args()


ARGS = _args() if __name__ == "__main__" else None
_LINK = Path(tempfile.mkdtemp(prefix="xof-bench-"))
(_LINK / "xof").symlink_to((ARGS.root if ARGS else HERE).resolve(), target_is_directory=True)
sys.path.insert(0, str(_LINK))
sys.path.insert(0, str(HERE))

import bpy  # noqa: E402

from tests.bench.body_measures import (  # noqa: E402
    evaluated_triangles,
    mesh_distance,
    world_positions,
)
from tests.sim.meshes import intersecting_pairs  # noqa: E402


def demo_module():
    """``examples/demo.py`` as a module (its import and dressing of the character)."""
    spec = importlib.util.spec_from_file_location("xof_demo", HERE / "examples" / "demo.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cape_edges(cape: bpy.types.Object) -> np.ndarray:
    edges = np.empty(len(cape.data.edges) * 2, dtype=np.int64)
    cape.data.edges.foreach_get("vertices", edges)
    return edges.reshape(-1, 2)


def stretch_p99(pos: np.ndarray, rest: np.ndarray, edges: np.ndarray) -> float:
    length = np.linalg.norm(pos[edges[:, 1]] - pos[edges[:, 0]], axis=1)
    rest_length = np.linalg.norm(rest[edges[:, 1]] - rest[edges[:, 0]], axis=1)
    return float(np.percentile(np.abs(length / rest_length - 1.0), 99))


def play(cape, body, frames: int, profiled: int = 0, profile: str | None = None) -> dict:
    """Frames 1..``frames`` (timed from 2), then ``profiled`` more under cProfile."""
    scene = bpy.context.scene
    scene.frame_set(1)
    rest = world_positions(cape)
    _, tris = evaluated_triangles(cape)
    edges = cape_edges(cape)
    times, cpu, nearest = [], [], []
    pos = rest
    for f in range(2, frames + 1):
        t, c = time.perf_counter(), time.process_time()
        scene.frame_set(f)
        pos = world_positions(cape)  # make sure it is computed
        times.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
        nearest.append(float(mesh_distance(body, pos).min()))
    out = {
        "ms": 1e3 * statistics.median(times),
        "cpu": 1e3 * statistics.median(cpu),
        "nearest": min(nearest),
        "inside_frames": sum(d < 0 for d in nearest),
        "crossing": intersecting_pairs(pos, tris),
        "p99": stretch_p99(pos, rest, edges),
        "pos": pos,
        "calls": None,
    }
    if profiled > 0:
        profiler = cProfile.Profile()
        for f in range(frames + 1, frames + 1 + profiled):
            profiler.enable()
            scene.frame_set(f)
            world_positions(cape)
            profiler.disable()
        stats = pstats.Stats(profiler)
        out["calls"] = stats.total_calls / profiled  # type: ignore[attr-defined]
        if profile:
            stats.dump_stats(profile)
    return out


def summary(name: str, r: dict) -> str:
    calls = "" if r["calls"] is None else f", {r['calls']:,.0f} Python calls a frame"
    return (
        f"{name}: {r['ms']:.1f} ms/frame ({r['cpu']:.1f} CPU){calls}; nearest to the body "
        f"{1e3 * r['nearest']:+.1f} mm, frames with a point inside {r['inside_frames']}; "
        f"crossing cape pairs at the end {r['crossing']}; stretch p99 {100 * r['p99']:.2f}%"
    )


def main() -> None:
    assert ARGS is not None
    args = ARGS
    demo = demo_module()
    bpy.ops.wm.read_homefile(use_empty=True)
    import xof

    xof.register()
    _, body, cape = demo.import_character()
    scene = bpy.context.scene
    last = args.frames + args.profiled
    scene.frame_start, scene.frame_end = 1, last
    demo.dress(body, cape, last)
    print(
        f"xof from {args.root}; cape {len(cape.data.vertices)} points, body "
        f"{len(body.data.polygons)} faces; load average before: {os.getloadavg()}"
    )
    theirs = None
    if not args.no_blender:  # copied before xof plays: the same cape, xof off
        theirs = cape.copy()
        theirs.data = cape.data.copy()
        theirs.name = "CapeBlender"
        theirs.xof_physics.enabled = False
        for collection in cape.users_collection:
            collection.objects.link(theirs)
        theirs.hide_viewport = True
    ours = play(cape, body, args.frames, args.profiled, args.profile)
    print(summary("xof", ours))
    if args.save:
        np.save(args.save, ours["pos"])
    if theirs is None:
        return
    cape.xof_physics.enabled = False
    cape.hide_viewport = True
    theirs.hide_viewport = False
    cloth = theirs.modifiers.new("Cloth", "CLOTH")
    cloth.settings.vertex_group_mass = "cloth_pin"
    cloth.collision_settings.use_collision = True
    cloth.collision_settings.use_self_collision = True
    cloth.point_cache.frame_start, cloth.point_cache.frame_end = 1, last
    collision = body.modifiers.new("Collision", "COLLISION")
    collision.settings.thickness_outer = 0.012
    native = play(theirs, body, args.frames)
    print(summary("Blender Cloth", native))
    print(
        f"ratio Blender / xof: {native['ms'] / ours['ms']:.2f}x wall, "
        f"{native['cpu'] / ours['cpu']:.2f}x CPU; load average after: {os.getloadavg()}"
    )


if __name__ == "__main__":
    main()
