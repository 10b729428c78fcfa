"""The vectorised core of :mod:`.numbers`: a chunk of text bytes to token values, SWAR in numpy.

Every token (a stretch between separators) is read through the bytes that end with it, loaded
as little-endian uint64 words straight from an unaligned view of the buffer, so each numpy
operation handles one token per lane instead of one byte: the sign byte and the bytes before
the token are masked off, the decimal point is squeezed out by a masked shift, and the digits
are combined eight at a time with three multiply-shift steps. Tokens of up to 8 bytes (after
the sign: ``-0.123456``, face indices) take one word; the few longer ones take two.

The mantissa (at most 15 digits, so exact in float64) is then divided once by an exact power
of ten, which IEEE rounds correctly: the result equals ``float(token)`` bit for bit. Tokens
with an exponent (``1.5e-05``) reuse the same core on their two halves, and are exact the same
way while ``|exponent - digits after the point| <= 22`` (10**22 is the largest exact power).
Tokens this cannot take (MSVC spellings, more than 15 digits, huge exponents, anything
malformed or not a number) are flagged for the caller's exact slow path.
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
# A point flagged at byte j (0x01 there) times these: the top byte is the count of digits
# after the point, 7 - j in the last word of a token, 15 - j in the word before it.
_PLACES_LAST = _U(0x0706_0504_0302_0100)
_PLACES_FIRST = _U(0x0F0E_0D0C_0B0A_0908)
_MAX_EXACT_POWER = 22  # 10**22 is the largest power of ten a float64 holds exactly
_POWERS = np.array([10.0**k for k in range(_MAX_EXACT_POWER + 1)])


def _scale_table() -> np.ndarray:
    """Signed 10**places, indexed by ``places | negative << 8`` (1 beyond the exact powers).

    Dividing by -10**places negates exactly (and gives -0.0 for ``-0``).
    """
    table = np.ones(512, dtype=np.float64)
    table[: _MAX_EXACT_POWER + 1] = _POWERS
    table[256:] = -table[:256]
    return table


_SCALES = _scale_table()


@dataclass
class ChunkTokens:
    """Token boundaries (offsets into the work buffer) and values; ``fast`` marks exact ones."""

    starts: np.ndarray
    ends: np.ndarray
    values: np.ndarray
    fast: np.ndarray
    exponents: bool = False  # many tokens had an exponent: the next chunk likely has too
    cut: int | None = None  # tokens stop here (max_tokens), not at the buffer's end


@dataclass
class Decimals:
    """Plain decimals ``[+-]digits[.digits]``: value = (-1)**negative * mantissa / 10**places.

    Only lanes with ``fast`` set are meaningful (1 to 15 digits, at most one point).
    """

    mantissa: np.ndarray  # uint64
    places: np.ndarray  # uint64, digits after the point
    negative: np.ndarray  # bool
    point: np.ndarray  # bool, the token has a point
    fast: np.ndarray  # bool


def work_buffer(data: bytes | bytearray | memoryview, begin: int, end: int) -> np.ndarray:
    """``data[begin:end]`` with PAD separator bytes each side, length a multiple of 8."""
    size = end - begin
    total = (PAD + size + PAD + 8 + 7) & ~7
    buf = np.empty(total, dtype=np.uint8)
    buf[:PAD] = 32
    buf[PAD : PAD + size] = np.frombuffer(data, dtype=np.uint8, count=size, offset=begin)
    buf[PAD + size :] = 32
    return buf


def byte_words(buf: np.ndarray) -> np.ndarray:
    """Element i is the little-endian uint64 of ``buf[i:i+8]`` (an unaligned, overlapping view).

    One gather from it loads a token's last 8 bytes: far cheaper than combining aligned words.
    """
    return np.ndarray(shape=(len(buf) - 7,), dtype=_U, buffer=buf, strides=(1,))


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


def _digit_flags(w: np.ndarray) -> np.ndarray:
    """Bit 7 of each byte of ``w`` (digits already XORed with '0') that is not 0..9."""
    flags = w + _DIGIT_GUARD
    flags |= w
    flags &= _HIGH_BITS
    return flags


def _squeeze(
    w: np.ndarray, flags: np.ndarray, shifts: np.ndarray, carry: np.ndarray | None = None
) -> None:
    """Drop the flagged point byte: it and the bytes below it take the byte below, in place.

    ``shifts``: the point is in this word or a later one (with no flag here, all bytes move);
    ``carry`` is the byte that enters at the bottom (the top byte of the word before).
    """
    below = flags << _U(1)
    below -= shifts
    moved = w << _U(8)
    if carry is not None:
        moved |= carry
    moved ^= w
    moved &= below
    w ^= moved


def _lone_point(w: np.ndarray, mark: np.ndarray) -> np.ndarray:
    """The bytes marked (0x01 each) in ``w`` are all points ('.' ^ '0' == 0x1E)."""
    marked = mark * _U(0xFF)
    marked &= w
    return marked == mark * _U(0x1E)


def _short(
    words: np.ndarray, ends: np.ndarray, length: np.ndarray, points: bool
) -> tuple[np.ndarray, ...]:
    """Tokens of 1 to 8 bytes after the sign, from one word: mantissa, places, point, fast.

    Without ``points`` (no '.' in the chunk: face indices, counts) the point work is skipped.
    """
    w = words[ends - 8]
    shift = (8 - length) * 8  # 64 clears the word (empty token); longer tokens: see _long
    w ^= _ASCII_ZEROS
    w &= _ALL << shift.astype(_U)
    flags = _digit_flags(w)
    if not points:
        fast = flags == 0
        fast &= length > 0
        return _swar8(w), np.zeros(len(w), dtype=_U), np.zeros(len(w), dtype=bool), fast
    single = flags - _U(1)
    single &= flags
    fast = single == 0
    mark = flags >> _U(7)
    point = mark != 0
    fast &= _lone_point(w, mark)
    fast &= length > point  # at least one digit
    _squeeze(w, flags, point)
    mark *= _PLACES_LAST
    mark >>= _U(56)
    return _swar8(w), mark, point, fast


def _long(words: np.ndarray, ends: np.ndarray, length: np.ndarray) -> tuple[np.ndarray, ...]:
    """Tokens of 9 to 16 bytes after the sign, from two words: as :func:`_short`."""
    lo = words[ends - 16]
    hi = words[ends - 8]
    shift = ((16 - length) * 8).astype(_U)  # huge (wrapped) when length > 16: all masked
    lo ^= _ASCII_ZEROS
    lo &= _ALL << shift
    hi ^= _ASCII_ZEROS
    np.maximum(shift, _U(64), out=shift)
    shift -= _U(64)
    hi &= _ALL << shift
    flag_lo = _digit_flags(lo)
    flag_hi = _digit_flags(hi)
    mark_lo = flag_lo >> _U(7)
    mark_hi = flag_hi >> _U(7)
    flags = mark_lo | flag_hi  # all flags of both words, distinct bits
    point = flags != 0
    single = flags - _U(1)
    single &= flags
    fast = single == 0
    fast &= (length - point) <= 15  # at most 15 digits: exact in float64
    fast &= length <= 16
    fast &= _lone_point(lo, mark_lo) & _lone_point(hi, mark_hi)
    carry = lo >> _U(56)
    _squeeze(lo, flag_lo, point)
    _squeeze(hi, flag_hi, flag_hi != 0, carry)
    mantissa = _swar8(lo)
    mantissa *= _U(100_000_000)
    mantissa += _swar8(hi)
    mark_lo *= _PLACES_FIRST
    mark_lo >>= _U(56)
    mark_hi *= _PLACES_LAST
    mark_hi >>= _U(56)
    mark_lo |= mark_hi
    return mantissa, mark_lo, point, fast


def decimals(
    buf: np.ndarray, starts: np.ndarray, ends: np.ndarray, points: bool = True
) -> Decimals:
    """The plain decimals ``buf[starts[i]:ends[i]]`` (each at least 16 bytes into ``buf``).

    ``points=False`` skips the point work for tokens of up to 8 bytes: a '.' in one of them
    leaves it not fast, like any other non-digit.
    """
    words = byte_words(buf)
    first = buf[starts]
    negative = first == 45
    length = ends - starts
    length -= negative | (first == 43)  # without the sign
    mantissa, places, point, fast = _short(words, ends, length, points)
    longer = np.flatnonzero(length > 8)
    if longer.size:
        parts = _long(words, ends[longer], length[longer])
        for whole, part in zip((mantissa, places, point, fast), parts, strict=True):
            whole[longer] = part
    return Decimals(mantissa, places, negative, point, fast)


def _separators(buf: np.ndarray) -> np.ndarray:
    """Where the separators are: space, tab, LF, VT, FF, CR, ``,`` and ``;``."""
    sep = buf == 32
    sep |= (buf - np.uint8(9)) < 5
    sep |= buf == 44
    sep |= buf == 59
    return sep


def convert(buf: np.ndarray, exponents: bool = False, max_tokens: int = 1 << 62) -> ChunkTokens:
    """Tokens of a work buffer and their values where the fast path is exact.

    ``exponents``: expect many exponent tokens (``%e`` files): they skip the plain pass, which
    cannot take them. Either way the values are the same. Only the first ``max_tokens`` (at
    least one) are taken, which bounds the temporaries (``cut``: where they stop).
    """
    sep = _separators(buf)
    edges = np.flatnonzero(sep[1:] != sep[:-1])
    del sep
    edges += 1
    starts = edges[0::2]
    ends = edges[1::2]
    cut = None
    if len(ends) > max(1, max_tokens):
        starts = starts[: max(1, max_tokens)]
        ends = ends[: len(starts)]
        cut = int(ends[-1])
        buf = buf[:cut]  # words end at token ends: none reads past it
    points = bool((buf == 46).any())
    if exponents:
        token, at = _exponent_tokens(buf, ends, None)
        plain = np.ones(len(ends), dtype=bool)
        plain[token] = False
        plain = np.flatnonzero(plain)
        values = np.empty(len(ends), dtype=np.float64)
        fast = np.zeros(len(ends), dtype=bool)
        values[plain], fast[plain] = _plain_values(buf, starts[plain], ends[plain], points)
    else:
        values, fast = _plain_values(buf, starts, ends, points)
        if fast.all():
            return ChunkTokens(starts, ends, values, fast, cut=cut)
        token, at = _exponent_tokens(buf, ends, fast)
    if token.size:
        _exponent_values(buf, starts, ends, token, at, values, fast)
    return ChunkTokens(starts, ends, values, fast, 4 * len(token) > len(ends), cut)


def _plain_values(
    buf: np.ndarray, starts: np.ndarray, ends: np.ndarray, points: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Values of plain decimals and which are exact (``fast``)."""
    d = decimals(buf, starts, ends, points)
    values = d.mantissa.astype(np.float64)
    if points:
        d.places |= d.negative.astype(_U) << _U(8)
        values /= _SCALES[d.places.view(np.int64)]  # int64 indices: no conversion pass
    else:
        np.negative(values, out=values, where=d.negative)  # "-0" gives -0.0, like float()
    return values, d.fast


