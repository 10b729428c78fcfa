"""Skinned characters: xof's import of the .X against Blender's glTF importer on the same
character (issue figures: text .X <= 0.7x, binary .X <= 0.4x the glTF importer's time).

    .venv/bin/python tests/bench/bench_gltf_anchor.py [--runs 5] [--skip-generated]
        [--base CHECKOUT] [--only NAME ...]

The glb of each file is written once by Blender's own glTF exporter from xof's import (so it
holds the same vertices, bones and actions). Then, alternating, fresh processes time
``bpy.ops.import_scene.x`` on the .X and ``bpy.ops.import_scene.gltf`` on the glb (the
operator call only, into an empty scene, the extension already enabled); medians. The
generated character is also written as binary .X (32-bit floats) by xof's exporter.
``--base`` also times another checkout's xof (e.g. a worktree of main) in the same rounds,
for a before/after side by side; ``--only`` keeps the files of those names. Each file's
line gives wall medians, the line under it CPU medians (``time.process_time``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parent / "data"
CORPUS = Path(os.environ.get("XOF_CORPUS") or ROOT.parent / "shared" / "xcorpus").expanduser()
SKINNED_CORPUS = ["BCN_Epileptic.X", "Testwuson.X", "anim_test.x"]

CHILD = r"""
import json, sys, tempfile, time
from pathlib import Path
root, mode, src, dst = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
link = Path(tempfile.mkdtemp(prefix="xof-bench-"))
(link / "xof").symlink_to(root, target_is_directory=True)
sys.path.insert(0, str(link))
import bpy
import addon_utils
addon_utils.enable("xof", default_set=True)
bpy.ops.wm.read_homefile(use_empty=True)
out = {}
if mode in ("x", "gltf"):
    run = bpy.ops.import_scene.x if mode == "x" else bpy.ops.import_scene.gltf
    t, c = time.perf_counter(), time.process_time()
    run(filepath=src)
    out["seconds"] = time.perf_counter() - t
    out["cpu"] = time.process_time() - c
elif mode == "make-glb":
    bpy.ops.import_scene.x(filepath=src)
    bpy.ops.export_scene.gltf(filepath=dst, export_format="GLB", export_animations=True,
                              export_skins=True, export_morph=True)
elif mode == "make-bin":
    bpy.ops.import_scene.x(filepath=src)
    bpy.ops.export_scene.x(filepath=dst, file_format="bin")
out["objects"] = len(bpy.data.objects)
out["vertices"] = sum(len(m.vertices) for m in bpy.data.meshes)
out["actions"] = len(bpy.data.actions)
print("RESULT " + json.dumps(out))
"""


def child(mode: str, src: Path, dst: Path | None = None, root: Path = ROOT) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(root), mode, str(src), str(dst or "")],
        capture_output=True, text=True, timeout=1800,
    )  # fmt: skip
    for line in done.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError(f"{mode} {src}: {done.stderr[-2000:]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--skip-generated", action="store_true")
    parser.add_argument("--base", type=Path, default=None)
    parser.add_argument("--only", nargs="*", default=None)
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    files = [CORPUS / f for f in SKINNED_CORPUS if (CORPUS / f).exists()]
    if not args.skip_generated:
        from bench_skinned import write_character

        text = DATA / "skinned_character.x"
        if not text.exists():
            write_character(text)
        binary = DATA / "skinned_character.bin.x"
        if not binary.exists() or binary.stat().st_mtime < text.stat().st_mtime:
            child("make-bin", text, binary)
        files += [text, binary]
    if args.only:
        files = [f for f in files if f.name in args.only]
    base = "" if args.base is None else f" {'base s':>8} {'ratio':>6}"
    print(f"{'file':28} {'xof .X s':>9} {'glTF s':>8} {'ratio':>6}{base}  (medians of {args.runs})")
    rows = []
    for path in files:
        source = DATA / "skinned_character.x" if path.name == "skinned_character.bin.x" else path
        glb = DATA / (source.name + ".glb")  # the binary character is timed against the same glb
        if not glb.exists() or glb.stat().st_mtime < source.stat().st_mtime:
            DATA.mkdir(parents=True, exist_ok=True)
            child("make-glb", source, glb)
        ours, theirs, before = [], [], []
        cpu: dict[str, list[float]] = {"xof": [], "glTF": [], "base": []}
        for _ in range(args.runs):  # alternating, so load drifts hit all alike
            if args.base is not None:
                got = child("x", path, root=args.base.resolve())
                before.append(got["seconds"])
                cpu["base"].append(got["cpu"])
            got = child("x", path)
            ours.append(got["seconds"])
            cpu["xof"].append(got["cpu"])
            got = child("gltf", glb)
            theirs.append(got["seconds"])
            cpu["glTF"].append(got["cpu"])
        a, b = statistics.median(ours), statistics.median(theirs)
        rows.append({"file": path.name, "xof": a, "gltf": b, "ratio": a / b})
        line = f"{path.name:28} {a:9.3f} {b:8.3f} {a / b:6.2f}"
        if before:
            c = statistics.median(before)
            line += f" {c:8.3f} {c / b:6.2f}"
        print(line, flush=True)
        print(
            f"{'  CPU s (process_time)':28} "
            + " ".join(f"{k} {statistics.median(v):.3f}" for k, v in cpu.items() if v),
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
