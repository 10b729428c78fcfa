"""Solver build benchmark (a script, not a test): from a grid mesh's faces to a ready solver.

    .venv/bin/python tests/bench/bench_build.py [--sizes 100,500,1000] [--runs 3] [--before REV]

Each measurement runs in a fresh process (so peak memory is that build's): springs from the
faces (structural, shear, bend), the ``ClothModel``, then the default XPBD ``Simulator``
(colouring, stretch limiters, tethers to the two pinned corners), and a settings change
through ``Simulator.update_settings`` where the code has it. ``--before REV`` runs the same
steps with ``addon/sim`` as it was at ``REV`` (from ``git archive``), side by side, and
checks that both give the same springs and the same number of colour groups. ``--shuffled``
numbers the grid's vertices in a random order (as a mesh that is no grid: no strides). CPU seconds,
medians over ``--runs`` (and the total's wall seconds); peak RSS of the process in MB;
the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHILD = r"""
import hashlib, json, resource, sys, time
sys.path.insert(0, sys.argv[1]); sys.path.insert(1, sys.argv[2])
import numpy as np
from addon.sim import ClothModel, SimSettings, Simulator
from addon.sim import bend_springs, face_edges, merge_with_kinds, shear_springs
from tests.sim.grids import quad_grid
n = int(sys.argv[3])
positions, sizes, corners = quad_grid(n, n, 2.0, 1.0)
pinned = [0, n - 1]
if sys.argv[4] == "1":  # the vertices numbered in a random order, as no grid
    perm = np.random.default_rng(3).permutation(n * n)
    positions = positions[np.argsort(perm)]
    corners = perm[np.asarray(corners)]
    pinned = perm[pinned]
times = {}
wall = [0.0]
def timed(name, f, *a, **k):
    t, w = time.process_time(), time.perf_counter()
    out = f(*a, **k)
    times[name] = time.process_time() - t
    if name != "setting change":
        wall[0] += time.perf_counter() - w
    return out
def springs():
    edges = face_edges(sizes, corners)
    try:
        shear = shear_springs(sizes, corners, edges=edges)
        bend = bend_springs(sizes, corners, positions, edges=edges, shear=shear)
    except TypeError:  # before the shared-edges arguments
        shear = shear_springs(sizes, corners)
        bend = bend_springs(sizes, corners, positions)
    return merge_with_kinds(edges, shear, bend)
pairs, kinds = timed("springs", springs)
digest = hashlib.sha1(pairs.tobytes() + kinds.tobytes()).hexdigest()[:12]
masses = np.full(n * n, 0.3); masses[pinned] = 0.0
model = timed("model", ClothModel, positions, masses, pairs, kinds)
del pairs, kinds  # the caller keeps only the model, as the scene side does
sim = timed("solver", Simulator, model, SimSettings.cloth())
if hasattr(sim, "update_settings"):
    timed("setting change", sim.update_settings, SimSettings.cloth(stiffness=5e5, damping=0.1))
times["total"] = times["springs"] + times["model"] + times["solver"]
groups = sim.solver.groups
times["total wall"] = wall[0]
print(json.dumps({
    "times": times,
    "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
    "springs": digest,
    "groups": len(groups),
    "constraints": int(sum(g.rest.size for g in groups)),
}))
"""


def measure(code_root: Path, n: int, shuffled: bool = False) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(code_root), str(ROOT), str(n), str(int(shuffled))],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def summary(runs: list[dict]) -> dict:
    keys = runs[0]["times"].keys()
    return {
        "times": {k: statistics.median(r["times"][k] for r in runs) for k in keys},
        "peak_mb": max(r["peak_mb"] for r in runs),
        **{k: runs[0][k] for k in ("springs", "groups", "constraints")},
    }


def show(label: str, r: dict) -> None:
    parts = ", ".join(f"{k} {v:.2f} s" for k, v in r["times"].items())
    print(
        f"  {label}: {parts}; peak {r['peak_mb']:.0f} MB; {r['groups']} groups, "
        f"{r['constraints']} constraints, springs {r['springs']}",
        flush=True,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100,500,1000", help="grid sides (n x n vertices)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--before", default="", help="also measure addon/sim at this revision")
    ap.add_argument("--shuffled", action="store_true", help="vertices numbered at random")
    args = ap.parse_args()
    print(f"load average {os.getloadavg()}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        before = None
        if args.before:
            before = Path(tmp)
            archive = subprocess.run(
                ["git", "-C", str(ROOT), "archive", args.before, "addon/sim"],
                check=True,
                capture_output=True,
            ).stdout
            subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
            (before / "addon" / "__init__.py").write_text("")
        for n in (int(s) for s in args.sizes.split(",")):
            print(f"{n} x {n} = {n * n} vertices", flush=True)
            now, old = [], []
            for _ in range(args.runs):
                now.append(measure(ROOT, n, args.shuffled))
                if before is not None:
                    old.append(measure(before, n, args.shuffled))
            new = summary(now)
            show("now", new)
            if old:
                ref = summary(old)
                show(f"at {args.before}", ref)
                ratio = ref["times"]["total"] / max(new["times"]["total"], 1e-9)
                same = ref["springs"] == new["springs"]
                print(f"  {ratio:.1f}x faster; same springs: {same}", flush=True)
    print(f"load average {os.getloadavg()}", flush=True)


if __name__ == "__main__":
    main()
