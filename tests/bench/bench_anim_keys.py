"""Animation keys: reading a file with 300k TimedFloatKeys, text and binary.

    .venv/bin/python tests/bench/bench_anim_keys.py [--keys 300000] [--before REV]

``--before REV`` also times the reader of git revision REV (exported to a temporary folder,
run in a subprocess), so the effect of a change is measured side by side in one run.
"""

from __future__ import annotations

import argparse
import os
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
BONES = 100
TRACKS = ((0, 4), (1, 3), (2, 3))  # (keyType, values per key): rotation, scale, position


def text_file(keys_per_track: int) -> bytes:
    rng = np.random.default_rng(1)
    out = ["xof 0303txt 0032\nAnimTicksPerSecond { 4800; }\nAnimationSet Take {\n"]
    for b in range(BONES):
        out.append(f"Animation {{\n {{ Bone{b} }}\n")
        for key_type, width in TRACKS:
            vals = rng.standard_normal((keys_per_track, width))
            rows = ",\n".join(
                f"{160 * i};{width};" + ",".join(f"{v:.6f}" for v in row) + ";;"
                for i, row in enumerate(vals)
            )
            out.append(f" AnimationKey {{\n  {key_type};\n  {keys_per_track};\n{rows};\n }}\n")
        out.append("}\n")
    out.append("}\n")
    return "".join(out).encode()


def _word(v: int) -> bytes:
    return struct.pack("<H", v)


def _name(s: str) -> bytes:
    return _word(1) + struct.pack("<I", len(s)) + s.encode()


def binary_file(keys_per_track: int) -> bytes:
    """Each key as real exporters write it: INTEGER_LIST [time, n], FLOAT_LIST [values]."""
    rng = np.random.default_rng(1)
    out = [b"xof 0303bin 0032", _name("AnimationSet"), _name("Take"), _word(10)]
    for b in range(BONES):
        out += [_name("Animation"), _word(10), _word(10), _name(f"Bone{b}"), _word(11)]
        for key_type, width in TRACKS:
            out += [_name("AnimationKey"), _word(10)]
            out.append(_word(6) + struct.pack("<III", 2, key_type, keys_per_track))
            vals = rng.standard_normal((keys_per_track, width)).astype("<f4")
            head = _word(6) + struct.pack("<I", 2)
            floats = _word(7) + struct.pack("<I", width)
            for i in range(keys_per_track):
                out.append(head + struct.pack("<II", 160 * i, width) + floats + vals[i].tobytes())
            out.append(_word(11))
        out.append(_word(11))
    out.append(_word(11))
    return b"".join(out)


TIMER = """
import sys, time
sys.path.insert(0, sys.argv[1])
from addon.xfile import read, scene_of
data = open(sys.argv[2], "rb").read()
best = 1e9
for _ in range(int(sys.argv[3])):
    t = time.perf_counter(); doc = read(data); scene = scene_of(doc)
    best = min(best, time.perf_counter() - t)
keys = sum(len(t.times) for s in scene.animation_sets for a in s.animations for t in a.tracks)
print(best, keys)
"""


def timed(root: Path, path: Path, repeat: int) -> tuple[float, int]:
    out = subprocess.run(
        [sys.executable, "-c", TIMER, str(root), str(path), str(repeat)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    best, keys = out.stdout.split()
    return float(best), int(keys)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keys", type=int, default=300_000)
    parser.add_argument("--before", default=None, help="git revision to compare with")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    per_track = args.keys // (BONES * len(TRACKS))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        files = {"txt": folder / "keys.txt.x", "bin": folder / "keys.bin.x"}
        files["txt"].write_bytes(text_file(per_track))
        files["bin"].write_bytes(binary_file(per_track))
        roots = {"now": ROOT}
        if args.before:
            old = folder / "before"
            old.mkdir()
            archive = subprocess.run(
                ["git", "-C", str(ROOT), "archive", args.before, "addon"],
                check=True, capture_output=True,
            ).stdout  # fmt: skip
            subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
            roots = {f"before ({args.before})": old, "now": ROOT}
        for fmt, path in files.items():
            size = os.path.getsize(path) / 1e6
            for label, root in roots.items():
                seconds, keys = timed(root, path, args.repeat)
                print(f"{fmt} {size:.1f} MB, {keys} keys, {label}: {seconds:.3f} s")


if __name__ == "__main__":
    main()
