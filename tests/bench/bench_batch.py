"""The batch converter over a library: files/s with 1 and 2 workers, against Assimp.

    .venv/bin/python tests/bench/bench_batch.py [--count 1000] [--workers 1,2] [--no-assimp]

The library (tests/bench/data/batch/, git-ignored): the batch tests' fixtures (a skinned
character with two sets, an animation-only file, morphs, a textured quad, the example cloth
files), a generated character (20 bones, 300 vertices, 3 sets of 30 keys) with and without
``AnimTicksPerSecond``, and the shared corpus's files when ../shared/xcorpus is there,
replicated to ``--count`` files. Ours: ``python -m addon.batch convert --to glb --force`` as a
user runs it (wall time, worker start-up included). The anchor: ``assimp export F out.glb``,
one process a file, over the same files (sequential, and two at a time). Then, per kind of
file, what each glb holds: vertices, animations, NaN floats, or the failure.
Not a test (not run in CI): timings depend on the machine and its load, printed with them.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
_LINK = Path(tempfile.mkdtemp(prefix="xof-pkg-"))  # the fixtures import the package as xof
(_LINK / "xof").symlink_to(ROOT, target_is_directory=True)
sys.path.insert(0, str(_LINK))

from tests.batch.batch_fixtures import write_library  # noqa: E402
from tests.bench.bench_skinned import write_character  # noqa: E402

DATA = Path(__file__).resolve().parent / "data" / "batch"
CORPUS = Path(os.environ.get("XOF_CORPUS") or ROOT.parent / "shared" / "xcorpus").expanduser()
CORPUS_FILES = [
    "anim_test.x", "BCN_Epileptic.X", "Testwuson.X", "fromtruespace_bin32.x",
    "kwxport_test_cubewithvcolors.x", "test_cube_text.x", "test_cube_binary.x",
    "test_cube_compressed.x",
]  # fmt: skip


def make_kinds() -> dict[str, Path]:
    """One file of each kind in DATA/kinds (rewritten each run: a few KB to a few MB)."""
    kinds_dir = DATA / "kinds"
    shutil.rmtree(kinds_dir, ignore_errors=True)
    kinds = write_library(kinds_dir)
    gen = write_character(kinds_dir / "generated.x", bones=20, grid=(20, 15), keys=30)
    text = gen.read_text().replace("AnimTicksPerSecond { 4800; }\n", "")
    (kinds_dir / "generated_no_ticks.x").write_text(text)
    kinds["generated"] = gen
    kinds["generated_no_ticks"] = kinds_dir / "generated_no_ticks.x"
    if CORPUS.is_dir():
        (kinds_dir / "corpus").mkdir()
        for name in CORPUS_FILES:
            if (CORPUS / name).is_file():
                shutil.copy2(CORPUS / name, kinds_dir / "corpus" / name)
                kinds[f"corpus/{name}"] = kinds_dir / "corpus" / name
        for tex in CORPUS.glob("*.tga"):
            shutil.copy2(tex, kinds_dir / "corpus" / tex.name)
    return kinds


def replicate(kinds: dict[str, Path], count: int) -> tuple[Path, list[Path]]:
    """``count`` files: the kinds in turn, each copy in its own folder (with its textures)."""
    lib = DATA / f"library_{count}"
    shutil.rmtree(lib, ignore_errors=True)
    names = sorted(kinds)
    files = []
    for i in range(count):
        name = names[i % len(names)]
        src = kinds[name]
        dest = lib / f"g{i // len(names):04d}" / Path(name).parent / src.name
        dest.parent.mkdir(parents=True, exist_ok=True)
        os.link(src, dest)
        for tex in list(src.parent.glob("*.png")) + list(src.parent.glob("*.tga")):
            if not (dest.parent / tex.name).exists():
                os.link(tex, dest.parent / tex.name)
        files.append(dest)
    return lib, files


def run_ours(lib: Path, workers: int, out: Path) -> tuple[float, dict]:
    report = out.with_suffix(".json")
    shutil.rmtree(out, ignore_errors=True)
    cmd = [sys.executable, "-m", "addon.batch", "convert", str(lib), "--to", "glb", "--out",
           str(out), "--workers", str(workers), "--force", "--report", str(report)]  # fmt: skip
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"batch failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return wall, json.loads(report.read_text())


def assimp_one(src: Path, out: Path) -> tuple[bool, str]:
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        done = subprocess.run(["assimp", "export", str(src), str(out), "-fglb2"],
                              capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
    except subprocess.TimeoutExpired:
        return False, "timed out after 300 s"
    ok = done.returncode == 0 and out.is_file() and "ERROR" not in done.stdout + done.stderr
    lines = [ln for ln in (done.stdout + done.stderr).splitlines() if "ERROR" in ln]
    return ok, (lines[0][:160] if lines else "")


def run_assimp(lib: Path, files: list[Path], out: Path, parallel: int) -> tuple[float, list]:
    shutil.rmtree(out, ignore_errors=True)
    jobs = [(f, (out / f.relative_to(lib)).with_suffix(".glb")) for f in files]
    start = time.perf_counter()
    with ThreadPoolExecutor(parallel) as pool:
        results = list(pool.map(lambda job: assimp_one(*job), jobs))
    return time.perf_counter() - start, results


def glb_facts(path: Path) -> dict:
    """Vertices (POSITION accessors), animations, nodes and NaN floats of a .glb."""
    data = path.read_bytes()
    n_json = struct.unpack_from("<I", data, 12)[0]
    doc = json.loads(data[20 : 20 + n_json])
    binary = b""
    if len(data) > 20 + n_json + 8:
        n_bin = struct.unpack_from("<I", data, 20 + n_json)[0]
        binary = data[28 + n_json : 28 + n_json + n_bin]
    nans = 0
    for acc in doc.get("accessors", []):
        if acc.get("componentType") != 5126 or "bufferView" not in acc:
            continue
        view = doc["bufferViews"][acc["bufferView"]]
        width = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT4": 16}.get(acc["type"], 1)
        start = view.get("byteOffset", 0) + acc.get("byteOffset", 0)
        stride = view.get("byteStride", 4 * width)
        for i in range(acc["count"]):
            at = start + i * stride
            values = np.frombuffer(binary[at : at + 4 * width], dtype="<f4")
            nans += int(np.isnan(values).sum())
    positions = {
        p["attributes"]["POSITION"] for m in doc.get("meshes", []) for p in m["primitives"]
    }
    return {
        "vertices": sum(doc["accessors"][i]["count"] for i in positions),
        "meshes": len(doc.get("meshes", [])),
        "animations": len(doc.get("animations", [])),
        "skins": len(doc.get("skins", [])),
        "nans": nans,
    }


def memory_rows(report: dict) -> list[str]:
    """Per worker: RSS after its 100th file (or its 10 %) and after its last one."""
    by_pid: dict[int, list[dict]] = {}
    for f in report["files"]:
        if "worker_pid" in f:
            by_pid.setdefault(f["worker_pid"], []).append(f)
    rows = []
    for pid, entries in sorted(by_pid.items()):
        entries.sort(key=lambda e: e["worker_files"])
        early = entries[min(len(entries), max(1, min(100, len(entries) // 10))) - 1]
        last = entries[-1]
        rss = last["rss_mb"] / early["rss_mb"] - 1
        peak = last["peak_rss_mb"] / early["peak_rss_mb"] - 1
        rows.append(
            f"| worker {pid} | {len(entries)} files | RSS {early['rss_mb']:.0f} MB after file "
            f"{early['worker_files']}, {last['rss_mb']:.0f} MB after {last['worker_files']} "
            f"({rss:+.1%}); peak {early['peak_rss_mb']:.0f} -> {last['peak_rss_mb']:.0f} MB "
            f"({peak:+.1%}) |"
        )
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--no-assimp", action="store_true")
    args = ap.parse_args()
    load_before = os.getloadavg()
    kinds = make_kinds()
    lib, files = replicate(kinds, args.count)
    print(f"{len(files)} files ({len(kinds)} kinds) in {lib}; {os.cpu_count()} cores, "
          f"load average before {load_before[0]:.1f}")  # fmt: skip
    rates: dict[str, float] = {}
    reports: dict[int, dict] = {}
    for w in [int(x) for x in args.workers.split(",")]:
        wall, report = run_ours(lib, w, DATA / f"out_ours_{w}")
        reports[w] = report
        t = report["totals"]
        rates[f"ours {w}"] = len(files) / wall
        resets = [f["reset_ms"] for f in report["files"] if "reset_ms" in f]
        print(f"| xof batch, {w} worker(s) | {wall:.1f} s | {len(files) / wall:.2f} files/s | "
              f"converted {t['converted']['files']}, failed {t['failed']['files']}, crashed "
              f"{t['crashed']['files']} | reset median {statistics.median(resets):.1f} ms, p95 "
              f"{np.percentile(resets, 95):.1f} ms | load {os.getloadavg()[0]:.1f} |")  # fmt: skip
        for row in memory_rows(report):
            print(row)
    if "ours 1" in rates and "ours 2" in rates:
        print(f"2 workers / 1 worker: {rates['ours 2'] / rates['ours 1']:.2f}x")
    assimp_results: list = []
    if not args.no_assimp and shutil.which("assimp"):
        for parallel in (1, 2):
            wall, assimp_results = run_assimp(lib, files, DATA / f"out_assimp_{parallel}", parallel)
            ok = sum(1 for good, _ in assimp_results if good)
            rates[f"assimp {parallel}"] = len(files) / wall
            print(f"| assimp export, {parallel} at a time | {wall:.1f} s | "
                  f"{len(files) / wall:.2f} files/s | exported {ok}, failed {len(files) - ok} | "
                  f"load {os.getloadavg()[0]:.1f} |")  # fmt: skip
        for w in (1, 2):
            if f"ours {w}" in rates and f"assimp {w}" in rates:
                print(f"ours/assimp at {w}: {rates[f'ours {w}'] / rates[f'assimp {w}']:.2f}x")
    # what each route's glb holds, one file of each kind
    report = next(iter(reports.values()), None)
    if report is not None:
        by_rel = {f["relative"]: f for f in report["files"]}
        print("| file | xof seconds | xof: vertices / animations / skins / NaN | assimp |")
        first = reports[min(reports)]
        for i, name in enumerate(sorted(kinds)[: len(files)]):
            rel = files[i].relative_to(lib).as_posix()
            ours = by_rel[rel]
            out = Path(first["out"]) / Path(rel).with_suffix(".glb")
            if ours["status"] == "converted":
                f = glb_facts(out)
                mine = f"{f['vertices']} / {f['animations']} / {f['skins']} / {f['nans']}"
            else:
                mine = f"{ours['status']}: {(ours['error'] or ours.get('reason') or '')[:80]}"
            theirs = "-"
            if assimp_results:
                good, error = assimp_results[i]
                path = (DATA / "out_assimp_2" / rel).with_suffix(".glb")
                if good:
                    f = glb_facts(path)
                    theirs = f"{f['vertices']} / {f['animations']} / {f['skins']} / {f['nans']}"
                else:
                    theirs = f"failed: {error[:90]}"
            secs = [
                f["seconds"] for f in report["files"] if Path(f["source"]).name == files[i].name
            ]
            print(f"| {name} | {statistics.median(secs):.2f} | {mine} | {theirs} |")
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
