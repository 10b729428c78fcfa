"""New arrays whose pages are already in memory, made beside the main thread.

A fresh array of tens of MB costs a page fault per 4 KiB page on its first write (~1.5 us each
here: 18 ms for the 48 MB of a 4M-corner normal read, three times the copy). Blender's bulk
reads (``foreach_get``) hold the GIL, so the faults of their buffers cannot overlap anything;
made ahead in a helper thread (numpy lets go of the GIL while the kernel fills the pages), the
reads into them only copy.
"""

from __future__ import annotations

import mmap
from concurrent.futures import Executor, Future

import numpy as np


def _touch(out: np.ndarray) -> np.ndarray:
    out.view(np.uint8)[:: mmap.PAGESIZE] = 0
    return out


def touched(count: int, dtype: type) -> np.ndarray:
    """``np.empty(count, dtype)`` with a byte of every page written: pages the allocator hands
    back from its caches are in memory already (then this costs ~0.1 ms per 48 MB), fresh
    ones are faulted in here."""
    return _touch(np.empty(count, dtype=dtype))


def touched_ahead(pool: Executor | None, count: int, dtype: type) -> Future[np.ndarray] | None:
    """:func:`touched` with the pages written in ``pool`` (None without one). The array is
    made here, by the calling thread: Blender's allocator reuses its freed blocks for the
    thread that asks (made in the helper thread they were always fresh memory)."""
    return None if pool is None else pool.submit(_touch, np.empty(count, dtype=dtype))
