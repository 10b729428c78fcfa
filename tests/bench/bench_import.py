"""Import speed on the 1M-vertex grid: our .X importer next to Blender's OBJ and glTF importers.

    .venv/bin/python tests/bench/make_grid.py          # once: writes tests/bench/data/
    .venv/bin/python tests/bench/bench_import.py [--runs 3] [--n 1000] [--skip-text]
    .venv/bin/python tests/bench/bench_import.py --ab /tmp/base [--runs 3]
    .venv/bin/python tests/bench/bench_import.py --normals [--runs 3] [--n 501]

Every importer runs ``--runs`` times in this one process on the same geometry, from an empty
scene; the table shows medians and the ratio to the OBJ importer (targets: text .X <= 1.0x,
binary .X <= 0.6x). For .X the median split read / views / build is shown too.

``--ab BASE`` times another checkout's code (e.g. ``git worktree add /tmp/base main``) beside
this one: ``--runs`` rounds, each one fresh process per side (sides alternating, the order
swapped every round) importing OBJ, then the text, binary and MSZIP .X files once each, from
this checkout's data folder; medians of wall and CPU seconds, and each side's ratio to the OBJ
import of its own process. ``--normals`` times storing the grid's normals alone (``--n 501``:
1M corners), Blender's ``normals_split_custom_set`` (per corner) and ``..._from_vertices``
against the import's ``normals.set_custom_normals``: the file's normals per vertex, the same
per corner, and per corner leaning towards each face (different at each corner of a vertex);
and Blender's own smooth normals per vertex.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent.parent
DATA = ROOT / "tests" / "bench" / "data"


def _enable_xof(root: Path = ROOT) -> None:
    """Enable the add-on as package ``xof`` (a symlink to ``root`` on sys.path)."""
    import addon_utils

    link_dir = Path(tempfile.mkdtemp(prefix="xof-bench-"))
    (link_dir / "xof").symlink_to(root, target_is_directory=True)
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
    from xof.addon.xfile import read, scene_of

    parts: list[tuple[float, float, float]] = []
    for _ in range(runs):
        bpy.ops.wm.read_homefile(use_empty=True)
        t0 = time.perf_counter()
        doc = read(str(path))
        t1 = time.perf_counter()
        scene = scene_of(doc)
        t2 = time.perf_counter()
        build_scene(scene, filepath=str(path))
        t3 = time.perf_counter()
        parts.append((t1 - t0, t2 - t1, t3 - t2))
        del doc, scene
    bpy.ops.wm.read_homefile(use_empty=True)
    return tuple(statistics.median(p[i] for p in parts) for i in range(3))  # type: ignore[return-value]


AB_FILES = {"obj": "obj", "x_txt": "txt.x", "x_bin": "bin.x", "x_bzip": "bzip.x"}


def _ab_round(root: Path, n: int) -> int:
    """One fresh process's imports (``--ab-child``): prints a JSON line of wall/CPU seconds."""
    import json

    import bpy

    _enable_xof(root)
    out: dict[str, tuple[float, float]] = {}
    for name, ext in AB_FILES.items():
        path = str(DATA / f"grid_{n}.{ext}")
        bpy.ops.wm.read_homefile(use_empty=True)
        wall, cpu = time.perf_counter(), time.process_time()
        if name == "obj":
            bpy.ops.wm.obj_import(filepath=path)
        else:
            bpy.ops.import_scene.x(filepath=path)
        out[name] = (time.perf_counter() - wall, time.process_time() - cpu)
    print("AB " + json.dumps(out), flush=True)
    return 0


def _ab(base: Path, runs: int, n: int) -> int:
    """Rounds of one fresh process per side, alternating; medians and ratios to OBJ."""
    import json
    import os
    import subprocess

    sides = {"base": base.resolve(), "branch": ROOT}
    results: dict[str, list[dict[str, list[float]]]] = {k: [] for k in sides}
    for r in range(runs):
        order = list(sides) if r % 2 == 0 else list(sides)[::-1]
        for side in order:
            cmd = [sys.executable, __file__, "--ab-child", str(sides[side]), "--n", str(n)]
            proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
            line = next(x for x in proc.stdout.splitlines() if x.startswith("AB "))
            results[side].append(json.loads(line[3:]))
            print(f"round {r + 1} {side:6s} {line[3:]}", flush=True)
    load = os.getloadavg()
    print(f"\n{n * n}-vertex grid, medians of {runs} fresh processes per side, load {load}")
    head = ("file", "side", "wall s", "CPU s", "x OBJ wall", "x OBJ CPU")
    print("{:7s} {:6s} {:>7s} {:>6s} {:>10s} {:>9s}".format(*head))
    for name in AB_FILES:
        for side in sides:
            rows = results[side]
            wall = statistics.median(row[name][0] for row in rows)
            cpu = statistics.median(row[name][1] for row in rows)
            rw = statistics.median(row[name][0] / row["obj"][0] for row in rows)
            rc = statistics.median(row[name][1] / row["obj"][1] for row in rows)
            print(f"{name:7s} {side:6s} {wall:7.2f} {cpu:6.2f} {rw:10.2f} {rc:9.2f}")
    return 0


