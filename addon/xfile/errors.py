"""The one exception the format layer raises, so callers catch a single type."""

from __future__ import annotations

import os


def printable(text: str) -> str:
    """``text`` with what a terminal would act on escaped: control characters, other
    non-printable characters and the surrogates that stand for a file name's undecodable
    bytes (``\\x1b``, ``\\u2028``, ``\\xff``). Names and tokens from a file reach messages."""
    if text.isprintable():
        return text
    out = []
    for c in text:
        if c.isprintable():
            out.append(c)
        elif 0xDC80 <= ord(c) <= 0xDCFF:  # os.fsdecode's stand-in for an undecodable byte
            out.append(f"\\x{ord(c) - 0xDC00:02x}")
        else:
            out.append(repr(c)[1:-1])
    return "".join(out)


def shown_path(path: str | bytes | os.PathLike[str] | os.PathLike[bytes]) -> str:
    """A file name as messages show it: decoded like the OS does, undecodable bytes as
    ``\\xNN``, so an error about a file with a non-UTF-8 name can still be printed."""
    return printable(os.fsdecode(path))


class XFileError(Exception):
    """A file that cannot be read, with where and why.

    ``where`` is ``"line:column"`` for text and ``"byte N"`` for binary data (offsets into the
    decompressed stream for compressed files, said so in the message). ``path`` is the file
    name as given (it may hold surrogates for undecodable bytes); ``reason`` and ``str()`` are
    escaped with :func:`printable`, so they print on any terminal.
    """

    def __init__(self, message: str, path: str | None = None, where: str | None = None) -> None:
        self.reason = printable(message)
        self.path = path
        self.where = where
        super().__init__(self._text())

    def _text(self) -> str:
        head = shown_path(self.path) if self.path else "<data>"
        if self.where:
            head = f"{head}:{self.where}"
        return f"{head}: {self.reason}"

    def located(self, path: str | None) -> XFileError:
        """The same error with the file's path filled in (the tokenizers do not know it)."""
        if path and not self.path:
            self.path = path
            self.args = (self._text(),)
        return self
