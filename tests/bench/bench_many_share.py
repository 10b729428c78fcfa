"""The split of a World's batch between this process and its helper, measured per frame.

A script, not a test: ``.venv/bin/python tests/bench/bench_many_share.py --share 0.9``.
Runs ``bench_many_handler.py`` (its arguments after ``--``) with ``parallel.LOCAL_SHARE``
set to ``--share`` and prints, over the helped frames after the first five, the median of
this process's wait for the helper's answer and of the helper's own wall and CPU time on
its part (a wait near 0: this process's share is the longer one).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "bench"))

import tests.conftest  # noqa: E402,F401  (puts the package on sys.path as `xof`)


def main() -> int:
    from xof.addon.sim.many import parallel

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--share", type=float, default=parallel.LOCAL_SHARE)
    ap.add_argument("rest", nargs="*", help="bench_many_handler.py's arguments (after --)")
    args = ap.parse_args()
    parallel.LOCAL_SHARE = args.share
    waits: list[float] = []
    helper: list[tuple[float, float]] = []
    wait = parallel.Partition.wait

    def timed(self: parallel.Partition) -> None:
        began = time.perf_counter()
        wait(self)
        waits.append(time.perf_counter() - began)
        helper.append(self.worker.last)

    parallel.Partition.wait = timed  # type: ignore[method-assign]
    import bench_many_handler

    sys.argv = ["bench_many_handler.py", *(args.rest or ["--runs", "1", "--frames", "30"])]
    bench_many_handler.main()
    if len(waits) <= 5:
        print("no helped frames (the batch was not split, or Pace kept the helper off)")
        return 0
    w = 1e3 * statistics.median(waits[5:])
    h_wall = 1e3 * statistics.median(x[1] for x in helper[5:])
    h_cpu = 1e3 * statistics.median(x[0] for x in helper[5:])
    print(
        f"share {args.share}: wait for the helper {w:.2f} ms, helper wall {h_wall:.2f} ms "
        f"(CPU {h_cpu:.2f}), {len(waits) - 5} helped frames"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
