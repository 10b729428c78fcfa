"""Every input that ever broke the reader is replayed: a document or XFileError, in time.

Files are named ``<what>-<name>.x``: ``crash``/``hang``/``slow`` ones must now pass every
limit; ``memory-numbers-*`` ones broke only the memory limit, inside ``numbers.py`` (fixed);
``memory-*`` ones broke only the memory limit (chains of thousands of tiny template
declarations, plain or in tzip/bzip, some looked up in any case; 256 nested frames; a 44 KB
non-ASCII name, upper-cased through CPython's 12-bytes-a-character scratch) or came within a
few percent of it (memory-5ef7ae7fe0b5: 250 nested objects ending in an error whose traceback
held every level's frame), and must now stay within it with some headroom: under HEADROOM of
the limit, so a small regression shows here before a campaign finds it.
``*-dense-*`` ones (none left) would be made of tiny objects or declarations costing more than
10x their text in Python objects: a known limit of the document model, expected to fail.
``import-*`` files broke the Blender importer and are replayed by ``test_import_fuzz``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .harness import MEMORY_CONSTANT, MEMORY_FACTOR, TIME_LIMIT, run

CRASHERS = sorted((Path(__file__).parent / "crashers").glob("*.x"))
READER = [p for p in CRASHERS if not p.name.startswith("import-")]
HEADROOM = 0.9  # of the memory limit; the worst kept file peaks at ~0.78 of it


@pytest.mark.parametrize("path", READER, ids=lambda p: p.name)
def test_crasher_reads_or_fails_cleanly(path: Path) -> None:
    outcome = run(path.read_bytes(), measure_memory=False)
    assert outcome.status in ("ok", "error"), outcome.detail
    assert outcome.seconds < TIME_LIMIT


@pytest.mark.parametrize("path", READER, ids=lambda p: p.name)
def test_crasher_memory_within_ten_times_its_size(path: Path, request) -> None:
    if "-dense-" in path.name:  # ~0.5 KB of Python objects per 20-byte declaration
        request.applymarker(pytest.mark.xfail(reason="one Python object per tiny declaration"))
    outcome = run(path.read_bytes(), measure_memory=True)
    assert outcome.status in ("ok", "error"), (outcome.status, outcome.peak, outcome.basis)
    limit = MEMORY_FACTOR * outcome.basis + MEMORY_CONSTANT
    assert outcome.peak <= HEADROOM * limit, f"{outcome.peak / limit:.2f} of the limit"


def test_there_are_crashers_to_replay() -> None:
    assert len(READER) >= 3
