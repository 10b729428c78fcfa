"""`make bench`: every benchmark, one after the other, each side by side with its anchor.

Not a test: timings depend on the machine and its load. Each script prints its own table
(medians of ``--runs`` runs); this runner only sequences them and says how long each took.
``python tests/bench/run.py --runs 3 --only read,import`` narrows a run.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: name -> (script, extra arguments); anchors: Assimp (read, skinned), Blender's OBJ importer
#: and exporter (import, export), Blender's Cloth modifier (solver, cloth handler), np.fromstring
BENCHES: dict[str, tuple[str, list[str]]] = {
    "numbers": ("bench_numbers.py", []),
    "read": ("bench_read.py", []),
    "import": ("bench_import.py", []),
    "export": ("bench_export.py", []),
    "skinned": ("bench_skinned.py", []),
    "solver": ("bench_solver.py", []),
    "cloth": ("bench_cloth_handler.py", []),
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5, help="runs per measurement (median)")
    ap.add_argument("--only", default="", help="comma-separated names: " + ",".join(BENCHES))
    args = ap.parse_args()
    names = [n for n in args.only.split(",") if n] or list(BENCHES)
    unknown = [n for n in names if n not in BENCHES]
    if unknown:
        ap.error(f"unknown benchmark(s): {', '.join(unknown)}")
    failed = []
    for name in names:
        script, extra = BENCHES[name]
        cmd = [sys.executable, str(HERE / script), "--runs", str(args.runs), *extra]
        print(f"\n=== {name}: {' '.join(cmd[1:])}", flush=True)
        started = time.perf_counter()
        if subprocess.call(cmd) != 0:
            failed.append(name)
        print(f"=== {name}: {time.perf_counter() - started:.0f} s", flush=True)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
