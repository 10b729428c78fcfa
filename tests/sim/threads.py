"""How much CPU the process's other threads took: OpenBLAS hands even small matrix
products to a worker thread that then spins on the other core, which the solver's hot
paths avoid (``addon/sim/mesh/affine.py``)."""

from __future__ import annotations

import os
import threading
import time

import pytest

needs_proc = pytest.mark.skipif(
    not os.path.isdir("/proc/self/task"), reason="counts threads' CPU through Linux's /proc"
)


def other_threads_ticks() -> int:
    """CPU clock ticks (user + system) of this process's threads other than this one."""
    this, total = threading.get_native_id(), 0
    for tid in os.listdir("/proc/self/task"):
        if int(tid) != this:
            try:
                with open(f"/proc/self/task/{tid}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
            except OSError:  # the thread ended meanwhile
                continue
            total += int(fields[11]) + int(fields[12])
    return total


def settled_ticks() -> int:
    """``other_threads_ticks`` once a worker woken by earlier work (a test before) has
    stopped spinning."""
    time.sleep(0.5)
    return other_threads_ticks()
