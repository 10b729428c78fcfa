"""A document as binary tokens: little-endian WORD token ids, numbers as lists.

Consecutive values of one kind share one INTEGER_LIST or FLOAT_LIST token, across member
boundaries (a Mesh is ``[nVertices]``, every coordinate, ``[nFaces, faces...]``), the way
D3DX writes them; arrays go out with ``tobytes``. A STRING token is followed by a ``;``
token, as in real files (readers skip two bytes after the string).
"""

from __future__ import annotations

import itertools
import struct
from typing import Any

import numpy as np

from ..document import Ragged, XDocument, XObject, XReference
from ..errors import XFileError
from ..scan.binary_tokens import (
    PUNCT_IDS,
    T_FLOAT_LIST,
    T_GUID,
    T_INTEGER_LIST,
    T_NAME,
    T_STRING,
    T_TEMPLATE,
    TYPE_IDS,
)
from ..templates import FLOAT, INT, OPEN, RESTRICTED, STR, Layout, Template, TemplateTable
from .declarations import declarations
from .record_form import record_items

_PUNCT = {c: i for i, c in PUNCT_IDS.items()}
_TYPES = {name: i for i, name in TYPE_IDS.items()}
_T_INTEGER = 3
_INT, _FLOAT, _STR = "i", "f", "s"


class TokenWriter:
    """Appends tokens to a list of byte chunks; numeric values wait in a run until the kind
    changes, then leave as one list token. Big arrays are chunks themselves (buffers written
    as they are: no concatenation of a run, no copy when the dtype already matches)."""

    def __init__(self, float_bits: int) -> None:
        self.chunks: list[bytes | memoryview] = []
        self.float_dtype = np.dtype("<f8") if float_bits == 64 else np.dtype("<f4")
        self._run_kind: str | None = None
        self._run: list[np.ndarray] = []

    def _flush(self) -> None:
        if self._run_kind is None:
            return
        integer = self._run_kind == _INT
        token = T_INTEGER_LIST if integer else T_FLOAT_LIST
        self.chunks.append(struct.pack("<HI", token, sum(v.size for v in self._run)))
        for values in self._run:
            self.chunks.append((_words(values) if integer else self._floats(values)).data)
        self._run_kind = None
        self._run = []

    def _floats(self, values: np.ndarray) -> np.ndarray:
        if values.dtype.kind != "f":
            values = values.astype(np.float64)
        with np.errstate(over="ignore"):  # past float32: inf, as the exporter says it writes
            return np.ascontiguousarray(values.astype(self.float_dtype, copy=False))

    def numbers(self, values: Any, integer: bool) -> None:
        arr = np.asarray(values).reshape(-1)
        if arr.size == 0:
            return
        kind = _INT if integer else _FLOAT
        if kind != self._run_kind:
            self._flush()
            self._run_kind = kind
        self._run.append(arr)

    def punct(self, char: str) -> None:
        self._flush()
        self.chunks.append(struct.pack("<H", _PUNCT[char]))

    def name(self, text: str) -> None:
        self._flush()
        data = text.encode("utf-8")
        self.chunks.append(struct.pack("<HI", T_NAME, len(data)) + data)

    def string(self, text: str) -> None:
        self._flush()
        data = str(text).encode("utf-8")
        self.chunks.append(struct.pack("<HI", T_STRING, len(data)) + data)
        self.chunks.append(struct.pack("<H", _PUNCT[";"]))

    def integer(self, value: int) -> None:
        self._flush()
        self.chunks.append(struct.pack("<HI", _T_INTEGER, int(value)))

    def guid(self, guid: Any) -> None:
        self._flush()
        self.chunks.append(struct.pack("<H", T_GUID) + guid.bytes_le)

    def raw_word(self, token: int) -> None:
        self._flush()
        self.chunks.append(struct.pack("<H", token))

    def type_name(self, type_name: str) -> None:
        token = _TYPES.get(type_name.upper()) if type_name.upper() != "ARRAY" else None
        if token is not None:
            self.raw_word(token)
        else:
            self.name(type_name)

    def data(self) -> bytes:
        self._flush()
        return b"".join(self.chunks)

    def parts(self) -> list[bytes | memoryview]:
        """The chunks, for writing to a file without joining them first."""
        self._flush()
        return self.chunks


def _words(values: np.ndarray) -> np.ndarray:
    """Integers as little-endian DWORDs (wrapping like a C cast; int32 bits are the same)."""
    if values.dtype in (np.dtype("<i4"), np.dtype("<u4")):
        return np.ascontiguousarray(values).view("<u4")
    return np.asarray(values, dtype=np.int64).astype("<u4")


