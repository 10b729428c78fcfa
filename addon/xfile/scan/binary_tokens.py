"""Tokens of a binary .X file: little-endian WORD token ids, lists as numpy views.

INTEGER_LIST and FLOAT_LIST payloads are wrapped with ``np.frombuffer`` (no copy, no Python
work per value); the parser converts them once when a member takes them. Every length is
checked against the bytes left before anything is read or wrapped.
"""

from __future__ import annotations

import functools
import struct
import uuid

import numpy as np

from .codepages import NameDecoder
from .tokens import (
    DECOMPRESSED,
    EOF,
    GUID,
    NAME,
    NUMBERS,
    PUNCT,
    STRING,
    TEMPLATE,
    Token,
    TokenSource,
    binary_place,
)

_U16 = struct.Struct("<H")
_U32 = struct.Struct("<I")

T_NAME, T_STRING, T_INTEGER, T_GUID, T_INTEGER_LIST, T_FLOAT_LIST = 1, 2, 3, 5, 6, 7
T_TEMPLATE = 31
PUNCT_IDS = {
    10: "{", 11: "}", 12: "(", 13: ")", 14: "[", 15: "]",
    16: "<", 17: ">", 18: ".", 19: ",", 20: ";",
}  # fmt: skip
TYPE_IDS = {
    40: "WORD", 41: "DWORD", 42: "FLOAT", 43: "DOUBLE", 44: "CHAR", 45: "UCHAR",
    46: "SWORD", 47: "SDWORD", 48: "VOID", 49: "STRING", 50: "UNICODE", 51: "CSTRING",
    52: "array",
}  # fmt: skip


@functools.lru_cache(maxsize=64)
def _record_layout(
    prefix: int, width: int, values: np.dtype
) -> tuple[np.dtype, tuple[tuple[str, int], ...]]:
    """The bytes of one key record [INTEGER_LIST: prefix + 1][FLOAT_LIST: width] as a
    structured dtype, and the fixed fields' expected values: the ids and counts read as
    four words that overlap the record's fixed bytes (fewer comparisons than one a field)."""
    ints = 4 * (prefix + 1)
    layout = np.dtype(
        {
            "names": ["ints", "values", "head", "head_high", "tail", "tail_high"],
            "formats": [("<u4", (prefix + 1,)), (values, (width,)), "<u4", "<u2", "<u8", "<u2"],
            "offsets": [6, 12 + ints, 0, 4, 2 + ints, 10 + ints],
            "itemsize": 12 + ints + width * values.itemsize,
        }
    )
    count = prefix + 1
    expected = (
        ("head", T_INTEGER_LIST | (count & 0xFFFF) << 16),  # ints id, count's low half
        ("head_high", count >> 16),
        # the last integer (width), the values' id and their count's low half
        ("tail", width | T_FLOAT_LIST << 32 | (width & 0xFFFF) << 48),
        ("tail_high", width >> 16),
    )
    return layout, expected


