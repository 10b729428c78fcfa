"""One input through the reader, judged: a document or XFileError, within time and memory.

Time is measured on a plain run (tracemalloc slows Python-heavy paths several fold); memory
on a second, traced run: the peak of what the read allocated above what was live before.
A hang is cut by SIGALRM (main thread only) and reported like a crash.
"""

from __future__ import annotations

import signal
import struct
import time
import traceback
import tracemalloc
from dataclasses import dataclass

from addon.xfile import XFileError, read, scene_of

TIME_LIMIT = 1.0  # seconds per input
MEMORY_FACTOR = 10  # peak bytes per byte of input ...
MEMORY_CONSTANT = 256 * 1024  # ... plus this
HANG_SECONDS = 10


class Hang(BaseException):
    """Raised by the alarm: a BaseException, so no ``except Exception`` in the reader eats it."""


@dataclass
class Outcome:
    status: str  # ok, error (XFileError), crash, hang, slow, memory
    seconds: float
    peak: int  # bytes allocated by the read above the live baseline
    size: int  # input bytes
    basis: int  # bytes the memory limit is relative to (the decompressed size if larger)
    detail: str = ""

    @property
    def bad(self) -> bool:
        return self.status in ("crash", "hang", "slow", "memory")

    @property
    def ratio(self) -> float:
        return self.peak / max(1, self.basis)


def memory_basis(data: bytes) -> int:
    """Input size; for tzip/bzip the declared decompressed size when the file could hold it
    (a compressed file legitimately expands, up to deflate's ~1000:1)."""
    size = len(data)
    if len(data) >= 20 and data[8:12].lower() in (b"tzip", b"bzip"):
        declared = struct.unpack_from("<I", data, 16)[0]
        if declared <= 1100 * size:
            return max(size, declared)
    return size


def read_all(data: bytes) -> str:
    """What a caller does with a file: parse, build the typed views, count templates."""
    try:
        doc = read(data)
        doc.count_by_template()
        scene_of(doc)
    except XFileError as exc:
        return "error:" + exc.reason[:80]
    return "ok"


def _alarm(signum: int, frame: object) -> None:
    raise Hang()


def crash_signature(exc: BaseException) -> str:
    """Exception type and the innermost frame of ours: one signature per distinct bug."""
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if "/addon/" in f.filename] or frames
    where = f"{ours[-1].filename.rsplit('/', 1)[-1]}:{ours[-1].lineno}" if ours else "?"
    return f"{type(exc).__name__}@{where}"


def run(data: bytes, measure_memory: bool = True) -> Outcome:
    size = len(data)
    basis = memory_basis(data)
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, HANG_SECONDS)
    start = time.perf_counter()
    try:
        result = read_all(data)
    except Hang:
        return Outcome("hang", time.perf_counter() - start, 0, size, basis, "hang")
    except Exception as exc:
        detail = crash_signature(exc) + f": {exc!s:.200}"
        return Outcome("crash", time.perf_counter() - start, 0, size, basis, detail)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    seconds = time.perf_counter() - start
    peak = 0
    if measure_memory:
        started_here = not tracemalloc.is_tracing()
        if started_here:
            tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        read_all(data)
        peak = max(0, tracemalloc.get_traced_memory()[1] - base)
        if started_here:
            tracemalloc.stop()
    status = "ok" if result == "ok" else "error"
    if seconds > TIME_LIMIT:
        status = "slow"
    elif peak > MEMORY_FACTOR * basis + MEMORY_CONSTANT:
        status = "memory"
    return Outcome(status, seconds, peak, size, basis, result)
