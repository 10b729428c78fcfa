"""The one exception the format layer raises, so callers catch a single type."""

from __future__ import annotations


class XFileError(Exception):
    """A file that cannot be read, with where and why.

    ``where`` is ``"line:column"`` for text and ``"byte N"`` for binary data (offsets into the
    decompressed stream for compressed files, said so in the message).
    """

    def __init__(self, message: str, path: str | None = None, where: str | None = None) -> None:
        self.reason = message
        self.path = path
        self.where = where
        super().__init__(self._text())

    def _text(self) -> str:
        head = self.path or "<data>"
        if self.where:
            head = f"{head}:{self.where}"
        return f"{head}: {self.reason}"

    def located(self, path: str | None) -> XFileError:
        """The same error with the file's path filled in (the tokenizers do not know it)."""
        if path and not self.path:
            self.path = path
            self.args = (self._text(),)
        return self
