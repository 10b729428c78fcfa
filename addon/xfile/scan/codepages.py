"""The encoding of names and strings inside a file: UTF-8, Shift-JIS or CP1252.

.X has no encoding field; exporters wrote the system's code page. ``read(..., encoding=)``
takes one of :data:`ENCODINGS`:

- ``"auto"`` (default): UTF-8 when the file's non-ASCII bytes are valid UTF-8, else a legacy
  guess: Shift-JIS when they decode cleanly as Shift-JIS and read as Japanese, else CP1252;
- ``"utf-8"``, ``"shift_jis"`` (decoded as Windows' code page 932, the Shift-JIS Japanese
  exporters wrote), ``"cp1252"``: that encoding, bytes it cannot decode replaced by U+FFFD.

The encoding used is ``XDocument.names_encoding`` (never ``"auto"``). Text files are judged as
a whole before tokenizing (a Shift-JIS character may end in ``[`` or ``{``, so the tokenizer
must know); binary files, whose names have explicit lengths, at their first non-UTF-8 name.
"""

from __future__ import annotations

import re

AUTO, UTF8, SHIFT_JIS, CP1252 = "auto", "utf-8", "shift_jis", "cp1252"
ENCODINGS = (AUTO, UTF8, SHIFT_JIS, CP1252)
# (identifier, label, description) of each, in the shape of a Blender EnumProperty's items
ENCODING_CHOICES = (
    (AUTO, "Auto", "UTF-8 when valid, else Shift-JIS when the names read as Japanese, else CP1252"),
    (UTF8, "UTF-8", "Names are UTF-8"),
    (SHIFT_JIS, "Shift-JIS", "Names are Japanese Shift-JIS (Windows code page 932)"),
    (CP1252, "Windows-1252", "Names are Western European Windows-1252"),
)
_CODECS = {UTF8: "utf-8", SHIFT_JIS: "cp932", CP1252: "cp1252"}
_ALIASES = {"utf8": UTF8, "sjis": SHIFT_JIS, "shift-jis": SHIFT_JIS, "cp932": SHIFT_JIS,
            "windows-1252": CP1252}  # fmt: skip
_NON_ASCII = re.compile(rb"[\x80-\xff]+")
# kana, CJK punctuation and ideographs, full-width forms: what Shift-JIS's two-byte codes hold
_JAPANESE = re.compile("[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff01-\uff60]")
_FOREIGN = re.compile("[^\x00-\x7f\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff01-\uff9f]")
SJIS_LEADS = frozenset([*range(0x81, 0xA0), *range(0xE0, 0xFD)])


def check_encoding(encoding: str) -> str:
    """``encoding`` as one of :data:`ENCODINGS` (a few common aliases accepted)."""
    key = str(encoding).strip().lower()
    key = _ALIASES.get(key, key)
    if key not in ENCODINGS:
        raise ValueError(f"unknown names encoding {encoding!r}; one of {', '.join(ENCODINGS)}")
    return key


def looks_japanese(text: str) -> bool:
    """Some kana or kanji, and nothing that is neither ASCII nor Japanese."""
    return _JAPANESE.search(text) is not None and _FOREIGN.search(text) is None


def guess_legacy(raw: bytes | memoryview) -> str:
    """Shift-JIS when ``raw`` decodes as Shift-JIS and reads as Japanese, else CP1252."""
    try:
        text = str(raw, "cp932")
    except UnicodeDecodeError:
        return CP1252
    return SHIFT_JIS if looks_japanese(text) else CP1252


def guess_text(data: bytes, start: int) -> str:
    """The encoding of a text file's names (``"auto"``): UTF-8 when every stretch of non-ASCII
    bytes is valid UTF-8 (a UTF-8 character has no ASCII byte), else :func:`guess_legacy` of
    the body. ASCII files are settled by one ``isascii``."""
    if data.isascii():
        return UTF8
    try:
        for m in _NON_ASCII.finditer(data, start):
            m.group().decode("utf-8")
    except UnicodeDecodeError:
        return guess_legacy(memoryview(data)[start:])
    return UTF8


class NameDecoder:
    """Bytes of a name or string to ``str`` in the file's encoding; ``encoding`` says which
    was used (in ``"auto"`` it is UTF-8 until a name is not, then the legacy guess)."""

    def __init__(self, requested: str = AUTO) -> None:
        requested = check_encoding(requested)
        self.auto = requested == AUTO
        self.encoding = UTF8 if self.auto else requested
        self._codec = _CODECS[self.encoding]
        self._settled = not self.auto

    def settle(self, encoding: str) -> None:
        """Fix the encoding (a text file judged as a whole)."""
        self.encoding = encoding
        self._codec = _CODECS[encoding]
        self._settled = True

    @property
    def shift_jis(self) -> bool:
        return self.encoding == SHIFT_JIS

    def __call__(self, raw: bytes) -> str:
        if self._settled:
            return raw.decode(self._codec, errors="replace")
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            self.settle(guess_legacy(bytes(raw)))
            return raw.decode(self._codec, errors="replace")


def sjis_end(data: bytes, start: int, stop: int, limit: int) -> int | None:
    """Where a Shift-JIS name that a byte scan ended at ``stop`` really ends: None when the
    byte at ``stop`` is not the trail byte of a two-byte character begun before it, else
    the ``stop`` to search on from (``stop + 1``)."""
    if stop >= limit or not 0x40 <= data[stop] <= 0x7E or data[start:stop].isascii():
        return None
    i = start
    while i < stop:
        i += 2 if data[i] in SJIS_LEADS else 1
    return stop + 1 if i > stop else None