def _exponent_tokens(
    buf: np.ndarray, ends: np.ndarray, fast: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """Tokens with exactly one 'e' / 'E' (not already ``fast``) and where it is."""
    at = np.flatnonzero((buf | np.uint8(0x20)) == 0x65)
    token = np.searchsorted(ends, at, side="right")  # the token holding each (never a gap)
    keep = np.ones(len(token), dtype=bool) if fast is None else ~fast[token]
    keep[1:] &= token[1:] != token[:-1]  # a token with two 'e' is not a number
    keep[:-1] &= token[:-1] != token[1:]
    return token[keep], at[keep]


def _exponent_values(
    buf: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    token: np.ndarray,
    at: np.ndarray,
    values: np.ndarray,
    fast: np.ndarray,
) -> None:
    """Tokens ``decimal[eE][+-]digits`` (``token``, their 'e' ``at``), in place where exact."""
    mantissa = decimals(buf, starts[token], at)
    exponent = decimals(buf, at + 1, ends[token], points=False)
    ok = mantissa.fast & exponent.fast & ~exponent.point
    power = exponent.mantissa.view(np.int64)  # garbage where not ok: only used where ok
    np.negative(power, out=power, where=exponent.negative)
    power -= mantissa.places.view(np.int64)
    size = np.abs(power)
    ok &= size <= _MAX_EXACT_POWER
    np.minimum(size, _MAX_EXACT_POWER, out=size)
    scale = _POWERS[size]
    value = mantissa.mantissa.astype(np.float64)
    value = np.where(power >= 0, value * scale, value / scale)
    np.negative(value, out=value, where=mantissa.negative)
    token = token[ok]
    values[token] = value[ok]
    fast[token] = True
