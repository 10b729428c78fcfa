"""The constraint pass's working copy of the state, where big groups scatter by gathering.

Writing a colour group's ``2g`` solved ends back with ``points[ends] = solved`` costs ~1.6 ns
an item in numpy, ``np.take`` ~0.8 ns an item (complex128 items, measured at 10k points). A
colour group of a quad grid touches almost every point (``2g ~ N``), so building the whole new
state with one take through an inverse index (each point's own slot, or the slot of its solved
end in a tail appended after the state) costs half the scatter. A take cannot write over its
own source, so the state alternates between two buffers: copied in once per pass, out once.
"""

from __future__ import annotations

import numpy as np

# 2g / N from which the inverse take beats the scatter (N items taken vs 2g items scattered)
INVERSE_MIN_FRACTION = 0.5


def inverse_index(ends: np.ndarray, point_count: int) -> np.ndarray | None:
    """Where each point's new value is in ``state + tail``, or None if a scatter is cheaper.

    ``ends`` must not repeat a point (a colour group's ends never do).
    """
    if ends.size < INVERSE_MIN_FRACTION * point_count:
        return None
    inverse = np.arange(point_count, dtype=np.intp)
    inverse[ends] = point_count + np.arange(ends.size, dtype=np.intp)
    return inverse


class WorkState:
    """Two ``(N + tail)`` complex128 buffers; ``points`` is the current state (a view)."""

    def __init__(self, point_count: int, largest_tail: int) -> None:
        self.n = point_count
        size = point_count + largest_tail
        self._buffers = (np.zeros(size, np.complex128), np.zeros(size, np.complex128))
        self._current = 0

    @property
    def points(self) -> np.ndarray:
        return self._buffers[self._current][: self.n]

    def tail(self, count: int) -> np.ndarray:
        """Where a group writes its ``count`` solved ends before ``permute``."""
        return self._buffers[self._current][self.n : self.n + count]

    def load(self, points: np.ndarray) -> None:
        np.copyto(self.points, points)

    def store(self, points: np.ndarray) -> None:
        np.copyto(points, self.points)

    def permute(self, inverse: np.ndarray) -> None:
        """The new state: every point from its own slot or from the tail (``inverse_index``)."""
        source = self._buffers[self._current]
        self._current ^= 1
        np.take(source, inverse, out=self._buffers[self._current][: self.n], mode="clip")