class BinaryTokens(TokenSource):
    """Tokenizer over binary data (``bin``, or decompressed ``bzip``)."""

    def __init__(
        self,
        data: bytes,
        start: int,
        path: str | None,
        float_bits: int,
        compressed: bool,
        decoder: NameDecoder | None = None,
    ) -> None:
        super().__init__(data, start, path)
        self.decode = decoder or NameDecoder()
        self._float_dtype = np.dtype("<f8") if float_bits == 64 else np.dtype("<f4")
        self._compressed = compressed
        self._names: dict[str, str] = {}  # one string per distinct name, as in text files
        self._suffix = DECOMPRESSED if compressed else ""

    def _need(self, pos: int, size: int, what: str, tok_start: int) -> None:
        if pos + size > self.end:
            raise self.error(
                f"truncated {what}: needs {size} bytes, {max(0, self.end - pos)} left", tok_start
            )

    def _read(self) -> Token:
        data, pos = self.data, self.pos
        if pos + 1 >= self.end:
            # a lone byte where a token would start is the end of the file, as for D3D (a
            # compressed binary file whose body is one "\n" reads as empty)
            return (EOF, None, pos)
        tid = _U16.unpack_from(data, pos)[0]
        p = pos + 2
        if tid in PUNCT_IDS:
            self.pos = p
            return (PUNCT, PUNCT_IDS[tid], pos)
        if tid in (T_INTEGER_LIST, T_FLOAT_LIST):
            self._need(p, 4, "list length", pos)
            count = _U32.unpack_from(data, p)[0]
            dtype = np.dtype("<u4") if tid == T_INTEGER_LIST else self._float_dtype
            self._need(p + 4, count * dtype.itemsize, f"list of {count} values", pos)
            values = np.frombuffer(data, dtype, count, p + 4)
            self.pos = p + 4 + count * dtype.itemsize
            return (NUMBERS, values, pos)
        if tid in (T_NAME, T_STRING):
            self._need(p, 4, "name length" if tid == T_NAME else "string length", pos)
            size = _U32.unpack_from(data, p)[0]
            self._need(p + 4, size, "name" if tid == T_NAME else "string", pos)
            raw = data[p + 4 : p + 4 + size]
            self.pos = p + 4 + size
            if tid == T_STRING:
                return (STRING, self.decode(raw.rstrip(b"\x00")), pos)
            name = self.decode(raw)
            return (NAME, self._names.setdefault(name, name), pos)
        if tid == T_INTEGER:
            self._need(p, 4, "integer", pos)
            self.pos = p + 4
            return (NUMBERS, np.frombuffer(data, "<u4", 1, p), pos)
        if tid == T_GUID:
            self._need(p, 16, "GUID", pos)
            self.pos = p + 16
            return (GUID, uuid.UUID(bytes_le=bytes(data[p : p + 16])), pos)
        if tid == T_TEMPLATE:
            self.pos = p
            return (TEMPLATE, "template", pos)
        if tid in TYPE_IDS:
            self.pos = p
            return (NAME, TYPE_IDS[tid], pos)
        raise self.error(f"unknown binary token id {tid}", pos)

    def fixed_records(
        self, records: int, prefix: int, width: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """Keys as exporters write them, read in one pass: just after the first record's
        INTEGER_LIST (``prefix`` values, then ``width``), its FLOAT_LIST of ``width`` values,
        then ``records - 1`` records of [INTEGER_LIST: prefix values, width][FLOAT_LIST:
        width values]. Returns (the later records' integers ``(records - 1, prefix + 1)``,
        the first record's values ``(width,)``, the later records' ``(records - 1, width)``),
        views of the file; or None, with nothing read, when the bytes are laid out any other
        way (the caller then goes token by token, which also reports any error in place)."""
        if self._pushed or records < 1 or width < 0:
            return None
        data, pos, values = self.data, self.pos, self._float_dtype
        first = 6 + width * values.itemsize
        if pos + first > self.end:
            return None
        if (
            _U16.unpack_from(data, pos)[0] != T_FLOAT_LIST
            or _U32.unpack_from(data, pos + 2)[0] != width
        ):
            return None
        layout, expected = _record_layout(prefix, width, values)
        later = records - 1
        stop = pos + first + later * layout.itemsize
        if stop > self.end:
            return None
        table = np.frombuffer(data, layout, later, pos + first)
        if later and not all(bool((table[name] == want).all()) for name, want in expected):
            return None
        self.pos = stop
        return table["ints"], np.frombuffer(data, values, width, pos + 6), table["values"]

    def reference_name(self) -> str | None:
        return self.header_name()

    def where(self, offset: int) -> str:
        return f"byte {offset}{self._suffix}"

    def place(self, offset: int) -> int:
        return binary_place(offset, self._compressed)

    def value_offset(self, chunk_offset: int, index: int) -> int:
        tid = _U16.unpack_from(self.data, chunk_offset)[0] if chunk_offset + 2 <= self.end else 0
        if tid == T_INTEGER:
            return chunk_offset + 2
        size = 4 if tid == T_INTEGER_LIST else self._float_dtype.itemsize
        return chunk_offset + 6 + index * size
