"""The reader campaign: mutated seeds through ``read()`` until a count or a time is reached.

    python -m tests.fuzz.campaign --inputs 100000 --seconds 3600 --report out/fuzz.json

One process (the machine is shared). Every bad outcome (crash, hang, slow, memory) is written,
shrunk, to ``--crashers`` once per distinct signature; the JSON report holds the figures:
inputs, throughput, outcome counts, the slowest input, the largest memory ratio (peak / input
size, passing inputs) and the closest any input came to the memory limit (peak / limit, all
inputs), that input written next to the report as ``<report>.closest.x``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from .harness import MEMORY_CONSTANT, MEMORY_FACTOR, Outcome, run
from .mutators import mutate
from .seeds import Seed, load_seeds
from .shrink import shrink

CRASHERS = Path(__file__).resolve().parent / "crashers"


def seed_weights(seeds: list[Seed]) -> list[float]:
    """Small seeds often, the 800 KB corpus files now and then (throughput)."""
    return [1.0 / (1.0 + len(s.data) / 4000.0) for s in seeds]


def signature(outcome: Outcome) -> str:
    if outcome.status == "crash":
        return outcome.detail.split(":", 1)[0]
    return outcome.status


def keep(data: bytes, outcome: Outcome, folder: Path) -> Path:
    """Write a bad input as ``<status>-<hash>.x``, shrunk (slow ones are not: too costly)."""
    budget = {"crash": 400, "hang": 0, "slow": 0, "memory": 60}[outcome.status]

    def same(d: bytes) -> bool:
        return signature(run(d, outcome.status == "memory")) == signature(outcome)

    small = shrink(data, same, budget) if budget else data
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{outcome.status}-{hashlib.sha1(small).hexdigest()[:12]}.x"
    path.write_bytes(small)
    return path


def limit_ratio(outcome: Outcome) -> float:
    """Peak over the memory limit: 1.0 is the limit, ``memory`` outcomes are above it."""
    return outcome.peak / (MEMORY_FACTOR * outcome.basis + MEMORY_CONSTANT)


def campaign(inputs: int, seconds: float, rng_seed: int, folder: Path | None,
             measure_memory: bool = True, progress: bool = False,
             max_seed_bytes: int | None = None,
             closest_path: Path | None = None) -> dict[str, Any]:  # fmt: skip
    seeds = load_seeds(max_seed_bytes)
    weights = seed_weights(seeds)
    rng = random.Random(rng_seed)
    counts: Counter[str] = Counter()
    found: dict[str, dict[str, Any]] = {}
    slowest: dict[str, Any] = {"seconds": 0.0}
    largest: dict[str, Any] = {"ratio": 0.0}
    closest: dict[str, Any] = {"of_limit": 0.0}
    closest_data = b""
    reader_seconds = 0.0
    total_bytes = 0
    start = time.perf_counter()
    done = 0
    while done < inputs and time.perf_counter() - start < seconds:
        seed = rng.choices(seeds, weights)[0]
        data, recipe = mutate(seed, rng, seeds)
        outcome = run(data, measure_memory)
        done += 1
        total_bytes += len(data)
        reader_seconds += outcome.seconds
        counts[outcome.status] += 1
        if outcome.seconds > slowest["seconds"]:
            slowest = {"seconds": round(outcome.seconds, 4), "size": len(data), "recipe": recipe}
        if outcome.ratio > largest["ratio"] and outcome.status != "memory":
            largest = {"ratio": round(outcome.ratio, 2), "peak": outcome.peak,
                       "size": len(data), "basis": outcome.basis, "recipe": recipe}  # fmt: skip
        of_limit = limit_ratio(outcome)
        if of_limit > closest["of_limit"]:
            closest = {"of_limit": round(of_limit, 3), "peak": outcome.peak,
                       "size": len(data), "basis": outcome.basis, "status": outcome.status,
                       "recipe": recipe}  # fmt: skip
            closest_data = data
        if outcome.bad:
            sig = signature(outcome)
            if outcome.status != "crash":  # one per mutation sequence: cause, not instance
                sig += ":" + "+".join(p.split(":")[0] for p in recipe.split("+")[1:])
            first = sig not in found
            entry = found.setdefault(
                sig, {"status": outcome.status, "count": 0, "detail": outcome.detail,
                      "recipe": recipe}
            )  # fmt: skip
            entry["count"] += 1
            kept = sum(1 for v in found.values() if "file" in v and v["status"] == outcome.status)
            limit = 200 if outcome.status == "crash" else 20
            if first and folder is not None and kept < limit:
                found[sig]["file"] = str(keep(data, outcome, folder).name)
            if progress:
                print(f"BAD {outcome.status} {outcome.detail[:120]} <- {recipe}", flush=True)
        if progress and done % 5000 == 0:
            rate = done / (time.perf_counter() - start)
            print(f"{done} inputs, {rate:.0f}/s, {dict(counts)}", flush=True)
    wall = time.perf_counter() - start
    if closest_path is not None and closest_data:
        closest_path.parent.mkdir(parents=True, exist_ok=True)
        closest_path.write_bytes(closest_data)
        closest["file"] = str(closest_path)
    return {
        "inputs": done,
        "wall_seconds": round(wall, 1),
        "inputs_per_second": round(done / wall, 1) if wall else 0.0,
        "reader_seconds": round(reader_seconds, 1),
        "mean_input_bytes": round(total_bytes / max(1, done)),
        "outcomes": dict(counts),
        "slowest": slowest,
        "largest_memory_ratio": largest,
        "closest_to_memory_limit": closest,
        "bad": found,
        "memory_measured": measure_memory,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=100_000)
    parser.add_argument("--seconds", type=float, default=3600.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--crashers", type=Path, default=CRASHERS)
    parser.add_argument("--report", type=Path, default=None)
    parser.add_argument("--no-memory", action="store_true", help="skip the traced second run")
    args = parser.parse_args(argv)
    closest = args.report.with_suffix(".closest.x") if args.report else None
    result = campaign(args.inputs, args.seconds, args.seed, args.crashers,
                      not args.no_memory, progress=True, closest_path=closest)  # fmt: skip
    text = json.dumps(result, indent=1)
    if args.report:
        args.report.parent.mkdir(parents=True, exist_ok=True)
        args.report.write_text(text)
    print(text)
    return 1 if result["bad"] else 0


if __name__ == "__main__":
    sys.exit(main())
