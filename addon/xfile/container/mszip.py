"""MSZIP, the compression of ``tzip``/``bzip`` files.

Layout after the 16-byte header: DWORD total size (uncompressed, header included), then
blocks of WORD uncompressed size (<= 32768), WORD compressed size (counting the ``CK``
signature), ``CK`` and a raw DEFLATE stream. Each block's window is the previous 32 KiB of
output, so it is decoded with that as the zlib dictionary. Output never exceeds the declared
total and each block's own size, so a hostile file cannot inflate beyond what it declares;
what it declares is checked against :class:`InflateLimit` before a block is decoded.
"""

from __future__ import annotations

import contextlib
import struct
import zlib
from dataclasses import dataclass

from ..errors import XFileError

BLOCK_MAX = 32768
WINDOW = 32768
MIN_MATCH = 3  # DEFLATE's shortest back-reference: a block of fewer bytes cannot hold one

#: Real .X files inflate 3-10x (a mesh of all-zero values written at zlib level 9: 400x);
#: a file of 32 KiB blocks of spaces, 620x, declared 3.99 GiB from 6.9 MB and took 23 s and
#: 8.4 GB to read. Past ``FREE_INFLATE`` bytes a file may inflate to ``MAX_RATIO`` times its
#: size, and never past ``MAX_INFLATED`` bytes.
MAX_RATIO = 100
MAX_INFLATED = 1 << 30
FREE_INFLATE = 64 << 20


@dataclass(frozen=True)
class InflateLimit:
    """What an MSZIP file may decompress to: at most ``size`` bytes and, past 64 MiB, at
    most ``ratio`` times the compressed file's size (``read(..., max_inflated=, max_ratio=)``,
    the import's "Max Decompressed Size" and "Max Compression Ratio")."""

    size: int = MAX_INFLATED
    ratio: float = MAX_RATIO

    def check(self, total: int, file_size: int) -> str | None:
        """Why a file of ``file_size`` bytes may not inflate to ``total``; None when it may."""
        shown = f"declares {total:,} bytes decompressed ({total / max(file_size, 1):,.0f}x its "
        shown += f"{file_size:,} bytes)"
        if total > self.size:
            return (
                f"{shown}: more than the limit of {self.size:,} bytes; if the file is "
                "trusted, raise the import's 'Max Decompressed Size' (read(..., "
                "max_inflated=N))"
            )
        if total > FREE_INFLATE and total > self.ratio * file_size:
            return (
                f"{shown}: past {FREE_INFLATE >> 20} MiB a file may inflate to at most "
                f"{self.ratio:g}x its size; if the file is trusted, raise the import's "
                "'Max Compression Ratio' (read(..., max_ratio=N))"
            )
        return None


def decompress(
    raw: bytes, start: int, path: str | None, limit: InflateLimit | None = None
) -> bytes:
    """The decompressed body (without the 16-byte header) of MSZIP data starting at ``start``;
    a declared size past ``limit`` is refused before any block is decoded."""

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
    refused = (limit or InflateLimit()).check(total, len(raw))
    if refused is not None:
        raise fail(refused, start)
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