def _normals(runs: int, n: int) -> int:
    """Storing the grid's normals alone: Blender's calls against ``set_custom_normals``."""
    import bpy

    sys.path.insert(0, str(ROOT / "tests" / "bench"))
    from make_grid import make_grid

    _enable_xof()
    from xof.addon.scene.imp.normals import set_custom_normals

    g = make_grid(n)
    mirror = np.array([1.0, 1.0, -1.0])  # D3D -> right-handed, winding reversed like the import
    positions, normals = g.positions * mirror, (g.normals * mirror).astype(np.float32)
    quads = np.ascontiguousarray(g.quads[:, ::-1], dtype=np.int32)

    def fresh() -> bpy.types.Mesh:
        mesh = bpy.data.meshes.new("grid")
        mesh.vertices.add(len(positions))
        mesh.loops.add(quads.size)
        mesh.polygons.add(len(quads))
        mesh.vertices.foreach_set("co", positions.astype(np.float32).ravel())
        mesh.loops.foreach_set("vertex_index", quads.ravel())
        mesh.polygons.foreach_set("loop_start", np.arange(0, quads.size, 4, dtype=np.int32))
        mesh.update(calc_edges=True)
        mesh.shade_smooth()
        return mesh

    per_corner = np.ascontiguousarray(normals[quads.ravel()])
    # per corner and different at each corner of a vertex: leaning 10 % towards its face's centre
    centres = positions[quads].mean(axis=1)
    lean = np.repeat(centres, 4, axis=0) - positions[quads.ravel()]
    split = per_corner + 0.1 * lean / np.linalg.norm(lean, axis=1, keepdims=True)
    split = np.ascontiguousarray(split / np.linalg.norm(split, axis=1, keepdims=True), np.float32)
    probe = fresh()
    own = np.empty(len(positions) * 3, dtype=np.float32)
    probe.vertex_normals.foreach_get("vector", own)  # Blender's smooth normals: stored as zeros
    own = own.reshape(-1, 3)
    bpy.data.meshes.remove(probe)
    cases: dict[str, Callable[[bpy.types.Mesh], object]] = {
        "call, Blender's own, from vertices": lambda m: m.normals_split_custom_set_from_vertices(
            own
        ),
        "set_custom_normals, Blender's own": lambda m: set_custom_normals(
            m, own.copy(), None, "POINT"
        ),
        "call, per corner": lambda m: m.normals_split_custom_set(split),
        "set_custom_normals, per corner": lambda m: set_custom_normals(
            m, split.copy(), None, "CORNER"
        ),
        "call, per corner, same per vertex": lambda m: m.normals_split_custom_set(per_corner),
        "set_custom_normals, same per vertex": lambda m: set_custom_normals(
            m, per_corner.copy(), None, "CORNER"
        ),
        "call, from vertices": lambda m: m.normals_split_custom_set_from_vertices(normals),
        "set_custom_normals, per vertex": lambda m: set_custom_normals(
            m, normals.copy(), None, "POINT"
        ),
    }
    times: dict[str, list[tuple[float, float]]] = {k: [] for k in cases}
    for _ in range(runs):
        for name, action in cases.items():
            mesh = fresh()
            wall, cpu = time.perf_counter(), time.process_time()
            action(mesh)
            times[name].append((time.perf_counter() - wall, time.process_time() - cpu))
            bpy.data.meshes.remove(mesh)
    import os

    print(
        f"\n{len(positions)} vertices, {quads.size} corners, medians of {runs}, "
        f"bpy {bpy.app.version_string}, load {os.getloadavg()}"
    )
    for name, rows in times.items():
        wall = statistics.median(t[0] for t in rows)
        cpu = statistics.median(t[1] for t in rows)
        print(f"{name:36s} wall {wall:6.3f} s  CPU {cpu:6.3f} s")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--n", type=int, default=None, help="grid side (1000; --normals: 501)")
    parser.add_argument("--skip-text", action="store_true", help="skip the text .X file")
    parser.add_argument("--ab", type=Path, help="another checkout to time beside this one")
    parser.add_argument("--ab-child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--normals", action="store_true", help="time storing normals alone")
    args = parser.parse_args()
    if args.normals:
        return _normals(args.runs, args.n or 501)
    args.n = args.n or 1000
    if args.ab_child:
        return _ab_round(args.ab_child, args.n)
    if args.ab:
        return _ab(args.ab, args.runs, args.n)

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
