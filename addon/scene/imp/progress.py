"""Progress for long work (imports, big cloth builds): Blender's progress cursor, the status
bar text where a window shows one, and a console line headless."""

from __future__ import annotations

import sys
import time
from typing import Any

import bpy

#: headless, only imports running longer than this print progress lines
CONSOLE_AFTER_SECONDS = 1.0


class Progress:
    """``step(label)`` advances by one; safe to use with no window manager (tests, scripts).
    ``status``: a workspace whose status bar shows the title and the current step."""

    def __init__(self, total: int, title: str = "xof", wm: Any = None, status: Any = None) -> None:
        self.total = max(int(total), 1)
        self.title = title
        self.done = 0
        self.wm = wm if wm is not None else getattr(bpy.context, "window_manager", None)
        self.started = time.perf_counter()
        self._last_print = 0.0
        self.status = status
        if self.wm is not None:
            self.wm.progress_begin(0, self.total)

    def step(self, label: str = "") -> None:
        self.done = min(self.done + 1, self.total)
        if self.wm is not None:
            self.wm.progress_update(self.done)
        if self.status is not None:
            self.status.status_text_set(f"{self.title}: {label} ({self.done}/{self.total})")
        now = time.perf_counter()
        if (
            bpy.app.background
            and now - self.started > CONSOLE_AFTER_SECONDS
            and now - self._last_print > 1.0
        ):
            self._last_print = now
            print(f"{self.title}: {self.done}/{self.total} {label}", file=sys.stderr, flush=True)

    def end(self) -> None:
        if self.wm is not None:
            self.wm.progress_end()
            self.wm = None
        if self.status is not None:
            self.status.status_text_set(None)  # the status bar's own text again
            self.status = None
