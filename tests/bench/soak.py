"""Soak: many cycles of import -> play -> bake -> export -> free -> delete in one Blender.

    .venv/bin/python tests/bench/soak.py --cycles 1000 --frames 20 [--file examples/flag.x]

Not a CI test (it takes minutes). Each cycle imports the file, plays ``--frames`` frames
through the frame handler, bakes, exports to a temporary .x, frees the bake, deletes what the
import made and purges orphans. Reported: datablocks left after each cycle that were not there
before it (any is a leak), and the process's resident memory after the first tenth of the
cycles and at the end (goal: flat within 10 %).
"""

from __future__ import annotations

import argparse
import importlib
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def rss_mb() -> float:
    """The current resident set size (Linux /proc), in MB."""
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * resource.getpagesize() / 1e6


def enable() -> object:
    link = Path(tempfile.mkdtemp(prefix="xof-soak-"))
    (link / "xof").symlink_to(ROOT, target_is_directory=True)
    sys.path.insert(0, str(link))
    import bpy

    importlib.import_module("addon_utils").enable("xof", default_set=True)
    return bpy


def ids(bpy) -> set[tuple[str, str]]:
    out = set()
    for attr in dir(bpy.data):
        value = getattr(bpy.data, attr, None)
        if isinstance(value, bpy.types.bpy_prop_collection) and attr not in (
            "window_managers",
            "screens",
            "workspaces",
        ):
            out.update((attr, item.name) for item in value)
    return out


def cycle(bpy, path: Path, frames: int, out: Path) -> None:
    scene = bpy.context.scene
    bpy.ops.import_scene.x(filepath=str(path))
    made = list(bpy.context.selected_objects)
    meshes = [o for o in bpy.data.objects if o.type == "MESH"]
    cloth = next((o for o in meshes if getattr(o, "xof_physics", None) is not None
                  and o.xof_physics.enabled), None)  # fmt: skip
    if cloth is not None:  # the bake covers the frames played
        cloth.xof_physics.frame_end = cloth.xof_physics.frame_start + frames - 1
    for frame in range(scene.frame_start, scene.frame_start + frames):
        scene.frame_set(frame)
    if cloth is not None:
        bpy.context.view_layer.objects.active = cloth
        bpy.ops.xof.sim_bake()
    bpy.ops.export_scene.x(filepath=str(out))
    if cloth is not None:
        bpy.context.view_layer.objects.active = cloth
        bpy.ops.xof.sim_free_bake()
    scene.frame_set(scene.frame_start)
    for obj in list(bpy.data.objects):
        if obj in made or obj in meshes or obj.type in ("ARMATURE", "EMPTY"):
            bpy.data.objects.remove(obj)
    bpy.data.orphans_purge(do_recursive=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=1000)
    parser.add_argument("--frames", type=int, default=20)
    parser.add_argument("--file", type=Path, default=ROOT / "examples" / "flag.x")
    parser.add_argument("--report", type=Path, default=None)
    args = parser.parse_args(argv)
    bpy = enable()
    bpy.ops.wm.read_homefile(use_empty=True)
    out = Path(tempfile.mkdtemp(prefix="xof-soak-out-")) / "out.x"
    baseline = ids(bpy)
    leaked: dict[str, int] = {}
    memory: list[float] = []
    start = time.perf_counter()
    for k in range(args.cycles):
        cycle(bpy, args.file, args.frames, out)
        for kind, name in ids(bpy) - baseline:
            leaked[f"{kind}:{name}"] = leaked.get(f"{kind}:{name}", 0) + 1
        memory.append(rss_mb())
        if (k + 1) % max(1, args.cycles // 20) == 0:
            print(f"cycle {k + 1}: {memory[-1]:.0f} MB, leaked {len(leaked)}", flush=True)
    tenth = memory[max(0, args.cycles // 10 - 1)]
    report = {
        "file": str(args.file), "cycles": args.cycles, "frames": args.frames,
        "seconds": round(time.perf_counter() - start, 1),
        "rss_mb_after_first_tenth": round(tenth, 1), "rss_mb_at_end": round(memory[-1], 1),
        "growth": round(memory[-1] / tenth - 1.0, 3), "leaked": leaked,
    }  # fmt: skip
    text = json.dumps(report, indent=1)
    if args.report:
        args.report.write_text(text)
    print(text)
    return 0 if not leaked and report["growth"] <= 0.10 else 1


if __name__ == "__main__":
    sys.exit(main())
