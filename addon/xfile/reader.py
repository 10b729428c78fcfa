"""``read()``: bytes or a path in, an :class:`XDocument` out, or one :class:`XFileError`."""

from __future__ import annotations

import os
import struct

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


def _load(source: object) -> tuple[bytes, str | None]:
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source), None
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        try:
            with open(path, "rb") as handle:
                return handle.read(), str(path)
        except OSError as exc:
            raise XFileError(f"cannot open: {exc.strerror or exc}", str(path)) from None
    raise TypeError(f"read() wants a path or bytes, not {type(source).__name__}")


def read_document(source: object) -> XDocument:
    raw, path = _load(source)
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
