"""How a read allocates: numpy asks for transparent huge pages on arrays of 4 MiB and more;
with the common ``defrag=madvise`` setting each such fault may compact memory synchronously
(``small_pages`` switches them off for the read only).
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Callable, Iterator

import numpy as np


def _huge_page_switch() -> Callable[[bool], bool] | None:
    """numpy's (private, long-standing) setter of its huge-page advice; None if it is gone."""
    for name in ("numpy._core.multiarray", "numpy.core.multiarray"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        switch = getattr(module, "_set_madvise_hugepage", None)
        if callable(switch):
            return switch
    return None


_HUGE_PAGE_SWITCH = _huge_page_switch()


@contextlib.contextmanager
def small_pages() -> Iterator[None]:
    """Inside: numpy does not advise huge pages for new arrays; the setting is restored after."""
    switch = _HUGE_PAGE_SWITCH
    if switch is None:
        yield
        return
    previous = switch(False)
    try:
        yield
    finally:
        switch(previous)


def huge_pages() -> bool:
    """Whether numpy now advises huge pages for big new arrays (read by setting it back)."""
    switch = _HUGE_PAGE_SWITCH
    if switch is None:
        return False
    state = switch(True)
    switch(state)
    return bool(state)


class Output:
    """A float64 array built from appended chunks of values, the cheaper way for the pages.

    Without huge pages (the reader: ``small_pages``) it grows in place by realloc, by at least
    a quarter: a big block is remapped, not copied, so no second copy is ever alive (peak
    ~1.1-1.25x the result) and no join. With them a fresh array faults 512x fewer pages than
    a grown one, so parts are joined at the end (peak 2x the result).
    """

    def __init__(self) -> None:
        self.in_place = not huge_pages()
        self.array = np.empty(0)
        self.parts: list[np.ndarray] = []
        self.count = 0
        self.held = 0  # bytes held now: the array's capacity, or the parts

    def append(self, values: np.ndarray) -> None:
        need = self.count + len(values)
        if not self.in_place:
            self.parts.append(values)
        else:
            array = self.array
            if need > len(array):  # refcheck=False: no view of the array is ever handed out
                array.resize(max(need, len(array) + len(array) // 4), refcheck=False)
            array[self.count : need] = values
        self.count = need
        self.held = self.array.nbytes if self.in_place else 8 * need

    def result(self) -> np.ndarray:
        """The values; the array is cut in place (realloc: the rest is not copied)."""
        if not self.in_place:
            return np.concatenate(self.parts) if self.parts else np.empty(0)
        if self.count < len(self.array):
            self.array.resize(self.count, refcheck=False)
        return self.array
