"""Reader speed and memory on the 1M-vertex grid, side by side with Assimp's raw parse.

    .venv/bin/python tests/bench/make_grid.py           # once: writes tests/bench/data/
    .venv/bin/python tests/bench/bench_read.py [--runs 5] [--n 1000] [--formats txt,bin,bzip]
    .venv/bin/python tests/bench/bench_read.py --json   # the figures as one JSON object

Each run starts a fresh process for ``addon.xfile.read`` and one for ``assimp info FILE -r``,
alternating, so both pay process start and file loading and are measured alike: wall time
around the process, CPU time (user + system) from ``os.wait4`` (the child's own rusage, what
``RUSAGE_CHILDREN`` adds up). The machine is shared and loaded, so CPU time is the steadier
figure; medians of ``--runs`` runs. Our process also reports the time of ``read()`` alone
(beside Assimp's own "import took" figure), its max RSS growth during ``read()`` and, in one
extra run with tracemalloc on (it slows allocation, so that run is not timed), the traced
peak; both against the bytes of the numpy arrays the document holds.

Our process runs with ``OPENBLAS_NUM_THREADS=1``: numpy's OpenBLAS otherwise starts a worker
thread at import that spins ~0.05 s on the other core (measured: CPU above wall time), work
the reader never asks for and that Blender, which imported numpy long before, never sees.
``--blas-threads`` keeps numpy's default. Its bytecode is cached (in a temporary folder, even
where ``PYTHONDONTWRITEBYTECODE`` is set), as in an installed add-on, and one untimed run of
each reader per file comes first.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "bench" / "data"
ASSIMP = "/usr/bin/assimp"
TARGETS = {"txt": 1.0, "bin": 0.5, "bzip": None}  # at most this x Assimp's time
MEMORY_TARGET = 3.0  # peak at most this x the document's arrays
BLAS_THREADS = False  # --blas-threads: leave numpy's OpenBLAS threads on in our process
PYCACHE = Path(tempfile.gettempdir()) / "xof-bench-pycache"  # bytecode of our process
_ASSIMP_TOOK = re.compile(rb"import took approx\. ([0-9.]+) seconds")


# -- the worker: one read in a fresh process -------------------------------------------------
def array_bytes(value: Any, seen: set[int] | None = None) -> int:
    """Bytes of every numpy array reachable from a document, each array counted once."""
    import numpy as np

    from addon.xfile.document import Ragged, XDocument, XObject

    seen = set() if seen is None else seen
    if id(value) in seen:
        return 0
    seen.add(id(value))
    if isinstance(value, np.ndarray):
        return int(value.nbytes)
    if isinstance(value, XDocument):
        return sum(array_bytes(o, seen) for o in value.objects)
    if isinstance(value, XObject):
        return array_bytes(value.members, seen) + sum(array_bytes(c, seen) for c in value.children)
    if isinstance(value, Ragged):
        return array_bytes(value.flat, seen) + array_bytes(value.starts, seen)
    if isinstance(value, dict):
        return sum(array_bytes(v, seen) for v in value.values())
    if isinstance(value, (list, tuple)):
        return sum(array_bytes(v, seen) for v in value)
    return 0


def worker(path: str, trace: bool) -> None:
    """Read ``path`` once; print JSON: read() wall/CPU, RSS growth (KiB), arrays, peak."""
    sys.path.insert(0, str(ROOT))
    import tracemalloc

    from addon.xfile import read

    if trace:
        tracemalloc.start()
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    wall0, cpu0 = time.perf_counter(), time.process_time()
    doc = read(path)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    peak = tracemalloc.get_traced_memory()[1] if trace else 0
    tracemalloc.stop()
    out = {
        "read_wall": wall,
        "read_cpu": cpu,
        "rss_delta": (rss_after - rss_before) * 1024,
        "traced_peak": peak,
        "arrays": array_bytes(doc),
    }
    print(json.dumps(out))


# -- the driver ---------------------------------------------------------------------------
def run_process(
    cmd: list[str], env: dict[str, str] | None = None
) -> tuple[float, float, int, bytes]:
    """Run ``cmd``: (wall seconds, CPU seconds, max RSS bytes, stdout); its system time too."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=ROOT, env=env
    )
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{cmd!r} failed with exit code {proc.returncode}")
    _SYSTEM_TIMES.append(usage.ru_stime)
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024, out


_SYSTEM_TIMES: list[float] = []  # of every process run, in order (the loaded kernel's share)


