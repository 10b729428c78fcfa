"""The files a batch converts, and where each one's output goes.

INPUT arguments are files, folders (searched recursively for ``.x`` in any case) or glob
patterns. The output tree mirrors the input tree: a file found under a folder (or under the
fixed part of a glob) keeps its path relative to it; a file named directly goes to the top.
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass
from pathlib import Path

_MAGIC = frozenset("*?[")


@dataclass(frozen=True)
class Source:
    """One input file and the output path it maps to (both absolute)."""

    path: Path
    relative: Path  # the file's place in the mirrored tree (with the input's suffix)
    output: Path


def _is_x(path: Path) -> bool:
    return path.suffix.lower() == ".x" and path.is_file()


def _walk(folder: Path) -> list[Path]:
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames.sort()
        for name in sorted(filenames):
            candidate = Path(dirpath) / name
            if _is_x(candidate):
                found.append(candidate)
    return found


def _glob_base(pattern: str) -> Path:
    """The leading folders of a glob pattern that hold no wildcard."""
    parts = Path(pattern).parts
    fixed: list[str] = []
    for part in parts[:-1]:
        if _MAGIC & set(part):
            break
        fixed.append(part)
    return Path(*fixed) if fixed else Path(".")


def expand(inputs: list[str]) -> tuple[list[tuple[Path, Path]], list[str]]:
    """``([(file, relative path), ...], [problems])`` for the INPUT arguments, in order.

    A file reached twice is kept once; an argument that names nothing is a problem.
    """
    pairs: list[tuple[Path, Path]] = []
    problems: list[str] = []
    seen: set[Path] = set()

    def add(path: Path, base: Path) -> None:
        resolved = path.resolve()
        if resolved in seen:
            return
        seen.add(resolved)
        pairs.append((resolved, resolved.relative_to(base.resolve())))

    for arg in inputs:
        path = Path(arg)
        if path.is_dir():
            files = _walk(path)
            if not files:
                problems.append(f"{arg}: no .x files in this folder")
            for f in files:
                add(f, path)
        elif path.is_file():
            add(path, path.parent)
        elif _MAGIC & set(arg):
            base = _glob_base(arg)
            matched = sorted(Path(m) for m in glob.glob(arg, recursive=True))
            files = []
            for m in matched:
                files.extend(_walk(m) if m.is_dir() else [m] if _is_x(m) else [])
            if not files:
                problems.append(f"{arg}: the pattern matches no .x file")
            for f in files:
                add(f, base)
        else:
            problems.append(f"{arg}: no such file or folder")
    return pairs, problems


def plan(pairs: list[tuple[Path, Path]], out: Path, suffix: str) -> tuple[list[Source], list[str]]:
    """Map inputs to outputs under ``out``; two inputs that would share an output are a problem
    (the second is left out and named)."""
    sources: list[Source] = []
    problems: list[str] = []
    taken: dict[Path, Path] = {}
    out = out.resolve()
    for path, relative in pairs:
        output = out / relative.with_suffix(suffix)
        key = Path(str(output).lower())  # case-insensitive file systems would collide too
        if key in taken:
            problems.append(f"{path}: its output {output} is also {taken[key]}'s; left out")
            continue
        taken[key] = path
        sources.append(Source(path, relative, output))
    return sources, problems


def up_to_date(source: Source) -> bool:
    """The output exists and is newer than its input (so a resumed run skips it)."""
    try:
        return source.output.stat().st_mtime >= source.path.stat().st_mtime
    except OSError:
        return False
