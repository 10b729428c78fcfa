"""Export speed: the 1M-vertex grid written as text, binary and compressed .X against Blender's
own C++ OBJ exporter on the same mesh, side by side in one process, medians of several runs.

    .venv/bin/python tests/bench/make_grid.py        # once: tests/bench/data/grid_1000.*
    .venv/bin/python tests/bench/bench_export.py --runs 5
    .venv/bin/python tests/bench/bench_export.py --runs 5 --before 6f4ca9a  # old writer too
    .venv/bin/python tests/bench/bench_export.py --runs 7 --each  # every run's seconds too

The grid is imported once (from its binary .X); each round then runs every exporter once, in
turn (starting one further along each round), so machine load falls on all of them alike.
Both sides write normals and UVs. Wall medians, the fastest run, and median CPU seconds of the
process (all threads: OBJ's too).
Targets (issue 17): text <= 1.3x and binary <= 0.3x the OBJ exporter.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parent / "data"


def _package(before: str | None) -> None:
    """Make the repository importable as ``xof`` (what Blender calls the extension here), and
    the tree of commit ``before`` (extracted with ``git archive``) as ``xof_before``."""
    link_dir = Path(tempfile.mkdtemp(prefix="xof-bench-"))
    (link_dir / "xof").symlink_to(ROOT, target_is_directory=True)
    if before:
        old = link_dir / "xof_before"
        old.mkdir()
        tree = subprocess.run(
            ["git", "-C", str(ROOT), "archive", before, "addon", "operators", "__init__.py"],
            check=True,
            capture_output=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(old)], input=tree, check=True)
    sys.path.insert(0, str(link_dir))


def _corner_values(path: Path) -> dict[str, object]:
    """What a reader builds from a written file, per corner: face sizes, then each corner's
    position, normal and UVs as float32 bits (what any reader of the file gets back)."""
    import numpy as np
    from xof.addon.xfile import read
    from xof.addon.xfile.views.mesh import mesh_data

    doc = read(path)
    found = [o for o in doc.objects if o.template == "Mesh"]
    mesh = mesh_data(found[0], {})
    corners = mesh.corners

    def bits(a: np.ndarray) -> np.ndarray:
        return np.asarray(a, dtype=np.float32).view(np.uint32)

    out: dict[str, object] = {"sizes": mesh.face_sizes, "positions": bits(mesh.positions[corners])}
    if mesh.normals is not None and mesh.normal_corners is not None:
        out["normals"] = bits(mesh.normals[mesh.normal_corners])
    for i, uv in enumerate(mesh.uv_sets):
        out[f"uv{i}"] = bits(uv[corners])
    return out


def same_values(a: Path, b: Path) -> list[str]:
    """The per-corner values of two files that differ (empty: they read back the same)."""
    import numpy as np

    x, y = _corner_values(a), _corner_values(b)
    names = sorted(set(x) | set(y))
    return [k for k in names if k not in x or k not in y or not np.array_equal(x[k], y[k])]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000, help="grid size (make_grid.py --n)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None, help="folder for the written files")
    parser.add_argument("--before", default=None, help="also time the exporter of this commit")
    parser.add_argument("--each", action="store_true", help="print every run's seconds too")
    args = parser.parse_args()
    source = DATA / f"grid_{args.n}.bin.x"
    if not source.is_file():
        print(f"{source} is missing: run tests/bench/make_grid.py --n {args.n}", file=sys.stderr)
        return 1
    _package(args.before)
    import bpy
    from xof.addon.scene.export.exporter import export_scene
    from xof.addon.scene.export.plan.options import ExportOptions
    from xof.addon.scene.importer import import_files

    bpy.ops.wm.read_homefile(use_empty=True)
    import_files([source])
    obj = next(o for o in bpy.context.scene.objects if o.type == "MESH")
    vertices = len(obj.data.vertices)
    out = args.out or Path(tempfile.mkdtemp(prefix="xof-bench-out-"))
    out.mkdir(parents=True, exist_ok=True)

    def x_export(fmt: str) -> Callable[[], object]:
        return lambda: export_scene(str(out / f"grid.{fmt}.x"), ExportOptions(format=fmt))

    exporters: dict[str, Callable[[], object]] = {
        "obj": lambda: bpy.ops.wm.obj_export(
            filepath=str(out / "grid.obj"),
            export_normals=True,
            export_uv=True,
            export_materials=False,
            export_selected_objects=False,
        ),
        "x txt": x_export("txt"),
        "x bin": x_export("bin"),
        "x bzip": x_export("bzip"),
    }
    if args.before:
        from xof_before.addon.scene.export.exporter import export_scene as old_export
        from xof_before.addon.scene.export.plan.options import ExportOptions as OldOptions

        for fmt in ("txt", "bin", "bzip"):
            exporters[f"old {fmt}"] = lambda f=fmt: old_export(  # type: ignore[misc]
                str(out / f"grid.old.{f}.x"), OldOptions(format=f)
            )
    times: dict[str, list[float]] = {name: [] for name in exporters}
    cpu: dict[str, list[float]] = {name: [] for name in exporters}
    load_before = os.getloadavg()[0]
    names = list(exporters)
    for round_ in range(args.runs):
        # a different exporter goes first each round: the one after OBJ's 137 MB write
        # meets its dirty pages, and that should not always be the same one
        for name in names[round_ % len(names) :] + names[: round_ % len(names)]:
            run = exporters[name]
            start, start_cpu = time.perf_counter(), time.process_time()
            run()
            times[name].append(time.perf_counter() - start)
            cpu[name].append(time.process_time() - start_cpu)  # every thread of the process
    medians = {name: statistics.median(t) for name, t in times.items()}
    base = medians["obj"]
    print(
        f"\n{vertices:,}-vertex grid (n={args.n}), medians of {args.runs} runs, "
        f"bpy {bpy.app.version_string}, {os.cpu_count()} cores, "
        f"load average {load_before:.2f} before, {os.getloadavg()[0]:.2f} after"
    )
    print(f"{'exporter':8s} {'seconds':>8s} {'x OBJ':>7s} {'min':>6s} {'CPU s':>6s} {'MB':>8s}")
    sizes = {"obj": "grid.obj"} | {f"x {f}": f"grid.{f}.x" for f in ("txt", "bin", "bzip")}
    sizes |= {f"old {f}": f"grid.old.{f}.x" for f in ("txt", "bin", "bzip")}
    for name, seconds in medians.items():
        size = (out / sizes[name]).stat().st_size / 1e6
        fastest, used = min(times[name]), statistics.median(cpu[name])
        ratio = seconds / base
        print(f"{name:8s} {seconds:8.2f} {ratio:7.2f} {fastest:6.2f} {used:6.2f} {size:8.1f}")
    if args.each:  # wall / CPU of every run, in run order
        for name in medians:
            runs = " ".join(f"{w:.3f}/{c:.3f}" for w, c in zip(times[name], cpu[name], strict=True))
            print(f"{name:8s} {runs}")
    if args.before:  # the point of a faster writer is the same file
        for f in ("txt", "bin", "bzip"):
            new, old = out / f"grid.{f}.x", out / f"grid.old.{f}.x"
            if filecmp.cmp(new, old, shallow=False):
                print(f"{f}: identical to {args.before}'s file")
                continue
            # other bytes (a smaller normal table): every value must read back the same
            differ = same_values(new, old)
            verdict = f"values DIFFER: {', '.join(differ)}" if differ else "every value the same"
            print(f"{f}: other bytes than {args.before}'s file; read back per corner: {verdict}")
    text, binary = medians["x txt"] / base, medians["x bin"] / base
    print(f"targets: text {text:.2f}x <= 1.3x, binary {binary:.2f}x <= 0.3x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
