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
    """Signed 10**f indexed by the float exponents of the point's flag bit and the sign.

    A flag at bit 8j+7 of a word converts to 2**(8j+7), whose biased exponent shifted right
    by 55 is 128+j; the key is ``lo_code | hi_code << 8 | negative << 16``; no point: code 0.
    Dividing by -10**f negates exactly (and gives -0.0 for ``-0``).
    """
    table = np.ones(1 << 17, dtype=np.float64)
    for j in range(8):
        table[128 + j] = 10.0 ** (15 - j)  # point in the low word: 15-j digits after it
        table[(128 + j) << 8] = 10.0 ** (7 - j)
    table[1 << 16 :] = -table[: 1 << 16]
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
    """Eight digit bytes (first digit in the low byte) to their integer value, in place."""
    v *= _U(1 + (10 << 8))
    v >>= _U(8)
    v &= _PAIRS
    v *= _U(1 + (100 << 16))
    v >>= _U(16)
    v &= _QUADS
    v *= _U(1 + (10000 << 32))
    v >>= _U(32)
    return v


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


def _separators(buf: np.ndarray) -> np.ndarray:
    """Where the separators are: space, tab, LF, VT, FF, CR, ``,`` and ``;``."""
    sep = buf == 32
    sep |= (buf - np.uint8(9)) < 5
    sep |= buf == 44
    sep |= buf == 59
    return sep


def convert(buf: np.ndarray) -> ChunkTokens:
    """Tokens of a work buffer and their values where the fast path is exact."""
    sep = _separators(buf)
    edges = np.flatnonzero(sep[1:] != sep[:-1])
    edges += 1
    starts = edges[0::2]
    ends = edges[1::2]
    first = buf[starts]
    neg = first == 45
    signed = neg | (first == 43)
    length = ends - starts
    length -= signed  # without the sign
    lo, hi = _windows(buf.view(_U), ends)

    # keep only the token's own bytes (after its sign): the rest become leading zeros
    garbage_bits = ((16 - length) * 8).astype(_U)  # huge (wrapped) when length > 16
    lo ^= _ASCII_ZEROS
    lo &= _ALL << garbage_bits
    hi ^= _ASCII_ZEROS
    np.maximum(garbage_bits, _U(64), out=garbage_bits)
    garbage_bits -= _U(64)
    hi &= _ALL << garbage_bits

    # non-digit flags (bit 7 of each byte that is not 0..9); a valid token has at most one
    flag_lo = lo + _DIGIT_GUARD
    flag_lo |= lo
    flag_lo &= _HIGH_BITS
    flag_hi = hi + _DIGIT_GUARD
    flag_hi |= hi
    flag_hi &= _HIGH_BITS
    mark_lo = flag_lo >> _U(7)
    mark_hi = flag_hi >> _U(7)
    flags = mark_lo | flag_hi  # all flags of both words, distinct bits
    has_point = flags != 0
    single = flags - _U(1)
    single &= flags
    fast = single == 0
    digits = (length - has_point - 1).astype(_U)  # 0..14 when 1..15 digits
    fast &= digits < 15
    fast &= length <= 16

    # the lone non-digit must be the point ('.' ^ '0' == 0x1E)
    marked = mark_lo * _U(0xFF)
    marked &= lo
    other = mark_hi * _U(0xFF)
    other &= hi
    marked |= other
    mark_lo |= mark_hi
    mark_lo *= _U(0x1E)
    fast &= marked == mark_lo

    # squeeze the point out: bytes at and below it take the byte below them
    below = flag_lo << _U(1)
    below -= has_point
    moved = lo << _U(8)
    moved ^= lo
    moved &= below
    shifted_hi = lo >> _U(56)
    lo ^= moved
    below = flag_hi << _U(1)
    below -= flag_hi != 0
    moved = hi << _U(8)
    moved |= shifted_hi
    moved ^= hi
    moved &= below
    hi ^= moved

    mantissa = _swar8(lo)
    mantissa *= _U(100_000_000)
    mantissa += _swar8(hi)
    key = flag_lo.astype(np.float64).view(_U)
    key >>= _U(55)
    code_hi = flag_hi.astype(np.float64).view(_U)
    code_hi >>= _U(55)
    code_hi <<= _U(8)
    key |= code_hi
    key |= neg.astype(_U) << _U(16)
    values = mantissa.astype(np.float64)
    values /= _SCALES[key]
    return ChunkTokens(starts, ends, values, fast)
