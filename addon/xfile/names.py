"""Case-insensitive names: ``fold(name)`` is ``name.lower()`` without its scratch buffer.

CPython lowers (and uppers) a non-ASCII string through a scratch buffer of 12 bytes per
character, whatever the result: a 40 KB name with one accented letter costs ~500 KB for an
instant, more than the memory limit of a 40 KB file. Long non-ASCII names are therefore
lowered in pieces, with the same result: only capital sigma's lowering looks at its
neighbours (final or not), looking past case-ignorable characters only, so a name holding one
is cut just after a character of ``[A-Za-z0-9_-]`` (never case-ignorable), and that character
is lowered again at the head of the next piece, as the context it was. A long name with a
sigma and none of those (``ΣΣΣ...``: 2 bytes of UTF-8 each) is lowered whole.
"""

from __future__ import annotations

import re

PIECE = 4096  # characters lowered at a time (~48 KB of scratch)
_SIGMA = "\u03a3"
_NEUTRAL = re.compile(r"[A-Za-z0-9_\-]")


def fold(name: str) -> str:
    """``name.lower()``, in pieces when the name is long and not ASCII (same result)."""
    if len(name) <= PIECE or name.isascii():
        return name.lower()
    if _SIGMA not in name:
        return "".join(name[i : i + PIECE].lower() for i in range(0, len(name), PIECE))
    pieces = []
    start = 0  # the piece starts here; the character before it (if any) is its context
    while len(name) - start > PIECE:
        neutral = _NEUTRAL.search(name, start + PIECE)
        if neutral is None:
            break
        cut = neutral.end()
        pieces.append(_lower_after(name, start, cut))
        start = cut
    pieces.append(_lower_after(name, start, len(name)))
    return "".join(pieces)


def _lower_after(name: str, start: int, end: int) -> str:
    """``name[start:end]`` lowered as inside ``name``: after its context character."""
    if start == 0:
        return name[:end].lower()
    return name[start - 1 : end].lower()[1:]  # the context is ASCII: one character lowered


def is_word(name: str, word: str) -> bool:
    """``name.lower() == word`` for a lower-case ``word``; lowering never shortens a string,
    so a longer name is not lowered at all."""
    return len(name) <= len(word) and name.lower() == word
