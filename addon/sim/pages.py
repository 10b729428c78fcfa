"""Page advice for the build's temporaries.

numpy advises transparent huge pages for arrays of 4 MiB and more; with the common
``defrag=madvise`` kernel setting each such first touch may compact memory synchronously,
which made a third of a 1M-point build's CPU system time. The build's big temporaries are
short-lived, so the springs and the limiter chains are made on small pages; the colour
groups, tethers and pass plans the step works on keep numpy's advice.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
from collections.abc import Callable, Iterator
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


def _switch() -> Callable[[bool], bool] | None:
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


_SWITCH = _switch()


@contextlib.contextmanager
def small_pages() -> Iterator[None]:
    """Inside: numpy advises no huge pages for new arrays; the setting is restored after."""
    switch = _SWITCH
    if switch is None:
        yield
        return
    previous = switch(False)
    try:
        yield
    finally:
        switch(previous)


def on_small_pages(f: Callable[P, R]) -> Callable[P, R]:
    """``f`` run inside ``small_pages``."""

    @functools.wraps(f)
    def wrapped(*args: P.args, **kwargs: P.kwargs) -> R:
        with small_pages():
            return f(*args, **kwargs)

    return wrapped
