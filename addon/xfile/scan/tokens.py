"""Token kinds shared by the text and binary tokenizers, and the base both build on.

A token is a plain tuple ``(kind, value, offset)``: cheap to make, and the parser only ever
looks at the kind and the value. ``offset`` is a byte offset in the (decompressed) stream; it
becomes "line:column" or "byte N" only when an error or an object's place is reported.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from ..errors import XFileError

EOF, NAME, STRING, GUID, NUMBERS, PUNCT, TEMPLATE = range(7)

Token = tuple[int, Any, int]

KIND_NAMES = {
    EOF: "the end of the file",
    NAME: "a name",
    STRING: "a string",
    GUID: "a GUID",
    NUMBERS: "a number",
    PUNCT: "punctuation",
    TEMPLATE: "'template'",
}


def describe(tok: Token) -> str:
    """A token as an error message shows it: ``'}'``, ``name 'Frame'``, ``a number``."""
    kind, value = tok[0], tok[1]
    if kind == PUNCT:
        return repr(value)
    if kind == NAME:
        return f"name {value!r}"
    if kind == STRING:
        return f"string {value[:40]!r}"
    return KIND_NAMES.get(kind, "?")


PLACE_SHIFT = 40  # a packed text place: line << PLACE_SHIFT | column


DECOMPRESSED = " of the decompressed data"  # said of byte offsets in tzip/bzip files


def binary_place(offset: int, compressed: bool) -> int:
    """A byte offset packed as a negative int (text places are non-negative)."""
    return ~(offset << 1 | int(compressed))


def place_text(place: int | str) -> str:
    """A place kept by ``TokenSource.place`` as ``where`` gives it: "line:column" or as is.

    Kept per declaration, a packed int is smaller than its "line:column" or "byte N" text.
    """
    if isinstance(place, str):
        return place
    if place < 0:
        packed = ~place
        return f"byte {packed >> 1}{DECOMPRESSED if packed & 1 else ''}"
    return f"{place >> PLACE_SHIFT}:{place & ((1 << PLACE_SHIFT) - 1)}"


class TokenSource:
    """What the parser needs from a tokenizer; subclasses implement ``_read`` and places."""

    def __init__(self, data: bytes, start: int, path: str | None) -> None:
        self.data = data
        self.pos = start
        self.end = len(data)
        self.path = path
        self._pushed: list[Token] = []

    # -- reading -------------------------------------------------------------------------
    def next(self) -> Token:
        if self._pushed:
            return self._pushed.pop()
        return self._read()

    def push(self, tok: Token) -> None:
        """Give a token back; the next ``next()`` returns it again."""
        self._pushed.append(tok)

    def _read(self) -> Token:  # pragma: no cover - abstract
        raise NotImplementedError

    def header_name(self) -> str | None:
        """The optional object name between a template name and ``{``."""
        tok = self.next()
        if tok[0] == NAME:
            return str(tok[1])
        self.push(tok)
        return None

    def remaining(self) -> int:
        """Bytes not yet tokenized: no count can ask for more values than this."""
        pushed = sum(len(t[1]) for t in self._pushed if t[0] == NUMBERS)
        return max(0, self.end - self.pos) + pushed

    def drop_run_parts(self) -> int:
        """Drop the parts still to come of a numeric run split into several tokens (text);
        returns how many values they held."""
        return 0

    def fixed_records(self, records: int, prefix: int, width: int) -> Any:
        """Binary files only (see ``BinaryTokens``); other sources have no bulk layout."""
        return None

    def optional_guid(self) -> UUID | None:
        """The next token's GUID when it is one (object bodies, templates, references, and
        restrictions may carry one); anything else is left for the caller."""
        tok = self.next()
        if tok[0] == GUID:
            return tok[1]
        self.push(tok)
        return None

    # -- places ------------------------------------------------------------------------------
    def where(self, offset: int) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def place(self, offset: int) -> int | str:
        """``where(offset)`` in a form that may be smaller to keep (see :func:`place_text`)."""
        return self.where(offset)

    def value_offset(self, chunk_offset: int, index: int) -> int:
        """The byte offset of value ``index`` of the numeric token at ``chunk_offset``."""
        return chunk_offset

    def error(self, message: str, offset: int) -> XFileError:
        return XFileError(message, self.path, self.where(offset))

    def expect_punct(self, char: str, context: str) -> Token:
        tok = self.next()
        if tok[0] != PUNCT or tok[1] != char:
            raise self.error(f"expected {char!r} {context}, found {describe(tok)}", tok[2])
        return tok
