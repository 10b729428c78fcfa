"""``read()``: bytes or a path in, an :class:`XDocument` out, or one :class:`XFileError`."""

from __future__ import annotations

import os
import struct
from collections.abc import Callable

from .container.header import HEADER_SIZE, open_container
from .container.mszip import InflateLimit
from .container.source import read_file
from .document import XDocument
from .errors import XFileError
from .parser import Parser
from .references import resolve_references
from .scan.binary_tokens import BinaryTokens
from .scan.codepages import NameDecoder
from .scan.text_tokens import TextTokens
from .scan.tokens import TokenSource
from .standard_templates import standard_templates
from .templates import TemplateTable


def path_of(source: object) -> str | None:
    """The file name of a path source (a bytes path too: undecodable bytes as surrogates),
    None for the file's bytes given directly."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return None
    if isinstance(source, (str, os.PathLike)):
        return os.fsdecode(source)
    raise TypeError(f"read() wants a path or bytes, not {type(source).__name__}")


def load(source: object) -> tuple[bytes, str | None]:
    """The file's bytes and its name (None for bytes given directly)."""
    path = path_of(source)
    if path is None:
        return bytes(source), None  # type: ignore[call-overload]
    return read_file(path), path


def read_document(
    source: object, encoding: str = "auto", limit: InflateLimit | None = None
) -> XDocument:
    decoder = NameDecoder(encoding)  # a bad encoding is the caller's ValueError, not the file's
    path = path_of(source)
    try:
        raw, path = load(source)
        return parse_into_document(raw, path, decoder, limit=limit)
    except MemoryError:
        raise XFileError("not enough memory to read the file", path) from None


def parse_into_document(
    raw: bytes,
    path: str | None,
    decoder: NameDecoder,
    watch: Callable[[TokenSource, Parser], None] | None = None,
    limit: InflateLimit | None = None,
) -> XDocument:
    """The document of a file's bytes; ``watch`` (``strict.check``) sees the tokenizer and
    the parser before the parse; ``limit`` bounds what an MSZIP file may decompress to."""
    container = open_container(raw, path, limit)
    del raw
    tokens: TokenSource
    if container.binary:
        tokens = BinaryTokens(
            container.data, HEADER_SIZE, path, container.float_bits, container.compressed,
            decoder,
        )  # fmt: skip
    else:
        tokens = TextTokens(container.data, HEADER_SIZE, path, decoder)
    table = TemplateTable(standard_templates())
    parser = Parser(tokens, table)
    if watch is not None:
        watch(tokens, parser)
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
        names_encoding=decoder.encoding,
    )
    resolve_references(doc, parser.references)
    return doc
