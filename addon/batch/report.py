"""The end of a batch: the summary table on the terminal and the JSON report.

The report (``--report FILE``) holds the run's settings, totals by status and, per file:
status (converted / failed / crashed / skipped / not run), source, output, seconds, counts
(objects, vertices, bones, actions, keys, shape keys, materials), warnings, the error and,
for a skipped file, the reason. On the terminal every name is escaped (control characters,
undecodable bytes), so a file name cannot act on the terminal.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, TextIO

from ..xfile.errors import printable

STATUSES = ("converted", "failed", "crashed", "skipped", "not run")
UP_TO_DATE = "up to date"  # the reason of a skip that is no news: not listed on the terminal


def say(stream: TextIO, line: str) -> None:
    """Write ``line`` escaped (see :func:`printable`) and in what the stream can encode."""
    text = printable(line)
    encoding = getattr(stream, "encoding", None) or "utf-8"
    text = text.encode(encoding, "backslashreplace").decode(encoding, "replace")
    stream.write(text + "\n")


def totals(files: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    out = {s: {"files": 0, "seconds": 0.0} for s in STATUSES}
    for f in files:
        row = out[f["status"]]
        row["files"] += 1
        row["seconds"] += float(f.get("seconds") or 0.0)
    return out


def summary_table(files: list[dict[str, Any]], wall: float, stream: TextIO) -> None:
    """The table (files and worker seconds by status) and one line per file that failed."""
    rows = totals(files)
    stream.write(f"{'status':<10} {'files':>6} {'seconds':>9}\n")
    for status in STATUSES:
        row = rows[status]
        if row["files"] or status in ("converted", "failed", "crashed", "skipped"):
            stream.write(f"{status:<10} {int(row['files']):>6} {row['seconds']:>9.2f}\n")
    stream.write(f"{'total':<10} {len(files):>6} {wall:>9.2f} (wall)\n")
    for f in files:
        status, source = f["status"], printable(str(f["source"]))
        if status in ("failed", "crashed"):
            error = str(f.get("error"))
            # the importer's errors begin with the file's name (file:line:column): once
            named = error if printable(error).startswith(source) else f"{source}: {error}"
            say(stream, f"{status.upper()}: {named}")
        elif status == "skipped" and f.get("reason") not in (None, UP_TO_DATE):
            say(stream, f"SKIPPED: {source}: {f['reason']}")
    stream.flush()


def write_report(path: Path, document: dict[str, Any]) -> None:
    """Write the JSON report atomically (a half-written report never replaces a whole one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(document, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)
