"""Numeric runs of text .X files to arrays, vectorised (placeholder: a simple, correct version).

A numeric run is a stretch of the text made only of numbers and the separators ``,`` ``;``
and white space (``1.0;2.0;3.0;,`` ...). The template-driven parser consumes its values like
a binary FLOAT_LIST, so one call converts a whole vertex array.
"""

from __future__ import annotations

import re

import numpy as np

_TOKEN = re.compile(rb"[^\s,;]+")
_NONFINITE = {b"#IND": float("nan"), b"#QNAN": float("nan"), b"#SNAN": float("nan")}


class NumberSyntaxError(ValueError):
    """A token in a numeric run that is not a number; ``offset`` is its byte offset."""

    def __init__(self, token: bytes, offset: int) -> None:
        super().__init__(f"not a number: {token[:40]!r}")
        self.token = token
        self.offset = offset


def _msvc_float(tok: bytes) -> float | None:
    """MSVC printf's non-finite spellings: ``-1.#IND00``, ``1.#QNAN0``, ``1.#INF00``."""
    if b"#" not in tok:
        return None
    upper = tok.upper()
    if b"#INF" in upper:
        return float("-inf") if upper.startswith(b"-") else float("inf")
    for key, value in _NONFINITE.items():
        if key in upper:
            return value
    return None


_RUN = re.compile(rb"(?:[0-9eE+\-.,;\s]|#(?:IND|QNAN|SNAN|INF))+")


def scan_numbers(data: bytes | bytearray | memoryview, start: int) -> tuple[np.ndarray, int]:
    """The numeric run starting at ``start``: its values (float64, in order) and its end.

    The run is the longest stretch of numbers and separators (``,`` ``;`` white space) from
    ``start``; ``end`` is the offset of the first byte after it (a comment, a brace, a name,
    a string...). A trailing fragment of a following name (``e`` of ``end``) is not part of
    the run. Raises :class:`NumberSyntaxError` with the absolute byte offset of a bad token.
    """
    m = _RUN.match(data, start)
    end = m.end() if m else start
    while end > start and chr(data[end - 1]) in "eE+-.":
        if end < len(data) and (chr(data[end]).isalnum() or chr(data[end]) == "_"):
            end -= 1
        else:
            break
    if end < len(data) and end > start and (chr(data[end]).isalnum() or chr(data[end]) == "_"):
        # a name glued to the run's last token (``1.0abc``): back off to the last separator
        while end > start and chr(data[end - 1]) not in ",; \t\r\n":
            end -= 1
    values: list[float] = []
    for m in _TOKEN.finditer(data, start, end):
        tok = m.group()
        try:
            values.append(float(tok))
        except ValueError:
            special = _msvc_float(tok)
            if special is None:
                raise NumberSyntaxError(tok, m.start()) from None
            values.append(special)
    return np.array(values, dtype=np.float64), end
