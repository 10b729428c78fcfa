"""MSZIP compression for ``tzip``/``bzip`` files: the exact inverse of :mod:`..mszip`.

The body is cut into blocks of at most 32768 uncompressed bytes. Each block is its own raw
DEFLATE stream ending in a final block, compressed with the previous 32 KiB of the body as
the dictionary, so later blocks back-reference earlier ones the way D3DX's decoder expects.
"""

from __future__ import annotations

import struct
import zlib

BLOCK = 32768
WINDOW = 32768
HEADER_SIZE = 16


def compress(body: bytes, level: int = 1) -> bytes:
    """``DWORD total size (header included)`` then the blocks, for the data after the header."""
    view = memoryview(body)
    out = [struct.pack("<I", len(body) + HEADER_SIZE)]
    for start in range(0, len(body), BLOCK):
        block = view[start : start + BLOCK]
        if start:
            packer = zlib.compressobj(
                level, zlib.DEFLATED, -15, zdict=bytes(view[max(0, start - WINDOW) : start])
            )
        else:
            packer = zlib.compressobj(level, zlib.DEFLATED, -15)
        data = packer.compress(block) + packer.flush(zlib.Z_FINISH)
        out.append(struct.pack("<HH", len(block), len(data) + 2))
        out.append(b"CK")
        out.append(data)
    return b"".join(out)


def block_count(data: bytes) -> int:
    """How many MSZIP blocks a compressed file holds (walks the block headers)."""
    pos = HEADER_SIZE + 4
    count = 0
    while pos + 4 <= len(data):
        _, csize = struct.unpack_from("<HH", data, pos)
        pos += 4 + csize
        count += 1
    return count
