"""Every seed in all four containers: txt, bin, tzip, bzip (own encoder, see ``xtokens``)."""

from __future__ import annotations

import struct
import zlib

from .xtokens import Tok, lex_binary, lex_text, to_binary, to_text

FORMATS = ("txt", "bin", "tzip", "bzip")
_HEAD = {"txt": b"txt ", "bin": b"bin ", "tzip": b"tzip", "bzip": b"bzip"}


def header(fmt: str, float_bits: int = 32, version: str = "0303") -> bytes:
    return b"xof " + version.encode() + _HEAD[fmt] + f"{float_bits:04d}".encode()


def mszip(body: bytes, block: int = 32768, level: int = 6, window: bool = True) -> bytes:
    """MSZIP payload (after the header): total size, then ``CK`` deflate blocks whose window
    is the previous 32 KiB (``window=False`` writes blocks that do not need it)."""
    out = [struct.pack("<I", len(body) + 16)]
    for start in range(0, len(body), block):
        chunk = body[start : start + block]
        history = body[max(0, start - 32768) : start]
        if window and history:
            comp = zlib.compressobj(level, zlib.DEFLATED, -15, zdict=history)
        else:
            comp = zlib.compressobj(level, zlib.DEFLATED, -15)
        data = comp.compress(chunk) + comp.flush(zlib.Z_FINISH)
        out.append(struct.pack("<HH", len(chunk), len(data) + 2) + b"CK" + data)
    return b"".join(out)


def unmszip(payload: bytes) -> bytes:
    """The body of an MSZIP payload (trusting it: seeds only)."""
    pos, out = 4, bytearray()
    total = struct.unpack_from("<I", payload, 0)[0] - 16
    while len(out) < total:
        usize, csize = struct.unpack_from("<HH", payload, pos)
        zdict = bytes(out[-32768:])
        inflater = zlib.decompressobj(-15, zdict=zdict) if zdict else zlib.decompressobj(-15)
        out += inflater.decompress(payload[pos + 6 : pos + 4 + csize], usize)
        pos += 4 + csize
    return bytes(out)


def split_file(data: bytes) -> tuple[str, int, str, list[Tok]]:
    """(format, float bits, version, tokens) of a well-formed file."""
    fmt = data[8:12].decode().strip()
    bits = int(data[12:16])
    version = data[4:8].decode()
    body = data[16:]
    if fmt in ("tzip", "bzip"):
        body = unmszip(body)
    if fmt in ("txt", "tzip"):
        first_line_end = body.find(b"\n")
        head_junk = body[:first_line_end] if first_line_end >= 0 else b""
        if head_junk.strip().startswith(b"//"):
            body = body[first_line_end + 1 :]
        return fmt, bits, version, lex_text(body)
    return fmt, bits, version, lex_binary(body, bits)


def encode(toks: list[Tok], fmt: str, float_bits: int = 32, version: str = "0303",
           block: int = 32768, window: bool = True) -> bytes:  # fmt: skip
    """A whole file of ``toks`` in container ``fmt``."""
    body = to_binary(toks, float_bits) if fmt in ("bin", "bzip") else to_text(toks)
    if fmt in ("tzip", "bzip"):
        body = mszip(body, block=block, window=window)
    return header(fmt, float_bits, version) + body
