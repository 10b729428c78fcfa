"""``python -m addon.batch convert INPUT... --to FORMAT --out DIR [options]``.

Exit codes: 0 every file converted (or was already up to date), 1 some file failed or
crashed, 2 nothing was done (bad arguments, an input naming nothing, an output folder that
cannot be made, an import option this version of the importer lacks, no worker could
start), 130 interrupted (files finished so far are kept and reported; a rerun resumes).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from . import staging
from .inputs import expand, plan, up_to_date
from .options import IMPORT_FLAGS, TARGETS, ticks_choice, ticks_keywords
from .progress import Progress
from .report import UP_TO_DATE, say, summary_table, totals, write_report

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m addon.batch", description=(__doc__ or "").split("\n")[0]
    )
    commands = parser.add_subparsers(dest="command", required=True)
    conv = commands.add_parser(
        "convert",
        help="convert .x files to glb, gltf, blend, fbx or x",
        description="Convert .x files (files, folders searched recursively, or glob patterns); "
        "the output tree mirrors the input tree.",
    )
    conv.add_argument("inputs", nargs="+", metavar="INPUT", help="a .x file, a folder or a glob")
    conv.add_argument("--to", required=True, choices=sorted(TARGETS), help="the output format")
    conv.add_argument("--out", required=True, type=Path, help="the output folder")
    conv.add_argument(
        "--workers",
        type=int,
        default=os.cpu_count() or 1,
        help="local worker processes (default: the number of cores)",
    )
    conv.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="a Dask scheduler (tcp://HOST:PORT) to run the tasks on instead",
    )
    conv.add_argument("--report", type=Path, help="write the JSON report here")
    conv.add_argument("--force", action="store_true", help="convert files already up to date")
    conv.add_argument(
        "--timeout",
        type=float,
        default=600.0,
        help="seconds one file may take before its worker is stopped (default 600)",
    )
    conv.add_argument(
        "--bake-cloth",
        type=int,
        metavar="FRAMES",
        help="simulate xof cloth for FRAMES frames and bake it as shape keys",
    )
    conv.add_argument(
        "--x-format",
        choices=("txt", "bin", "tzip", "bzip"),
        default="txt",
        help="with --to x: text, binary, or either MSZIP-compressed (default txt)",
    )
    conv.add_argument(
        "--x-float-bits", choices=("32", "64"), default="32", help="with --to x (default 32)"
    )
    group = conv.add_argument_group("import options (as bpy.ops.import_scene.x takes them)")
    for flag in IMPORT_FLAGS:
        dest = "imp_" + flag.prop
        if flag.kind == "true":
            group.add_argument(
                flag.flag, dest=dest, action="store_true", default=None, help=flag.help
            )
        elif flag.kind == "false":
            group.add_argument(
                flag.flag, dest=dest, action="store_false", default=None, help=flag.help
            )
        else:
            types: dict[str, Callable[[str], Any]] = {
                "float": float, "int": int, "str": str, "ticks": _ticks_type,
            }  # fmt: skip
            group.add_argument(
                flag.flag,
                dest=dest,
                type=types[flag.kind],
                choices=flag.choices or None,
                help=flag.help,
            )
    return parser


def _ticks_type(text: str) -> str:
    try:
        return ticks_choice(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def requested_options(args: argparse.Namespace) -> dict[str, Any]:
    """The import operator properties the command line sets: ``prop -> value``."""
    out: dict[str, Any] = {}
    for flag in IMPORT_FLAGS:
        value = getattr(args, "imp_" + flag.prop)
        if value is None:
            continue
        if flag.kind == "ticks":
            out.update(ticks_keywords(value))
        else:
            out[flag.prop] = value
    return out


def unsupported(requested: dict[str, Any], props: dict[str, Any]) -> list[str]:
    flags = {f.prop: f.flag for f in IMPORT_FLAGS}
    flags["animation_custom_ticks_per_second"] = "--ticks-per-second"
    out: dict[str, str] = {}
    for p in requested:
        if p not in props and flags[p] not in out:
            out[flags[p]] = (
                f"{flags[p]} is not supported by this version of the importer "
                f"(import_scene.x has no property {p!r})"
            )
    return list(out.values())


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def _record(source: Any) -> dict[str, Any]:
    return {
        "source": str(source.path),
        "relative": source.relative.as_posix(),
        "output": str(source.output),
        "status": "not run",
        "seconds": 0.0,
        "counts": {},
        "warnings": [],
        "error": None,
    }


def _left_out(path: str, reason: str) -> dict[str, Any]:
    return {
        "source": path,
        "relative": None,
        "output": None,
        "status": "skipped",
        "reason": reason,
        "seconds": 0.0,
        "counts": {},
        "warnings": [],
        "error": None,
    }


def convert(args: argparse.Namespace) -> int:
    started = time.monotonic()
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    err = sys.stderr
    out: Path = args.out
    found = expand(args.inputs, out)
    if found.problems or not found.pairs:
        for path, reason in found.left_out:
            say(err, f"left out: {path}: {reason}")
        for p in found.problems or ["no input files"]:
            say(err, f"error: {p}")
        return EXIT_USAGE
    if args.workers < 1:
        err.write("error: --workers must be at least 1\n")
        return EXIT_USAGE
    if args.bake_cloth is not None and args.bake_cloth < 1:
        err.write("error: --bake-cloth needs at least 1 frame\n")
        return EXIT_USAGE
    try:
        out.mkdir(parents=True, exist_ok=True)
        if not os.access(out, os.W_OK | os.X_OK):
            raise PermissionError("not writable")
    except OSError as exc:
        say(err, f"error: cannot use the output folder {out}: {exc}")
        return EXIT_USAGE
    notes = list(found.notes)
    removed, foreign = staging.remove_stale(out)
    if removed:
        notes.append(
            f"removed {len(removed)} staging folder(s) that killed runs left in {out}: "
            + ", ".join(str(p.relative_to(out)) for p in removed[:5])
        )
    if foreign:
        notes.append(
            f"left {len(foreign)} staging folder(s) of another host in {out} (their runs may "
            "still be going): " + ", ".join(str(p.relative_to(out)) for p in foreign[:5])
        )
    for note in notes:
        say(err, f"note: {note}")
    requested = requested_options(args)
    sources, collisions = plan(found.pairs, out, TARGETS[args.to][0])
    records = [_record(s) for s in sources]
    for problem in collisions:
        records.append(
            {
                "source": problem.split(": ", 1)[0],
                "relative": None,
                "output": None,
                "status": "failed",
                "error": problem,
                "seconds": 0.0,
                "counts": {},
                "warnings": [],
            }
        )
    records += [_left_out(path, reason) for path, reason in found.left_out]
    tasks: list[dict[str, Any]] = []
    for i, source in enumerate(sources):
        if not args.force and up_to_date(source):
            records[i]["status"] = "skipped"
            records[i]["reason"] = UP_TO_DATE
            continue
        tasks.append(
            {
                "index": i,
                "source": str(source.path),
                "output": str(source.output),
                "to": args.to,
                "import": requested,
                "bake_cloth": args.bake_cloth,
                "x_format": [args.x_format, args.x_float_bits],
            }
        )

    # the largest files first, so that no long file starts last while other workers idle
    tasks.sort(key=lambda t: -_size(t["source"]))
    runner: Any = None
    interrupted = False
    signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        if tasks:
            if args.scheduler:
                from .cluster import DaskRunner

                try:
                    runner = DaskRunner(args.scheduler, args.timeout)
                except (OSError, RuntimeError, TimeoutError, ValueError) as exc:
                    say(err, f"error: cannot reach the Dask scheduler {args.scheduler}: {exc}")
                    return EXIT_USAGE
            else:
                from .pool import LocalPool

                runner = LocalPool(min(args.workers, len(tasks)), args.timeout)
            try:
                ready = runner.probe()
            except (OSError, RuntimeError, TimeoutError) as exc:
                where = f"the Dask cluster at {args.scheduler}" if args.scheduler else "a worker"
                say(err, f"error: {where}: {exc}")
                return EXIT_USAGE
            if not ready.get("ready"):
                say(err, f"error: {ready.get('error')}")
                return EXIT_USAGE
            missing = unsupported(requested, ready["props"])
            if missing:
                for m in missing:
                    say(err, f"error: {m}")
                return EXIT_USAGE
        lock = threading.Lock()
        with Progress(len(records)) as progress:
            for rec in records:
                if rec["status"] in ("skipped", "failed"):  # before the run: counted now
                    progress.add(rec["status"])

            def on_result(task: dict[str, Any], result: dict[str, Any]) -> None:
                with lock:
                    rec = records[task["index"]]
                    rec.update(result)
                    rec["status"] = result.get("status", "crashed")
                progress.add(rec["status"])

            try:
                if tasks:
                    runner.run(tasks, on_result)
            except KeyboardInterrupt:
                interrupted = True
                runner.stop()
    except KeyboardInterrupt:
        interrupted = True
        if runner is not None:
            runner.stop()
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        if runner is not None:
            try:
                runner.close()
            except Exception as exc:  # closing a lost cluster connection is not a failure
                say(err, f"note: closing the workers: {exc}")
    wall = time.monotonic() - started
    summary_table(records, wall, sys.stdout)
    ok = all(r["status"] in ("converted", "skipped") for r in records)
    code = EXIT_INTERRUPTED if interrupted else EXIT_OK if ok else EXIT_FAILED
    if interrupted:
        sys.stdout.write("interrupted: finished files are kept; run again to resume\n")
    if args.report is not None:
        write_report(
            args.report,
            {
                "tool": "xof batch convert",
                "argv": args.argv,
                "to": args.to,
                "out": str(out.resolve()),
                "engine": f"dask {args.scheduler}" if args.scheduler else f"local {args.workers}",
                "import_options": requested,
                "notes": notes,
                "started": started_at,
                "seconds": round(wall, 3),
                "interrupted": interrupted,
                "exit_code": code,
                "totals": totals(records),
                "files": records,
            },
        )
    return code


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    if args.command == "convert":
        return convert(args)
    return EXIT_USAGE
