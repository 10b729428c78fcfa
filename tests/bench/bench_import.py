"""Import speed on the 1M-vertex grid: our .X importer next to Blender's OBJ and glTF importers.

    .venv/bin/python tests/bench/make_grid.py          # once: writes tests/bench/data/
    .venv/bin/python tests/bench/bench_import.py [--runs 3] [--n 1000] [--skip-text]

Every importer runs ``--runs`` times in this one process on the same geometry, from an empty
scene; the table shows medians and the ratio to the OBJ importer (targets: text .X <= 1.0x,
binary .X <= 0.6x). For .X the median split read / views / build is shown too.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
DATA = ROOT / "tests" / "bench" / "data"


def _enable_xof() -> None:
    """Enable the add-on as package ``xof`` (a symlink to the repository on sys.path)."""
    import addon_utils

    link_dir = Path(tempfile.mkdtemp(prefix="xof-bench-"))
    (link_dir / "xof").symlink_to(ROOT, target_is_directory=True)
    sys.path.insert(0, str(link_dir))
    addon_utils.enable("xof", default_set=True)
    addon_utils.enable("io_scene_gltf2", default_set=True)


def _timed(action: Callable[[], object], runs: int) -> list[float]:
    import bpy

    times = []
    for _ in range(runs):
        bpy.ops.wm.read_homefile(use_empty=True)
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    bpy.ops.wm.read_homefile(use_empty=True)
    return times


def _x_split(path: Path, runs: int) -> tuple[float, float, float]:
    """Median seconds of read, views and build for one .X file."""
    import bpy
    from xof.addon.scene.importer import build_scene
    from xof.addon.xfile import read
    from xof.addon.xfile.views import scene_data

    parts: list[tuple[float, float, float]] = []
    for _ in range(runs):
        bpy.ops.wm.read_homefile(use_empty=True)
        t0 = time.perf_counter()
        doc = read(str(path))
        t1 = time.perf_counter()
        scene = scene_data(doc)
        t2 = time.perf_counter()
        build_scene(scene, filepath=str(path))
        t3 = time.perf_counter()
        parts.append((t1 - t0, t2 - t1, t3 - t2))
        del doc, scene
    bpy.ops.wm.read_homefile(use_empty=True)
    return tuple(statistics.median(p[i] for p in parts) for i in range(3))  # type: ignore[return-value]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--skip-text", action="store_true", help="skip the text .X file")
    args = parser.parse_args()

    import bpy

    _enable_xof()
    n = args.n
    files = {
        "obj": DATA / f"grid_{n}.obj",
        "gltf": DATA / f"grid_{n}.glb",
        "x_bin": DATA / f"grid_{n}.bin.x",
        "x_bzip": DATA / f"grid_{n}.bzip.x",
        "x_txt": DATA / f"grid_{n}.txt.x",
    }
    missing = [str(p) for p in files.values() if not p.exists()]
    if missing:
        print("missing inputs (run tests/bench/make_grid.py):", *missing, sep="\n  ")
        return 2
    importers: dict[str, Callable[[], object]] = {
        "obj": lambda: bpy.ops.wm.obj_import(filepath=str(files["obj"])),
        "gltf": lambda: bpy.ops.import_scene.gltf(filepath=str(files["gltf"])),
        "x_bin": lambda: bpy.ops.import_scene.x(filepath=str(files["x_bin"])),
        "x_bzip": lambda: bpy.ops.import_scene.x(filepath=str(files["x_bzip"])),
        "x_txt": lambda: bpy.ops.import_scene.x(filepath=str(files["x_txt"])),
    }
    if args.skip_text:
        del importers["x_txt"]
    medians: dict[str, float] = {}
    for name, action in importers.items():
        times = _timed(action, args.runs)
        medians[name] = statistics.median(times)
        print(f"{name:7s} runs {[round(t, 2) for t in times]}", flush=True)
    obj = medians["obj"]
    print(f"\n1M-vertex grid (n={n}), medians of {args.runs} runs, bpy {bpy.app.version_string}")
    print(f"{'importer':8s} {'seconds':>8s} {'x OBJ':>7s}")
    for name, seconds in medians.items():
        print(f"{name:8s} {seconds:8.2f} {seconds / obj:7.2f}")
    for name in ("x_bin", "x_bzip", "x_txt"):
        if name in importers:
            read_s, views_s, build_s = _x_split(files[name], max(1, args.runs // 2))
            print(f"{name}: read {read_s:.2f} s, views {views_s:.2f} s, build {build_s:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
