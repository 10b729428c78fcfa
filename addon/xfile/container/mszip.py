"""MSZIP, the compression of ``tzip``/``bzip`` files.

Layout after the 16-byte header: DWORD total size (uncompressed, header included), then
blocks of WORD uncompressed size (<= 32768), WORD compressed size (counting the ``CK``
signature), ``CK`` and a raw DEFLATE stream. Each block's window is the previous 32 KiB of
output, so it is decoded with that as the zlib dictionary. Output never exceeds the declared
total and each block's own size, so a hostile file cannot inflate beyond what it declares.
"""

from __future__ import annotations

import contextlib
import struct
import zlib

from ..errors import XFileError

BLOCK_MAX = 32768
WINDOW = 32768
MIN_MATCH = 3  # DEFLATE's shortest back-reference: a block of fewer bytes cannot hold one


def decompress(raw: bytes, start: int, path: str | None) -> bytes:
    """The decompressed body (without the 16-byte header) of MSZIP data starting at ``start``."""

    def fail(message: str, offset: int) -> XFileError:
        return XFileError(message, path, f"byte {offset} of the compressed file")

    if start + 4 > len(raw):
        raise fail("truncated: no uncompressed size after the header", start)
    total = struct.unpack_from("<I", raw, start)[0]
    if total < 16:
        raise fail(f"bad uncompressed size {total} (the header alone is 16 bytes)", start)
    body_size = total - 16
    # every block yields at most 32 KiB from at least 5 compressed bytes: refuse the impossible
    max_blocks = (len(raw) - start - 4) // 5 + 1
    if body_size > max_blocks * BLOCK_MAX:
        raise fail(f"uncompressed size {total} is impossible for a {len(raw)}-byte file", start)
    out = bytearray()
    pos = start + 4
    block = 0
    while len(out) < body_size:
        if pos + 6 > len(raw):
            raise fail(
                f"truncated: {len(out) + 16} of {total} declared bytes decoded, block {block} "
                "header missing",
                pos,
            )
        usize, csize = struct.unpack_from("<HH", raw, pos)
        if usize == 0 or usize > BLOCK_MAX:
            raise fail(f"block {block}: bad uncompressed size {usize} (1..{BLOCK_MAX})", pos)
        if csize < 3:
            raise fail(f"block {block}: bad compressed size {csize}", pos + 2)
        if pos + 4 + csize > len(raw):
            raise fail(
                f"block {block}: compressed size {csize} runs past the end of the file", pos + 2
            )
        if raw[pos + 4 : pos + 6] != b"CK":
            raise fail(f"block {block}: missing 'CK' signature", pos + 4)
        if len(out) + usize > body_size:
            raise fail(
                f"block {block}: {usize} more bytes would exceed the declared total {total}", pos
            )
        payload = raw[pos + 6 : pos + 4 + csize]
        chunk, eof = b"", False
        if out and usize < MIN_MATCH:  # no back-reference fits: try without the window
            with contextlib.suppress(zlib.error):
                chunk, eof = _inflate(payload, usize, None)
        if len(chunk) != usize or not eof:  # (the same as with it, or decoded again with it)
            try:
                chunk, eof = _inflate(payload, usize, out)
            except zlib.error as exc:
                raise fail(f"block {block}: corrupt deflate data ({exc})", pos + 6) from None
        if len(chunk) != usize or not eof:
            raise fail(
                f"block {block}: deflate data gave {len(chunk)} bytes"
                f"{'' if eof else ' without a final block'}, {usize} declared",
                pos + 6,
            )
        out += chunk
        pos += 4 + csize
        block += 1
    return bytes(out)


def _inflate(payload: bytes, usize: int, history: bytearray | None) -> tuple[bytes, bool]:
    """One block, its window the last 32 KiB of ``history``: a view, not a copy (a file of
    tiny blocks would otherwise copy 32 KiB twice per block)."""
    if not history:
        inflater = zlib.decompressobj(-15)
        return inflater.decompress(payload, usize), inflater.eof
    with memoryview(history) as whole, whole[-WINDOW:] as window:
        inflater = zlib.decompressobj(-15, zdict=window)
        chunk = inflater.decompress(payload, usize)
        eof = inflater.eof
        del inflater  # holds the view: gone before ``history`` grows again
    return chunk, eof
