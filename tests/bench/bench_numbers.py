"""Throughput of scan_numbers on a ~90 MB text grid run, beside np.fromstring (not a pytest test).

    .venv/bin/python tests/bench/bench_numbers.py [--side 900] [--runs 5] [--style e]

The run looks like a Mesh's data written with "%f" (``--style e``: "%e" like Assimp's writer,
``g``: "%g"): positions, quads (``4;a,b,c,d;,``), normals and UVs. Prints the median of
several runs (the machine is shared and noisy) and the ratio against ``np.fromstring(sep=' ')``
on the same text with ``,`` and ``;`` made spaces.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from addon.xfile.scan.numbers import scan_numbers


def grid_run(side: int, seed: int = 1, style: str = "f") -> bytes:
    """A side x side grid mesh's numbers, as exporters write them, then a closing brace."""
    f = b"%" + style.encode()
    vec3 = f + b";" + f + b";" + f + b";,\n"
    vec2 = f + b";" + f + b";,\n"
    rng = np.random.default_rng(seed)
    n = side * side
    i, j = np.divmod(np.arange(n), side)
    pos = np.stack([i * 0.01 - 5.0, rng.normal(scale=0.3, size=n), j * 0.01 - 5.0], axis=1)
    nrm = rng.normal(size=(n, 3))
    nrm /= np.linalg.norm(nrm, axis=1, keepdims=True)
    uv = np.stack([i / (side - 1), j / (side - 1)], axis=1)
    corner = (i * side + j)[(i < side - 1) & (j < side - 1)]
    parts = [b"%d;\n" % n]
    parts += [vec3 % tuple(r) for r in pos.tolist()]
    parts += [b"%d;\n" % len(corner)]
    parts += [b"4;%d,%d,%d,%d;,\n" % (a, a + 1, a + side + 1, a + side) for a in corner.tolist()]
    parts += [b"%d;\n" % n]
    parts += [vec3 % tuple(r) for r in nrm.tolist()]
    parts += [vec2 % tuple(r) for r in uv.tolist()]
    parts.append(b"}\n")
    return b"".join(parts)


def median_seconds(fn: object, runs: int, clock: object = time.perf_counter) -> float:
    times = []
    for _ in range(runs):
        t0 = clock()  # type: ignore[operator]
        fn()  # type: ignore[operator]
        times.append(clock() - t0)  # type: ignore[operator]
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--side", type=int, default=900, help="grid side (900: ~90 MB)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--style", choices=["f", "e", "g"], default="f", help="printf style")
    args = ap.parse_args()

    text = grid_run(args.side, style=args.style)
    mb = len(text) / 1e6
    values, end = scan_numbers(text, 0)
    assert end == len(text) - 2, end
    spaced = text[:end].translate(bytes.maketrans(b",;", b"  "))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        reference = np.fromstring(spaced, sep=" ")
        assert np.array_equal(values, reference), "scan_numbers disagrees with np.fromstring"

        ours = median_seconds(lambda: scan_numbers(text, 0), args.runs)
        theirs = median_seconds(lambda: np.fromstring(spaced, sep=" "), max(1, args.runs // 2))
        ours_cpu = median_seconds(lambda: scan_numbers(text, 0), args.runs, time.process_time)

    tracemalloc.start()
    scan_numbers(text, 0)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()

    out_mb = values.nbytes / 1e6
    print(f"text ({args.style!r}) {mb:.1f} MB, {values.size:,} numbers (output {out_mb:.1f} MB)")
    print(f"scan_numbers   {ours * 1e3:8.1f} ms  {mb / ours:7.1f} MB/s  (median of {args.runs})")
    print(f"  CPU time     {ours_cpu * 1e3:8.1f} ms  {mb / ours_cpu:7.1f} MB/s  (busy-proof)")
    print(f"np.fromstring  {theirs * 1e3:8.1f} ms  {mb / theirs:7.1f} MB/s")
    print(f"ratio          {theirs / ours:8.2f}x faster than np.fromstring")
    print(f"peak traced memory {peak / 1e6:.1f} MB = {peak / values.nbytes:.2f}x the output")


if __name__ == "__main__":
    main()
