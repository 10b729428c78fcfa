"""The many-cloth frame split into this process's solver time and the rest, helpers on and off.

A script, not a test: ``.venv/bin/python tests/bench/bench_many_bound.py [--runs 3]``.
The scene of ``bench_many_handler.py``; per frame, the wall of ``scene.frame_set`` and the
time inside ``_Batch.run`` (the substeps stepped in this process). With the helpers off,
the solver time is the whole solver and the rest is the serial work a helper cannot take
(the adapter's reads and writes, Blender's evaluation), so on two cores no split of the
solver makes a frame shorter than ``rest + solver / 2``. Blender's Cloth runs between the
pairs, as the anchor. Medians over 30 frames (frame 1 left out).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "bench"))

import bpy  # noqa: E402

import tests.conftest  # noqa: E402,F401  (puts the package on sys.path as `xof`)

_SOLVING = [0.0]


def _timed_run(run: Any) -> Any:
    def timed(self: Any, job: Any) -> None:
        began = time.perf_counter()
        run(self, job)
        _SOLVING[0] += time.perf_counter() - began

    return timed


def play(frames: int) -> tuple[float, float]:
    """Median wall and in-process solver ms per frame."""
    scene = bpy.context.scene
    scene.frame_set(1)
    walls, solving = [], []
    for f in range(2, frames + 2):
        _SOLVING[0] = 0.0
        began = time.perf_counter()
        scene.frame_set(f)
        walls.append(time.perf_counter() - began)
        solving.append(_SOLVING[0])
    return 1e3 * statistics.median(walls), 1e3 * statistics.median(solving)


def main() -> int:
    import bench_many_handler as scene_bench
    from xof.addon.sim.many import parallel, world

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--frames", type=int, default=30)
    args = ap.parse_args()
    world._Batch.run = _timed_run(world._Batch.run)  # type: ignore[method-assign]
    for _ in range(args.runs):
        line = []
        for helpers in (None, 0):
            parallel.configure(helpers)
            scene_bench.build(40, 20, native=False)
            wall, solving = play(args.frames)
            scene_bench.fx.unregister_physics()
            parallel.shutdown()
            name = "on" if helpers is None else "off"
            line.append(f"helpers {name}: {wall:.1f} wall, solver here {solving:.1f}")
            if helpers == 0:
                rest = wall - solving
                line.append(f"rest {rest:.1f}, bound {rest + solving / 2:.1f}")
        parallel.configure(None)
        scene_bench.build(40, 20, native=True)
        blender = scene_bench.play(args.frames)[0]
        print(f"{'; '.join(line)}; Blender q5 {blender:.1f} ms", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
