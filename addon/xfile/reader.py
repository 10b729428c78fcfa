"""``read()``: bytes or a path in, an :class:`XDocument` out, or one :class:`XFileError`."""

from __future__ import annotations

import contextlib
import mmap
import os
import struct

from .allocation import small_pages
from .binary_tokens import BinaryTokens
from .container import HEADER_SIZE, open_container
from .document import XDocument
from .errors import XFileError
from .parser import Parser
from .references import resolve_references
from .standard_templates import standard_templates
from .templates import TemplateTable
from .text_tokens import TextTokens
from .tokens import TokenSource

_MAP_FROM = 1 << 20  # smaller files: one read() is as cheap as setting up a map
_READ_IN_PLACE = (b"txt ", b"bin ")  # compressed files are decompressed into bytes anyway


def _load(source: object) -> tuple[bytes | mmap.mmap, str | None]:
    """The file's bytes; text and binary files are memory-mapped (no copy, no page zeroing).

    The parse copies what it keeps (numbers, strings; binary lists are viewed in place, then
    copied by the value stream), so the map is closed after it; compressed files are read.
    The price of a map: a file truncated by another program during the read ends the process
    (SIGBUS) instead of failing the parse; set ``_MAP_FROM`` very high to read instead.
    """
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source), None
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        try:
            with open(path, "rb") as handle:
                if os.fstat(handle.fileno()).st_size >= _MAP_FROM:
                    mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
                    if mapped[8:12].lower() in _READ_IN_PLACE:
                        return mapped, str(path)
                    mapped.close()
                return handle.read(), str(path)
        except OSError as exc:
            raise XFileError(f"cannot open: {exc.strerror or exc}", str(path)) from None
    raise TypeError(f"read() wants a path or bytes, not {type(source).__name__}")


def read_document(source: object) -> XDocument:
    raw, path = _load(source)
    with small_pages():
        if not isinstance(raw, mmap.mmap):
            return _read(raw, path)
        try:
            return _read(raw, path)
        finally:
            _close_map(raw)


def _close_map(mapped: mmap.mmap) -> None:
    """Close the map now, or, while an array still views it, when the last view goes.

    Views that outlive the parse: an unknown template's float64 list, an error's traceback.
    """
    with contextlib.suppress(BufferError):
        mapped.close()


def _read(raw: bytes | mmap.mmap, path: str | None) -> XDocument:
    container = open_container(raw, path)
    del raw
    tokens: TokenSource
    if container.binary:
        tokens = BinaryTokens(
            container.data, HEADER_SIZE, path, container.float_bits, container.compressed
        )
    else:
        tokens = TextTokens(container.data, HEADER_SIZE, path)
    table = TemplateTable(standard_templates())
    parser = Parser(tokens, table)
    try:
        objects = parser.parse()
    except XFileError as exc:
        raise exc.located(path) from None
    except (ValueError, IndexError, KeyError, TypeError, OverflowError, struct.error) as exc:
        # a defect of ours on strange input must still be one error type, with the place
        raise XFileError(
            f"cannot parse ({type(exc).__name__}: {exc})", path, tokens.where(tokens.pos)
        ) from exc
    doc = XDocument(
        path=path,
        format=container.format,
        version=container.version,
        float_bits=container.float_bits,
        templates=table.templates,
        declared=parser.declared,
        objects=objects,
        warnings=parser.warnings,
    )
    resolve_references(doc, parser.references)
    return doc
