"""The 16-byte header (``xof 0303txt 0032``) and, for tzip/bzip, the decompressed stream."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import XFileError
from . import mszip

FORMATS = {b"txt ": "txt", b"bin ": "bin", b"tzip": "tzip", b"bzip": "bzip"}
FLOAT_SIZES = {b"0032": 32, b"0064": 64}
HEADER_SIZE = 16


@dataclass
class Container:
    format: str  # txt, bin, tzip, bzip
    version: str  # "0302", "0303"
    float_bits: int
    data: bytes  # header + (decompressed) body: offsets in messages refer to this
    compressed: bool

    @property
    def binary(self) -> bool:
        return self.format in ("bin", "bzip")


def open_container(
    raw: bytes, path: str | None, limit: mszip.InflateLimit | None = None
) -> Container:
    """The header's facts and the data after it, decompressed (within ``limit``)."""

    def fail(message: str, offset: int) -> XFileError:
        return XFileError(message, path, f"byte {offset}")

    if len(raw) < HEADER_SIZE:
        raise fail(f"not a .X file: {len(raw)} bytes, the header alone needs 16", 0)
    if raw[:4] != b"xof ":
        raise fail(f"not a .X file: starts with {bytes(raw[:4])!r}, expected b'xof '", 0)
    version = bytes(raw[4:8])
    if not version.isdigit():
        raise fail(f"bad version {version!r}, expected b'0302' or b'0303'", 4)
    fmt = FORMATS.get(bytes(raw[8:12]).lower())
    if fmt is None:
        raise fail(f"unknown format {bytes(raw[8:12])!r}, expected txt, bin, tzip or bzip", 8)
    float_bits = FLOAT_SIZES.get(bytes(raw[12:16]))
    if float_bits is None:
        raise fail(f"bad float size {bytes(raw[12:16])!r}, expected b'0032' or b'0064'", 12)
    compressed = fmt in ("tzip", "bzip")
    data = raw
    if compressed:
        data = bytes(raw[:HEADER_SIZE]) + mszip.decompress(data, HEADER_SIZE, path, limit)
    return Container(fmt, version.decode("ascii"), float_bits, data, compressed)
