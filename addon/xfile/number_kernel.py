"""The vectorised core of :mod:`.numbers`: a chunk of text bytes to token values, SWAR in numpy.

Every token (a stretch between separators) is read through the 16 bytes that end with it,
held as two little-endian uint64 words, so each numpy operation handles one token per lane
instead of one byte: the sign byte and the bytes before the token are masked off, the
decimal point is squeezed out by a masked shift, and the digits are combined eight at a time
with three multiply-shift steps. The mantissa (at most 15 digits, so exact in float64) is
then divided once by an exact power of ten, which IEEE rounds correctly: the result equals
``float(token)`` bit for bit. Tokens this cannot take (exponents, MSVC spellings, more than
15 digits, anything malformed or not a number) are flagged for the caller's exact slow path.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

PAD = 16  # separator bytes before and after the chunk in the work buffer

_U = np.uint64
_ALL = _U(0xFFFF_FFFF_FFFF_FFFF)
_ASCII_ZEROS = _U(0x3030_3030_3030_3030)
_DIGIT_GUARD = _U(0x7676_7676_7676_7676)  # byte + 0x76 reaches 0x80 when byte > 9
_HIGH_BITS = _U(0x8080_8080_8080_8080)
_PAIRS = _U(0x00FF_00FF_00FF_00FF)
_QUADS = _U(0x0000_FFFF_0000_FFFF)


def _power_table() -> np.ndarray:
    """10**f indexed by the float exponents of the decimal point's flag bit (see ``_scales``).

    A flag at bit 8j+7 of a word converts to 2**(8j+7), whose biased exponent shifted right
    by 55 is 128+j; the key is ``lo_code | hi_code << 8``; no point: key 0, scale 1.
    """
    table = np.ones(1 << 16, dtype=np.float64)
    for j in range(8):
        table[128 + j] = 10.0 ** (15 - j)  # point in the low word: 15-j digits after it
        table[(128 + j) << 8] = 10.0 ** (7 - j)
    return table


_SCALES = _power_table()


@dataclass
class ChunkTokens:
    """Token boundaries (offsets into the work buffer) and values; ``fast`` marks exact ones."""

    starts: np.ndarray
    ends: np.ndarray
    values: np.ndarray
    fast: np.ndarray


def work_buffer(data: bytes | bytearray | memoryview, begin: int, end: int) -> np.ndarray:
    """``data[begin:end]`` with PAD separator bytes each side, length a multiple of 8."""
    size = end - begin
    total = (PAD + size + PAD + 8 + 7) & ~7
    buf = np.empty(total, dtype=np.uint8)
    buf[:PAD] = 32
    buf[PAD : PAD + size] = np.frombuffer(data, dtype=np.uint8, count=size, offset=begin)
    buf[PAD + size :] = 32
    return buf


def _swar8(v: np.ndarray) -> np.ndarray:
    """Eight digit bytes (first digit in the low byte) to their integer value."""
    v = ((v * _U(1 + (10 << 8))) >> _U(8)) & _PAIRS
    v = ((v * _U(1 + (100 << 16))) >> _U(16)) & _QUADS
    return (v * _U(1 + (10000 << 32))) >> _U(32)


def _windows(words: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The 16 bytes ending at each ``end`` as (low, high) words, from aligned loads."""
    p = ends - 16
    q = p >> 3
    right = ((p & 7) << 3).astype(_U)
    left = _U(64) - right  # a shift by 64 gives 0 in numpy, as wanted when right == 0
    w1 = words[q + 1]
    lo = (words[q] >> right) | (w1 << left)
    hi = (w1 >> right) | (words[q + 2] << left)
    return lo, hi


def convert(buf: np.ndarray) -> ChunkTokens:
    """Tokens of a work buffer and their values where the fast path is exact."""
    sep = (buf == 32) | ((buf - np.uint8(9)) < 5) | (buf == 44) | (buf == 59)
    edges = np.flatnonzero(sep[1:] != sep[:-1]) + 1
    starts = edges[0::2]
    ends = edges[1::2]
    first = buf[starts]
    neg = first == 45
    signed = neg | (first == 43)
    length = ends - starts - signed  # without the sign
    lo, hi = _windows(buf.view(_U), ends)

    # keep only the token's own bytes (after its sign): the rest become leading zeros
    garbage_bits = ((16 - length) * 8).astype(_U)  # huge (wrapped) when length > 16
    lo = (lo ^ _ASCII_ZEROS) & (_ALL << garbage_bits)
    hi = (hi ^ _ASCII_ZEROS) & (_ALL << (np.maximum(garbage_bits, _U(64)) - _U(64)))

    # non-digit flags (bit 7 of each byte that is not 0..9); a valid token has at most one
    flag_lo = ((lo + _DIGIT_GUARD) | lo) & _HIGH_BITS
    flag_hi = ((hi + _DIGIT_GUARD) | hi) & _HIGH_BITS
    flags = (flag_lo >> _U(7)) | flag_hi  # all flags of both words, distinct bits
    single = (flags & (flags - _U(1))) == 0
    has_point = flags != 0
    digits = length - has_point
    fast = single & (digits >= 1) & (digits <= 15) & (length <= 16)

    # the lone non-digit must be the point ('.' ^ '0' == 0x1E)
    mark_lo = flag_lo >> _U(7)
    mark_hi = flag_hi >> _U(7)
    marked = (lo & (mark_lo * _U(0xFF))) | (hi & (mark_hi * _U(0xFF)))
    fast &= marked == (mark_lo | mark_hi) * _U(0x1E)

    # squeeze the point out: bytes at and below it take the byte below them
    below_lo = (flag_lo << _U(1)) - has_point
    below_hi = (flag_hi << _U(1)) - (flag_hi != 0)
    shifted_hi = (hi << _U(8)) | (lo >> _U(56))
    lo = lo ^ ((lo ^ (lo << _U(8))) & below_lo)
    hi = hi ^ ((hi ^ shifted_hi) & below_hi)

    mantissa = _swar8(lo) * _U(100_000_000) + _swar8(hi)
    key = (flag_lo.astype(np.float64).view(_U) >> _U(55)) | (
        (flag_hi.astype(np.float64).view(_U) >> _U(55)) << _U(8)
    )
    values = mantissa.astype(np.float64) / _SCALES[key]
    np.negative(values, out=values, where=neg)
    return ChunkTokens(starts, ends, values, fast)
