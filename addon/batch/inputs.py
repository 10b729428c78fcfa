"""The files a batch converts, and where each one's output goes.

INPUT arguments are files, folders (searched recursively for ``.x`` in any case) or glob
patterns. The output tree mirrors the input tree: a file found under a folder (or under the
fixed part of a glob) keeps its path relative to it; a file named directly goes to the top.
Places come from the paths as found, not from where links lead: a link to a file outside the
folder is placed by the link's own path. What is left out is said (``Found.left_out``): links
to folders (not followed), broken links, glob matches that climb out of the pattern's fixed
part with ``..``; the output folder, when it lies inside an input folder, is not searched.
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass, field
from pathlib import Path

_MAGIC = frozenset("*?[")


@dataclass(frozen=True)
class Source:
    """One input file and the output path it maps to (both absolute)."""

    path: Path
    relative: Path  # the file's place in the mirrored tree (with the input's suffix)
    output: Path


@dataclass
class Found:
    """What the INPUT arguments name."""

    pairs: list[tuple[Path, Path]] = field(default_factory=list)  # (file resolved, relative)
    problems: list[str] = field(default_factory=list)  # arguments naming nothing: no run
    left_out: list[tuple[str, str]] = field(default_factory=list)  # (path, why): reported
    notes: list[str] = field(default_factory=list)  # said once on the terminal and the report


def _is_x(path: Path) -> bool:
    return path.suffix.lower() == ".x"


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


class _Search:
    """One expansion: files kept once (by where they really are), the output folder skipped."""

    def __init__(self, out: Path | None) -> None:
        self.found = Found()
        self.out = out.resolve() if out is not None else None
        self.seen: set[Path] = set()
        self.out_noted = False

    def skips_out(self, folder: Path, arg: str) -> bool:
        """``folder`` is the output folder (met while searching the input ``arg``)."""
        if self.out is None or folder.resolve() != self.out:
            return False
        self.note_out(arg)
        return True

    def note_out(self, arg: str) -> None:
        if not self.out_noted:
            self.out_noted = True
            self.found.notes.append(
                f"the output folder {self.out} is inside the input {arg}: not searched"
            )

    def walk(self, folder: Path, arg: str) -> list[Path]:
        """The .x files below ``folder`` (paths through ``folder``, links not resolved)."""
        found: list[Path] = []
        for dirpath, dirnames, filenames in os.walk(folder):
            here = Path(dirpath)
            dirnames.sort()
            for name in list(dirnames):
                sub = here / name
                if self.skips_out(sub, arg):
                    dirnames.remove(name)
                elif sub.is_symlink():  # os.walk does not follow them: said, not silent
                    why = "a link to a folder: not followed (name its target to convert it)"
                    self.found.left_out.append((str(sub), why))
            # a link to a folder is listed with the folders, a broken link with the files
            for name in sorted(filenames):
                candidate = here / name
                if not _is_x(candidate):
                    continue
                if candidate.is_file():
                    found.append(candidate)
                elif candidate.is_symlink():
                    self.found.left_out.append((str(candidate), "a broken link: nothing to read"))
        return found

    def add(self, path: Path, base: Path) -> None:
        """Keep ``path`` at its place below ``base`` (both as given: a link keeps its own
        place), once; a path that climbs out of ``base`` with ``..`` is left out."""
        relative = Path(os.path.relpath(os.path.abspath(path), os.path.abspath(base)))
        if relative.parts[:1] == ("..",):
            self.found.left_out.append(
                (str(path), f"outside {base} (the pattern climbs out with ..): name it directly")
            )
            return
        resolved = path.resolve()
        if resolved in self.seen:
            return
        self.seen.add(resolved)
        self.found.pairs.append((resolved, relative))

    def in_out(self, path: Path, base: Path) -> bool:
        """A glob match inside the output folder, which lies below the pattern's base."""
        if self.out is None:
            return False
        base_abs = base.resolve()
        return (
            base_abs != self.out
            and _inside(self.out, base_abs)
            and _inside(path.resolve(), self.out)
        )


def _glob_base(pattern: str) -> Path:
    """The leading folders of a glob pattern that hold no wildcard."""
    parts = Path(pattern).parts
    fixed: list[str] = []
    for part in parts[:-1]:
        if _MAGIC & set(part):
            break
        fixed.append(part)
    return Path(*fixed) if fixed else Path(".")


def expand(inputs: list[str], out: Path | None = None) -> Found:
    """The files the INPUT arguments name, in order, each with its place in the output tree.

    A file reached twice (also through a link) is kept once; an argument that names nothing
    is a problem; ``out`` (the output folder) is not searched when it lies inside an input.
    """
    search = _Search(out)
    found = search.found
    for arg in inputs:
        path = Path(arg)
        if path.is_dir():
            files = search.walk(path, arg)
            if not files:
                found.problems.append(f"{arg}: no .x files in this folder")
            for f in files:
                search.add(f, path)
        elif path.is_file():
            search.add(path, path.parent)
        elif _MAGIC & set(arg):
            base = _glob_base(arg)
            matched = sorted(Path(m) for m in glob.glob(arg, recursive=True))
            files = []
            for m in matched:
                if search.in_out(m, base):
                    search.note_out(arg)
                elif m.is_dir():
                    files.extend(search.walk(m, arg))
                elif _is_x(m) and m.is_file():
                    files.append(m)
            if not files:
                found.problems.append(f"{arg}: the pattern matches no .x file")
            for f in files:
                search.add(f, base)
        else:
            found.problems.append(f"{arg}: no such file or folder")
    return found


def plan(pairs: list[tuple[Path, Path]], out: Path, suffix: str) -> tuple[list[Source], list[str]]:
    """Map inputs to outputs under ``out``; two inputs that would share an output are a problem
    (the second is left out and named), and so is an output that would replace its input."""
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
        if output.resolve() == path:
            problems.append(f"{path}: its output would replace it; left out")
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
