"""Import time of skinned, animated files against Assimp's raw parse (``assimp info F -r``).

    .venv/bin/python tests/bench/bench_skinned.py [--runs 3] [--skip-generated]

Files: the skinned corpus files (../shared/xcorpus) and a generated character (100 bones,
50,000 vertices, 4 weights per vertex, 3 animation sets of 1,000 keys per bone and key type),
written to tests/bench/data/ (git-ignored). Ours is the whole import (read, views, meshes,
armature, weights, actions) into an empty scene; Assimp's is its own "import took" figure
(parse into its scene, no post-processing). Medians of ``--runs`` runs; ratios ours/Assimp.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(os.environ.get("XOF_CORPUS") or ROOT.parent / "shared" / "xcorpus").expanduser()
DATA = Path(__file__).resolve().parent / "data"
CORPUS_FILES = [
    "BCN_Epileptic.X",
    "Testwuson.X",
    "anim_test.x",
    "test_cube_text.x",
    "test_cube_binary.x",
    "test_cube_compressed.x",
]


def _num(values: np.ndarray) -> str:
    return ",".join(f"{v:.6f}" for v in np.asarray(values, float).reshape(-1))


def character(bones: int = 100, grid: tuple[int, int] = (250, 200), keys: int = 1000) -> dict:
    """The arrays of a deterministic skinned, animated character (what ``write_character``
    writes): ``verts`` (n, 3), ``quads``, ``owners`` / ``weights`` (n, 4), ``parents``,
    ``heads`` (bones, 3), ``times`` (keys,) ticks, and per set (3) ``rot`` (bones, keys, 4,
    w x y z) and ``pos`` (bones, keys, 3) keys. 10 chains of bones, each 1 unit above its
    parent."""
    rng = np.random.default_rng(7)
    nx, ny = grid
    xs, ys = np.meshgrid(np.linspace(-1, 1, nx), np.linspace(0, 10, ny))
    verts = np.stack([xs.ravel(), ys.ravel(), 0.2 * np.sin(xs.ravel() * 3)], axis=1)
    quads = [
        (r * nx + c, r * nx + c + 1, (r + 1) * nx + c + 1, (r + 1) * nx + c)
        for r in range(ny - 1)
        for c in range(nx - 1)
    ]
    n = len(verts)
    owners = np.stack([rng.choice(bones, 4, replace=False) for _ in range(n)])
    weights = rng.random((n, 4)) + 0.05
    weights /= weights.sum(axis=1, keepdims=True)
    parents = [-1 if b % 10 == 0 else b - 1 for b in range(bones)]
    heads = np.array([[(b // 10) * 0.2 - 1.0, (b % 10) * 1.0, 0.0] for b in range(bones)])
    rot = np.zeros((3, bones, keys, 4))
    pos = np.zeros((3, bones, keys, 3))
    for s in range(3):
        for b in range(bones):
            angles = np.cumsum(rng.normal(0, 0.01, keys))
            rot[s, b] = np.stack(
                [np.cos(angles), np.zeros(keys), np.zeros(keys), np.sin(angles)], 1
            )
            local = heads[b] - (heads[parents[b]] if parents[b] >= 0 else 0)
            pos[s, b] = local + np.cumsum(rng.normal(0, 0.001, (keys, 3)), axis=0)
    return {
        "verts": verts, "quads": quads, "owners": owners, "weights": weights,
        "parents": parents, "heads": heads, "times": np.arange(keys) * 160, "rot": rot, "pos": pos,
    }  # fmt: skip


def write_character(
    path: Path, bones: int = 100, grid: tuple[int, int] = (250, 200), keys: int = 1000
) -> Path:
    """A deterministic skinned, animated character (:func:`character`) as text .X."""
    c = character(bones, grid, keys)
    verts, quads, owners, weights = c["verts"], c["quads"], c["owners"], c["weights"]
    parents, heads, times = c["parents"], c["heads"], c["times"]
    n = len(verts)
    out = ["xof 0303txt 0032\n", "AnimTicksPerSecond { 4800; }\n"]
    out.append(f"Frame Body {{\nMesh Skin {{\n{n};\n")
    out.append(",\n".join(f"{x:.6f};{y:.6f};{z:.6f};" for x, y, z in verts) + ";\n")
    out.append(f"{len(quads)};\n")
    out.append(",\n".join(f"4;{a},{b},{c},{d};" for a, b, c, d in quads) + ";\n")
    out.append(f"XSkinMeshHeader {{ 4; 12; {bones}; }}\n")
    for b in range(bones):
        rows, cols = np.nonzero(owners == b)
        offset = np.eye(4)
        offset[3, :3] = -heads[b]
        out.append(
            f'SkinWeights {{ "B{b}"; {len(rows)}; {",".join(map(str, rows))}; '
            f"{_num(weights[rows, cols])}; {_num(offset)};; }}\n"
        )
    out.append("}\n}\n")

    def frame(b: int) -> str:
        local = np.eye(4)
        local[3, :3] = heads[b] - (heads[parents[b]] if parents[b] >= 0 else 0)
        kids = "".join(frame(c) for c in range(bones) if parents[c] == b)
        return f"Frame B{b} {{ FrameTransformMatrix {{ {_num(local)};; }}\n{kids}}}\n"

    out.extend(frame(b) for b in range(bones) if parents[b] < 0)
    for s in range(3):
        out.append(f"AnimationSet Set{s} {{\n")
        for b in range(bones):
            rot, pos = c["rot"][s, b], c["pos"][s, b]
            out.append(f"Animation {{ {{ B{b} }}\nAnimationKey {{ 0; {keys};\n")
            out.append(",\n".join(f"{t};4;{_num(q)};;" for t, q in zip(times, rot, strict=True)))
            out.append(";\n}\n")
            out.append(f"AnimationKey {{ 2; {keys};\n")
            out.append(",\n".join(f"{t};3;{_num(p)};;" for t, p in zip(times, pos, strict=True)))
            out.append(";\n}\nAnimationOptions { 1; 1; }\n}\n")
        out.append("}\n")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(out), encoding="ascii")
    return path


def assimp_seconds(path: Path) -> float | None:
    """Assimp's own 'import took approx. S seconds' for a raw parse; None without assimp."""
    try:
        done = subprocess.run(
            ["assimp", "info", str(path), "-r"], capture_output=True, text=True, timeout=600
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = re.search(r"import took approx\.\s*([0-9.]+)\s*seconds", done.stdout)
    return float(found.group(1)) if found else None


def our_seconds(path: Path) -> float:
    import bpy
    from xof.addon.scene import importer

    bpy.ops.wm.read_homefile(use_empty=True)
    start = time.perf_counter()
    importer.import_files([path], importer.ImportOptions())
    return time.perf_counter() - start


def median_of(fn, runs: int) -> float | None:
    values = [fn() for _ in range(runs)]
    good = [v for v in values if v is not None]
    return statistics.median(good) if good else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--skip-generated", action="store_true")
    args = parser.parse_args()
    link = Path(tempfile.mkdtemp(prefix="xof-bench-"))
    (link / "xof").symlink_to(ROOT, target_is_directory=True)
    sys.path.insert(0, str(link))
    files = [CORPUS / f for f in CORPUS_FILES if (CORPUS / f).exists()]
    if not args.skip_generated:
        target = DATA / "skinned_character.x"
        if not target.exists():
            start = time.perf_counter()
            write_character(target)
            print(f"wrote {target} ({target.stat().st_size / 1e6:.1f} MB) "
                  f"in {time.perf_counter() - start:.1f} s")  # fmt: skip
        files.append(target)
    print(f"{'file':28} {'xof import s':>13} {'assimp -r s':>12} {'ratio':>7}")
    for path in files:
        ours = median_of(lambda p=path: our_seconds(p), args.runs)
        theirs = median_of(lambda p=path: assimp_seconds(p), args.runs)
        ratio = f"{ours / theirs:7.1f}" if ours and theirs else "    n/a"
        theirs_text = f"{theirs:12.3f}" if theirs is not None else "         n/a"
        print(f"{path.name:28} {ours:13.3f} {theirs_text} {ratio}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
