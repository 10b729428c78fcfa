"""The progress display: files done, failures and an ETA.

On a terminal one line is redrawn in place; otherwise (a log, CI) a plain line is printed at
most once a second, and only when something changed or 10 s passed.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO

_WIDTH = 24


def _clock(seconds: float) -> str:
    seconds = max(0, round(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


class Progress:
    """Counts by status, rendered by a ticker thread while the batch runs."""

    def __init__(self, total: int, stream: TextIO | None = None) -> None:
        self.total = total
        self.stream = stream or sys.stdout
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.counts = {"converted": 0, "failed": 0, "crashed": 0, "skipped": 0}
        self.start = time.monotonic()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._last_line = ""
        self._last_time = 0.0
        self._thread = threading.Thread(target=self._tick, daemon=True)

    def __enter__(self) -> Progress:
        self.start = time.monotonic()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._render(final=True)
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()

    def add(self, status: str) -> None:
        with self._lock:
            self.counts[status] = self.counts.get(status, 0) + 1
        if self.tty:
            self._render()

    def line(self) -> str:
        with self._lock:
            c = dict(self.counts)
        done = sum(c.values())
        worked = done - c["skipped"]
        elapsed = time.monotonic() - self.start
        left = self.total - done
        if left == 0:
            eta = "done"
        elif worked:
            eta = "ETA " + _clock(elapsed / worked * left)
        else:
            eta = "ETA ?"
        bad = f"failed {c['failed']} crashed {c['crashed']}"
        skipped = f" skipped {c['skipped']}" if c["skipped"] else ""
        return f"{done}/{self.total} files, {bad}{skipped}, {_clock(elapsed)} {eta}"

    def _render(self, final: bool = False) -> None:
        text = self.line()
        now = time.monotonic()
        if self.tty:
            frac = (sum(self.counts.values()) / self.total) if self.total else 1.0
            filled = round(frac * _WIDTH)
            bar = "#" * filled + "." * (_WIDTH - filled)
            self.stream.write(f"\r[{bar}] {text}\x1b[K")
            self.stream.flush()
            return
        changed = text.split(", ")[:2] != self._last_line.split(", ")[:2]
        if (
            (final and changed)
            or (changed and now - self._last_time >= 1.0)
            or (now - self._last_time >= 10)
        ):
            self.stream.write(f"progress: {text}\n")
            self.stream.flush()
            self._last_line, self._last_time = text, now

    def _tick(self) -> None:
        while not self._stop.wait(1.0):
            self._render()
