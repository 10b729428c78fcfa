"""Mutated files through ``bpy.ops.import_scene.x`` in real bpy.

    python -m tests.fuzz.import_campaign --inputs 1000 --report out/fuzz-import.json

Judged per input: the operator returns (no crash of Blender or of Python); an error it
reports comes from XFileError or a clean check, not from "import failed: <exception>" (an
importer bug caught by the operator's last resort); after a failed import every ``bpy.data``
collection holds exactly the names it held before, and the scene's settings (frame rate, frame
range, current frame, Lock Interface) are as they were; no numpy RuntimeWarning (overflow,
invalid value) reaches the console: the importer checks the values it computes with.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import random
import sys
import tempfile
import time
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

from .mutators import mutate
from .seeds import load_seeds

CRASHERS = Path(__file__).resolve().parent / "crashers"


def enable_addon() -> Any:
    """bpy with the extension enabled as package ``xof`` (as conftest links it)."""
    root = Path(__file__).resolve().parents[2]
    if not any((Path(p) / "xof").exists() for p in sys.path if p):
        link_dir = Path(tempfile.mkdtemp(prefix="xof-pkg-"))
        (link_dir / "xof").symlink_to(root, target_is_directory=True)
        sys.path.insert(0, str(link_dir))
    import bpy  # first: it puts Blender's script modules (addon_utils) on sys.path

    addon_utils = importlib.import_module("addon_utils")
    addon_utils.enable("xof", default_set=True)
    return bpy


def data_names(bpy: Any) -> dict[str, list[str]]:
    """Every ``bpy.data`` collection by its item names (sorted: order is not the point)."""
    out = {}
    for attr in dir(bpy.data):
        value = getattr(bpy.data, attr, None)
        if isinstance(value, bpy.types.bpy_prop_collection):
            out[attr] = sorted(item.name for item in value)
    return out


def scene_state(bpy: Any) -> dict[str, Any]:
    """The settings of the scene an import may change (listed here, not taken from xof)."""
    scene = bpy.context.scene
    render = scene.render
    return {
        "fps": render.fps, "fps_base": render.fps_base, "lock": render.use_lock_interface,
        "start": scene.frame_start, "end": scene.frame_end, "current": scene.frame_current,
        "preview": (scene.use_preview_range, scene.frame_preview_start, scene.frame_preview_end),
    }  # fmt: skip


def unusual_scene(bpy: Any) -> None:
    """Settings no import would choose, so a change the rollback missed shows."""
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = 17, 1.0
    scene.frame_start, scene.frame_end, scene.frame_current = 3, 77, 11


def import_one(bpy: Any, data: bytes, path: Path) -> tuple[str, str]:
    """(status, detail): ``ok``, ``error`` (clean), ``crash`` (importer bug), ``noise`` (a
    numpy RuntimeWarning printed: a value not checked) or ``leak``."""
    path.write_bytes(data)
    before = data_names(bpy)
    settings = scene_state(bpy)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RuntimeWarning)
        try:
            result = bpy.ops.import_scene.x(filepath=str(path))
            message = ""
        except RuntimeError as exc:  # the operator reported an error
            result, message = {"CANCELLED"}, str(exc)
    if "import failed:" in message:
        return "crash", message.strip().splitlines()[-1][:300]
    # numpy's warnings on the console (overflow, NaN) are values the importer did not check
    noise = [w for w in caught if issubclass(w.category, RuntimeWarning)]
    if noise:
        if "FINISHED" in result:
            bpy.ops.wm.read_homefile(use_empty=True)
            unusual_scene(bpy)
        first = noise[0]
        return "noise", f"{Path(first.filename).name}:{first.lineno}: {first.message}"[:300]
    if "FINISHED" in result:
        bpy.ops.wm.read_homefile(use_empty=True)
        unusual_scene(bpy)
        return "ok", ""
    after = data_names(bpy)
    if after != before:
        diff = {k: sorted(set(after[k]) ^ set(before.get(k, []))) for k in after}
        diff = {k: v for k, v in diff.items() if v}
        bpy.ops.wm.read_homefile(use_empty=True)
        unusual_scene(bpy)
        return "leak", f"bpy.data changed: {diff}"[:300]
    now = scene_state(bpy)
    if now != settings:
        changed = {k: (settings[k], now[k]) for k in now if now[k] != settings[k]}
        bpy.ops.wm.read_homefile(use_empty=True)
        unusual_scene(bpy)
        return "leak", f"scene settings changed: {changed}"[:300]
    return "error", message.strip().splitlines()[-1][:120] if message else ""


def campaign(inputs: int, seconds: float, rng_seed: int, folder: Path | None) -> dict[str, Any]:
    bpy = enable_addon()
    bpy.ops.wm.read_homefile(use_empty=True)
    unusual_scene(bpy)
    seeds = load_seeds(40_000)
    rng = random.Random(rng_seed)
    counts: Counter[str] = Counter()
    bad: dict[str, dict[str, Any]] = {}
    start = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="xof-import-fuzz-"))
    done = 0
    while done < inputs and time.perf_counter() - start < seconds:
        seed = rng.choice(seeds)
        data, recipe = mutate(seed, rng, seeds)
        (work / "last-input.x").write_bytes(data)  # what killed the process, if it dies
        status, detail = import_one(bpy, data, work / "input.x")
        counts[status] += 1
        done += 1
        if status in ("crash", "leak", "noise"):
            sig = f"{status}:{detail[:80]}"
            if sig not in bad:
                bad[sig] = {"recipe": recipe, "detail": detail}
                if folder is not None:
                    folder.mkdir(parents=True, exist_ok=True)
                    name = f"import-{status}-{hashlib.sha1(data).hexdigest()[:12]}.x"
                    (folder / name).write_bytes(data)
                    bad[sig]["file"] = name
            print(f"BAD {status} {detail[:160]} <- {recipe}", flush=True)
    wall = time.perf_counter() - start
    return {"inputs": done, "wall_seconds": round(wall, 1),
            "inputs_per_second": round(done / wall, 1), "outcomes": dict(counts),
            "bad": bad}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=1800.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--crashers", type=Path, default=None)
    parser.add_argument("--report", type=Path, default=None)
    args = parser.parse_args(argv)
    result = campaign(args.inputs, args.seconds, args.seed, args.crashers)
    text = json.dumps(result, indent=1)
    if args.report:
        args.report.parent.mkdir(parents=True, exist_ok=True)
        args.report.write_text(text)
    print(text)
    return 1 if result["bad"] else 0


if __name__ == "__main__":
    sys.exit(main())