def ours(path: Path, trace: bool = False) -> tuple[float, float, int, dict[str, Any]]:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", str(path)]
    if trace:
        cmd.append("--trace")
    env = {**os.environ, "PYTHONPYCACHEPREFIX": str(PYCACHE)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if not BLAS_THREADS:
        env["OPENBLAS_NUM_THREADS"] = "1"
    wall, cpu, rss, out = run_process(cmd, env)
    return wall, cpu, rss, json.loads(out.splitlines()[-1])


def assimp(path: Path) -> tuple[float, float, int, float]:
    wall, cpu, rss, out = run_process([ASSIMP, "info", str(path), "-r"])
    m = _ASSIMP_TOOK.search(out)
    return wall, cpu, rss, float(m.group(1)) if m else float("nan")


def median(values: list[float]) -> float:
    return statistics.median(values)


def measure(path: Path, runs: int) -> dict[str, Any]:
    """Alternating runs of ours and Assimp on one file; medians and ratios."""
    o_wall, o_cpu, o_rss, r_wall, r_cpu, r_rss = [], [], [], [], [], []
    a_wall, a_cpu, a_rss, a_took = [], [], [], []
    o_sys: list[float] = []
    a_sys: list[float] = []
    arrays = 0
    ours(path)  # untimed: bytecode cached, file in the page cache
    assimp(path)
    for i in range(runs):
        order = (0, 1) if i % 2 == 0 else (1, 0)
        for who in order:
            if who == 0:
                wall, cpu, rss, inner = ours(path)
                o_sys.append(_SYSTEM_TIMES[-1])
                o_wall.append(wall)
                o_cpu.append(cpu)
                o_rss.append(rss)
                r_wall.append(inner["read_wall"])
                r_cpu.append(inner["read_cpu"])
                r_rss.append(inner["rss_delta"])
                arrays = inner["arrays"]
            else:
                wall, cpu, rss, took = assimp(path)
                a_sys.append(_SYSTEM_TIMES[-1])
                a_wall.append(wall)
                a_cpu.append(cpu)
                a_rss.append(rss)
                a_took.append(took)
    traced = ours(path, trace=True)[3]["traced_peak"]
    res = {
        "file": path.name,
        "mb": path.stat().st_size / 1e6,
        "runs": runs,
        "ours_wall": median(o_wall),
        "ours_cpu": median(o_cpu),
        "ours_sys": median(o_sys),
        "ours_rss": median(o_rss),
        "read_wall": median(r_wall),
        "read_cpu": median(r_cpu),
        "assimp_wall": median(a_wall),
        "assimp_cpu": median(a_cpu),
        "assimp_sys": median(a_sys),
        "assimp_rss": median(a_rss),
        "assimp_took": median(a_took),
        "arrays": arrays,
        "rss_delta": median(r_rss),
        "traced_peak": traced,
    }
    res["wall_ratio"] = res["ours_wall"] / res["assimp_wall"]
    res["cpu_ratio"] = res["ours_cpu"] / res["assimp_cpu"]
    res["read_ratio"] = res["read_wall"] / res["assimp_took"]
    res["rss_ratio"] = res["rss_delta"] / arrays if arrays else float("nan")
    res["traced_ratio"] = traced / arrays if arrays else float("nan")
    return res


def table(results: dict[str, dict[str, Any]], load: tuple[float, float, float]) -> str:
    head = (
        f"{'file':<5} {'MB':>6} | {'ours wall':>9} {'assimp':>7} {'ratio':>6} | "
        f"{'ours CPU':>8} {'assimp':>7} {'ratio':>6} | {'read()':>6} {'took':>6} {'ratio':>6} | "
        f"{'arrays':>7} {'RSS+':>7} {'x':>5} {'traced':>7} {'x':>5} | target"
    )
    lines = [f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}; seconds, MB", head]
    for fmt, r in results.items():
        target = TARGETS.get(fmt)
        verdict = "report"
        if target is not None:
            ok = r["cpu_ratio"] <= target
            verdict = f"<= {target:.1f}x CPU {'met' if ok else 'MISSED'}"
        lines.append(
            f"{fmt:<5} {r['mb']:6.1f} | {r['ours_wall']:9.2f} {r['assimp_wall']:7.2f} "
            f"{r['wall_ratio']:6.2f} | {r['ours_cpu']:8.2f} {r['assimp_cpu']:7.2f} "
            f"{r['cpu_ratio']:6.2f} | {r['read_wall']:6.2f} {r['assimp_took']:6.2f} "
            f"{r['read_ratio']:6.2f} | {r['arrays'] / 1e6:7.1f} {r['rss_delta'] / 1e6:7.1f} "
            f"{r['rss_ratio']:5.2f} {r['traced_peak'] / 1e6:7.1f} {r['traced_ratio']:5.2f} | "
            f"{verdict}"
        )
    lines.append(
        "of the CPU, system time (page faults, the loaded kernel): "
        + ", ".join(
            f"{fmt} ours {r['ours_sys']:.2f} assimp {r['assimp_sys']:.2f}"
            for fmt, r in results.items()
        )
    )
    lines.append(
        ("numpy's BLAS threads: default" if BLAS_THREADS else "ours with OPENBLAS_NUM_THREADS=1")
        + "; "
        + "wall/CPU: whole processes (ours: python start + read); read(): ours in-process wall, "
        "took: Assimp's own import figure; RSS+: max RSS growth during read(); memory target "
        f"<= {MEMORY_TARGET:.0f}x arrays"
    )
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5, help="runs per file and reader (median)")
    ap.add_argument("--n", type=int, default=1000, help="grid side (make_grid.py --n)")
    ap.add_argument("--formats", default="txt,bin,bzip")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--trace", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--blas-threads", action="store_true", help="numpy's default BLAS threads")
    args = ap.parse_args()
    global BLAS_THREADS
    BLAS_THREADS = args.blas_threads
    if args.worker:
        worker(args.worker, args.trace)
        return 0
    if not Path(ASSIMP).exists():
        print(f"{ASSIMP} missing (apt-get install assimp-utils)", file=sys.stderr)
        return 1
    results = {}
    for fmt in args.formats.split(","):
        path = DATA / f"grid_{args.n}.{fmt}.x"
        if not path.exists():
            print(f"{path} missing: run tests/bench/make_grid.py --n {args.n}", file=sys.stderr)
            return 1
        results[fmt] = measure(path, args.runs)
    load = os.getloadavg()
    if args.json:
        print(
            json.dumps({"load": load, "blas_threads": BLAS_THREADS, "results": results}, indent=1)
        )
    else:
        print(table(results, load))
    return 0


if __name__ == "__main__":
    sys.exit(main())
