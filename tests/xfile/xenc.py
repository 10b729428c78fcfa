"""Fixture encoders for the tests: binary .X tokens and MSZIP, written from the format notes.

Deliberately independent of the product code (no import from ``addon``), so a
misunderstanding of the format cannot hide by being shared by the writer and the reader.
"""

from __future__ import annotations

import struct
import uuid
import zlib
from collections.abc import Iterable

PUNCT = {"{": 10, "}": 11, "(": 12, ")": 13, "[": 14, "]": 15,
         "<": 16, ">": 17, ".": 18, ",": 19, ";": 20}  # fmt: skip
TYPES = {"WORD": 40, "DWORD": 41, "FLOAT": 42, "DOUBLE": 43, "CHAR": 44, "UCHAR": 45,
         "SWORD": 46, "SDWORD": 47, "VOID": 48, "STRING": 49, "UNICODE": 50, "CSTRING": 51,
         "array": 52}  # fmt: skip


def word(v: int) -> bytes:
    return struct.pack("<H", v)


def dword(v: int) -> bytes:
    return struct.pack("<I", v)


class Bin:
    """Builds binary token streams: ``Bin().name("Mesh").p("{").ints([3]).p("}")``."""

    def __init__(self, float_bits: int = 32) -> None:
        self.parts: list[bytes] = []
        self.float_bits = float_bits

    def raw(self, data: bytes) -> Bin:
        self.parts.append(data)
        return self

    def name(self, text: str) -> Bin:
        b = text.encode()
        return self.raw(word(1) + dword(len(b)) + b)

    def string(self, text: str, terminator: str = ";") -> Bin:
        b = text.encode()
        return self.raw(word(2) + dword(len(b)) + b + word(PUNCT[terminator]))

    def integer(self, v: int) -> Bin:
        return self.raw(word(3) + dword(v))

    def guid(self, g: str) -> Bin:
        return self.raw(word(5) + uuid.UUID(g).bytes_le)

    def ints(self, values: Iterable[int]) -> Bin:
        vals = list(values)
        return self.raw(word(6) + dword(len(vals)) + struct.pack(f"<{len(vals)}I", *vals))

    def floats(self, values: Iterable[float]) -> Bin:
        vals = list(values)
        code = "d" if self.float_bits == 64 else "f"
        return self.raw(word(7) + dword(len(vals)) + struct.pack(f"<{len(vals)}{code}", *vals))

    def p(self, chars: str) -> Bin:
        for c in chars:
            self.raw(word(PUNCT[c]))
        return self

    def template_kw(self) -> Bin:
        return self.raw(word(31))

    def type(self, t: str) -> Bin:
        return self.raw(word(TYPES[t]))

    def body(self) -> bytes:
        return b"".join(self.parts)

    def file(self, version: str = "0303") -> bytes:
        head = f"xof {version}bin 00{self.float_bits}".encode()
        return head + self.body()


def mszip(body: bytes, block: int = 32768, level: int = 6, use_dictionary: bool = True) -> bytes:
    """MSZIP payload (what follows the 16-byte header) for ``body``.

    Each block is one raw deflate stream ended by a final block; with ``use_dictionary`` it is
    compressed against the previous 32 KiB of output, as real files are (so its back
    references can reach into earlier blocks).
    """
    out = [dword(len(body) + 16)]
    for start in range(0, len(body), block):
        chunk = body[start : start + block]
        history = body[max(0, start - 32768) : start]
        if use_dictionary and history:
            comp = zlib.compressobj(level, zlib.DEFLATED, -15, zdict=history)
        else:
            comp = zlib.compressobj(level, zlib.DEFLATED, -15)
        data = comp.compress(chunk) + comp.flush(zlib.Z_FINISH)
        out.append(word(len(chunk)) + word(len(data) + 2) + b"CK" + data)
    return b"".join(out)


def compressed_file(body: bytes, fmt: str, float_bits: int = 32, **kw: int | bool) -> bytes:
    """A ``tzip``/``bzip`` file whose decompressed body is ``body`` (no header)."""
    return f"xof 0303{fmt}00{float_bits}".encode() + mszip(body, **kw)  # type: ignore[arg-type]


def block_needs_dictionary(payload: bytes, index: int) -> bool:
    """True when block ``index`` of an MSZIP payload fails to inflate without the window."""
    pos = 4
    for _ in range(index):
        pos += 4 + struct.unpack_from("<H", payload, pos + 2)[0]
    csize = struct.unpack_from("<H", payload, pos + 2)[0]
    data = payload[pos + 6 : pos + 4 + csize]
    try:
        zlib.decompressobj(-15).decompress(data)
    except zlib.error:
        return True
    return False
