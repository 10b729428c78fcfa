"""Assimp (Debian's assimp-utils) reads what xof writes, with the counts it reads from the
original file. Skipped when the tool is not installed."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from addon.xfile import read
from addon.xfile.writer import write

ASSIMP = shutil.which("assimp")
COUNTS = re.compile(r"(Meshes|Bones|Animations|Animation Channels):\s+(\d+)")

pytestmark = pytest.mark.skipif(
    ASSIMP is None, reason="assimp (assimp-utils) not installed: `make reference-readers`"
)


def assimp_counts(path: Path, raw: bool = False) -> dict[str, int] | None:
    """Mesh, bone and animation counts as ``assimp info`` reports them; None if it fails.
    ``raw``: without post-processing (which splits and joins meshes by vertex format)."""
    assert ASSIMP is not None
    command = [ASSIMP, "info", str(path)] + (["-r"] if raw else [])  # 5.2: file before -r
    run = subprocess.run(command, capture_output=True, text=True, timeout=120)
    if run.returncode != 0:
        return None
    return {k: int(v) for k, v in COUNTS.findall(run.stdout)}


@pytest.mark.corpus
@pytest.mark.parametrize("fmt", ["txt", "bin", "tzip", "bzip"])
def test_assimp_reads_every_written_corpus_file(corpus, tmp_path: Path, fmt: str) -> None:  # type: ignore[no-untyped-def]
    checked = 0
    for path in sorted(p for p in corpus.iterdir() if p.suffix.lower() == ".x"):
        expected = assimp_counts(path)
        if expected is None:
            continue  # assimp cannot read the original either (the corrupt sample)
        out = tmp_path / f"{path.stem}.{fmt}.x"
        out.write_bytes(write(read(path), fmt, 32))
        assert assimp_counts(out) == expected, path.name
        checked += 1
    assert checked >= 5
