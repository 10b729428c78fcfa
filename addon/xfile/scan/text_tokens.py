"""Tokens of a text .X file. A numeric run becomes NUMBERS tokens holding all its values.

Numbers are the bulk of a file, so a run like ``1.0;2.0;3.0;, ...`` goes to
``numbers.scan_number_parts`` in one call (vectorised) instead of being split here value by
value; a long run comes back as several consecutive tokens, one per converted stretch.
Line and column are computed from the byte offset only when a place is reported.
"""

from __future__ import annotations

import re
import uuid

import numpy as np

from .codepages import NameDecoder, guess_text, sjis_end
from .numbers import NumberSyntaxError, scan_number_parts
from .tokens import (
    EOF,
    GUID,
    NAME,
    NUMBERS,
    PLACE_SHIFT,
    PUNCT,
    STRING,
    TEMPLATE,
    Token,
    TokenSource,
)

_SKIP = re.compile(rb"(?:[\s\x00\x1a]+|//[^\r\n]*|#[^\r\n]*)*")
_NAME = re.compile(rb"[A-Za-z_\x80-\xff][A-Za-z0-9_\-.\x80-\xff]*")
# object names and reference names: anything up to white space or structure (``1Body`` too);
# found by searching for where they stop: a repeated group would cost ~120 bytes per byte
_LOOSE_NAME_STOP = re.compile(rb"[\s{}<>;,\"\[\]]|//")
_NAME_TAIL = re.compile(rb"[A-Za-z0-9_\-.\x80-\xff]*")
_GUID = re.compile(
    rb"<\s*([0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12})\s*>"
)
_VALUE_TOKEN = re.compile(rb"[^\s,;]+")
_NUMBER_START = frozenset(b"0123456789+-.")
_DIGITS = frozenset(b"0123456789")
_PUNCT = {ord(c): c for c in "{}[]()<>,;."}
_NO_VALUES = np.empty(0)


class TextTokens(TokenSource):
    """Tokenizer over the bytes of a text file (or decompressed ``tzip`` data)."""

    def __init__(
        self, data: bytes, start: int, path: str | None, decoder: NameDecoder | None = None
    ) -> None:
        super().__init__(data, start, path)
        self.decode = decoder or NameDecoder()
        if self.decode.auto:
            self.decode.settle(guess_text(data, start))
        self._sjis = self.decode.shift_jis  # two-byte characters may end in ``[`` ``{``...
        self._newline = b"\n" if data.find(b"\n") >= 0 else b"\r"
        self._line_cache = (0, 1)  # (offset, line number at that offset)
        self._names: dict[str, str] = {}
        self._parts: set[int] = set()  # offsets of the pushed parts of the last long run

    def _skip(self) -> int:
        m = _SKIP.match(self.data, self.pos)
        pos = m.end() if m else self.pos
        self.pos = pos
        return pos

    def _read(self) -> Token:
        data = self.data
        pos = self._skip()
        if pos >= self.end:
            return (EOF, None, pos)
        c = data[pos]
        if c in _NUMBER_START and (c != 0x2E or (pos + 1 < self.end and data[pos + 1] in _DIGITS)):
            try:
                parts, end = scan_number_parts(data, pos)
            except NumberSyntaxError as exc:
                raise self.error(f"not a number: {exc.token[:40]!r}", exc.offset) from None
            if end <= pos:
                raise self.error(f"unexpected character {chr(c)!r}", pos)
            self.pos = end
            if not parts:
                return (NUMBERS, _NO_VALUES, pos)
            # a long run comes as consecutive NUMBERS tokens, one a converted stretch
            self._parts = {at for at, _ in parts[1:]}
            self._pushed.extend((NUMBERS, values, at) for at, values in reversed(parts[1:]))
            return (NUMBERS, parts[0][1], parts[0][0])
        if c == 0x22:  # '"'
            end = data.find(b'"', pos + 1)
            if end < 0:
                raise self.error("unterminated string", pos)
            self.pos = end + 1
            return (STRING, self.decode(data[pos + 1 : end]), pos)
        if c == 0x3C:  # '<'
            m = _GUID.match(data, pos)
            if m:
                self.pos = m.end()
                return (GUID, uuid.UUID(m.group(1).decode("ascii")), pos)
        punct = _PUNCT.get(c)
        if punct is not None:
            self.pos = pos + 1
            return (PUNCT, punct, pos)
        m = _NAME.match(data, pos)
        if m:
            end = self._sjis_stop(pos, m.end(), _NAME_TAIL) if self._sjis else m.end()
            self.pos = end
            name = self.decode(data[pos:end])
            if len(name) == 8 and name.lower() == "template":
                return (TEMPLATE, name, pos)
            # one string per distinct name: template names recur as member types and object
            # templates, thousands of times in a hostile file
            return (NAME, self._names.setdefault(name, name), pos)
        raise self.error(f"unexpected character {chr(c)!r}", pos)

    def drop_run_parts(self) -> int:
        dropped = 0
        pushed = self._pushed
        while pushed and pushed[-1][0] == NUMBERS and pushed[-1][2] in self._parts:
            dropped += len(pushed.pop()[1])
        return dropped

    def header_name(self) -> str | None:
        if self._pushed:
            return super().header_name()
        pos = self._skip()
        stop = _LOOSE_NAME_STOP.search(self.data, pos)
        end = stop.start() if stop else self.end
        if self._sjis:
            end = self._sjis_stop(pos, end, _LOOSE_NAME_STOP)
        if end == pos:
            return None
        self.pos = end
        return self.decode(self.data[pos:end])

    def _sjis_stop(self, start: int, stop: int, tail: re.Pattern[bytes]) -> int:
        """The end of a Shift-JIS name whose byte scan stopped at ``stop``: past any stop
        byte that is the second byte of a two-byte character, then on to the next stop."""
        data = self.data
        while True:
            after = sjis_end(data, start, stop, self.end)
            if after is None:
                return stop
            start = after
            if tail is _LOOSE_NAME_STOP:
                m = tail.search(data, after)
                stop = m.start() if m else self.end
            else:
                m2 = tail.match(data, after)
                stop = m2.end() if m2 else after

    def reference_name(self) -> str | None:
        """A name inside ``{ ... }`` (reference), as loose as object names."""
        return self.header_name()

    # -- places ------------------------------------------------------------------------------
    def line_of(self, offset: int) -> int:
        """1-based line of ``offset``; incremental so reporting objects in order stays O(n)."""
        last_off, last_line = self._line_cache
        if offset < last_off:
            last_off, last_line = 0, 1
        line = last_line + self.data.count(self._newline, last_off, offset)
        self._line_cache = (offset, line)
        return line

    def _line_column(self, offset: int) -> tuple[int, int]:
        offset = max(0, min(offset, self.end))
        line = self.line_of(offset)
        # only the line-end byte in use: a search for the other one would scan to the start
        start = self.data.rfind(self._newline, 0, offset) + 1
        return line, offset - start + 1

    def where(self, offset: int) -> str:
        line, column = self._line_column(offset)
        return f"{line}:{column}"

    def place(self, offset: int) -> int | str:
        """``line << PLACE_SHIFT | column`` (``place_text`` gives "line:column" back)."""
        line, column = self._line_column(offset)
        if column >> PLACE_SHIFT:  # a line longer than the packing holds: keep the text
            return f"{line}:{column}"
        return line << PLACE_SHIFT | column

    def value_offset(self, chunk_offset: int, index: int) -> int:
        for i, m in enumerate(_VALUE_TOKEN.finditer(self.data, chunk_offset)):
            if i == index:
                return m.start()
        return chunk_offset