class BinaryEncoder:
    def __init__(self, doc: XDocument, float_bits: int) -> None:
        self.table = TemplateTable(doc.templates)
        self.out = TokenWriter(float_bits)

    def members(self, layout: Layout, values: dict[str, Any], where: str) -> None:
        for m in layout.members:
            if m.name not in values:
                raise XFileError(f"{where}: member {m.label} has no value")
            self.member(m.kind, m.dims, m.sub, values[m.name], m.label)

    def member(self, kind: int, dims: Any, sub: Layout | None, value: Any, label: str) -> None:
        out = self.out
        if kind in (INT, FLOAT):
            out.numbers(value, kind == INT)
            return
        if kind == STR:
            for text in [value] if dims is None else value:
                out.string(text)
            return
        assert sub is not None
        if dims is None:
            self.members(sub, value, label)
            return
        value = record_items(value, sub) or value
        if isinstance(value, Ragged):
            out.numbers(value.flat, sub.ragged_int)
        elif isinstance(value, np.ndarray) and sub.fixed_leaves:
            self.fixed_rows(sub, value)
        else:
            for item in value:
                self.members(sub, item, label)

    def fixed_rows(self, sub: Layout, rows: np.ndarray) -> None:
        """Rows of a fixed struct; mixed int/float leaves (IndexedColor) split per leaf kind."""
        if sub.all_int or not any(_leaf_kinds(sub)):
            self.out.numbers(rows, sub.all_int)
            return
        kinds = _leaf_kinds(sub)
        table = np.asarray(rows).reshape(-1, len(kinds))
        # runs of equal kind within one row; rows alternate between them
        bounds = [0] + [i for i in range(1, len(kinds)) if kinds[i] != kinds[i - 1]] + [len(kinds)]
        for row in table:
            for a, b in itertools.pairwise(bounds):
                self.out.numbers(row[a:b], kinds[a])

    def obj(self, root: XObject) -> None:
        """``root`` and its subtree; nested objects wait on a list, not on Python's stack (a
        chain as deep as the reader reads)."""
        out = self.out
        todo: list[XObject | XReference | None] = [root]  # None: close the innermost open
        while todo:
            obj = todo.pop()
            if obj is None:
                out.punct("}")
                continue
            if isinstance(obj, XReference):
                self.reference(obj)
                continue
            out.name(obj.template)
            if obj.name:
                out.name(obj.name)
            out.punct("{")
            if obj.guid is not None:
                out.guid(obj.guid)
            layout = self.table.layout(obj.template)
            if layout is not None:
                self.members(layout, obj.members, obj.where or obj.template)
            else:
                for value in obj.members.get("_values", []):
                    if isinstance(value, str):
                        out.string(value)
                    else:
                        out.numbers(value, False)
            todo.append(None)
            todo.extend(reversed(obj.children))

    def reference(self, ref: XReference) -> None:
        self.out.punct("{")
        if ref.name:
            self.out.name(ref.name)
        if ref.guid is not None:
            self.out.guid(ref.guid)
        self.out.punct("}")

    def template(self, template: Template) -> None:
        out = self.out
        out.raw_word(T_TEMPLATE)
        out.name(template.name)
        out.punct("{")
        if template.guid is not None:
            out.guid(template.guid)
        for m in template.members:
            if m.dims is not None:
                out.raw_word(_TYPES["array"])
            out.type_name(m.type)
            if not (m.name.startswith("_") and m.name[1:].isdigit()):
                out.name(m.name)
            for d in m.dims or ():
                out.punct("[")
                if isinstance(d, int):
                    out.integer(d)
                else:
                    out.name(d)
                out.punct("]")
            out.punct(";")
        if template.restriction == OPEN:
            out.punct("[")
            for _ in range(3):
                out.punct(".")
            out.punct("]")
        elif template.restriction == RESTRICTED:
            out.punct("[")
            for i, (name, guid) in enumerate(template.allowed):
                if i:
                    out.punct(",")
                out.name(name)
                if guid is not None:
                    out.guid(guid)
            out.punct("]")
        out.punct("}")


def _leaf_kinds(layout: Layout) -> list[bool]:
    """True for integer leaves of one element of a fixed-size struct, in order."""
    from .text_encoder import leaf_pattern

    return [k == INT for k, _ in leaf_pattern(layout)]


def encode_binary(doc: XDocument, float_bits: int, head: bytes = b"") -> bytes:
    """The body of a binary file (everything after the 16-byte header), after ``head`` (the
    header itself, so a big file is not copied once more to prepend it)."""
    return b"".join(binary_parts(doc, float_bits, head))


def binary_parts(doc: XDocument, float_bits: int, head: bytes = b"") -> list[bytes | memoryview]:
    """:func:`encode_binary` in pieces (bytes and arrays), for writing to a file as they are."""
    encoder = BinaryEncoder(doc, float_bits)
    encoder.out.chunks.append(head)
    for template in declarations(doc):
        encoder.template(template)
    for item in doc.objects:
        if isinstance(item, XReference):
            encoder.reference(item)
        else:
            encoder.obj(item)
    return encoder.out.parts()
