"""Warm imports of the generated character in one process: the whole import, its read
(file to document), its weights (``write_vertex_groups``) and its animation step
(``build_actions``), wall and CPU seconds, medians after one warm-up import.

    .venv/bin/python tests/bench/bench_import_warm.py [--runs 3] [--root CHECKOUT]

Files: ``tests/bench/data/skinned_character.x`` (written by ``bench_skinned.py``) and its
binary form ``skinned_character.bin.x`` (written by ``bench_gltf_anchor.py``), read from this
checkout's data folder. ``--root`` times another checkout's code (e.g. a worktree of main)
on the same files, for a before/after side by side. CPU seconds are the steadier figure on
a loaded machine.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
FILES = ["skinned_character.x", "skinned_character.bin.x"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[2])
    args = parser.parse_args()
    link = Path(tempfile.mkdtemp(prefix="xof-bench-"))
    (link / "xof").symlink_to(args.root.resolve(), target_is_directory=True)
    sys.path.insert(0, str(link))
    import bpy
    from xof.addon.scene import importer
    from xof.addon.scene.anim import step
    from xof.addon.scene.rig import skinning

    parts = {"read": (importer, "read"), "weights": (skinning, "write_vertex_groups"),
             "animation": (step, "build_actions")}  # fmt: skip
    spent: dict[str, list[tuple[float, float]]] = {name: [] for name in parts}

    def timer(name: str, fn):  # type: ignore[no-untyped-def]
        def timed(*a, **k):  # type: ignore[no-untyped-def]
            wall, cpu = time.perf_counter(), time.process_time()
            out = fn(*a, **k)
            spent[name].append((time.perf_counter() - wall, time.process_time() - cpu))
            return out

        return timed

    for name, (module, attr) in parts.items():
        setattr(module, attr, timer(name, getattr(module, attr)))
    print(f"{'file':24} {'import wall':>11} {'cpu':>6}"
          + "".join(f" {n + ' wall':>14} {'cpu':>6}" for n in parts))  # fmt: skip
    for name in FILES:
        path = DATA / name
        if not path.exists():
            print(f"{name}: missing (run bench_skinned.py / bench_gltf_anchor.py first)")
            continue
        for values in spent.values():
            values.clear()
        whole: list[tuple[float, float]] = []
        for _ in range(args.runs + 1):
            bpy.ops.wm.read_homefile(use_empty=True)
            wall, cpu = time.perf_counter(), time.process_time()
            importer.import_files([path], importer.ImportOptions())
            whole.append((time.perf_counter() - wall, time.process_time() - cpu))

        def med(values: list[tuple[float, float]], i: int) -> float:
            return statistics.median(v[i] for v in values[1:])

        line = f"{name:24} {med(whole, 0):11.3f} {med(whole, 1):6.3f}"
        for values in spent.values():
            line += f" {med(values, 0):14.3f} {med(values, 1):6.3f}"
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
