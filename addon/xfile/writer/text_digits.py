"""Numbers to ASCII without a Python call per value: digits are computed with array arithmetic
into a byte matrix (one row per value: the number right-aligned, its separator after it, ``0``
bytes as padding), and the padding is dropped with one boolean mask before ``tobytes()``.

``%`` formatting costs about a microsecond per value; a 1M-vertex mesh has ~15M of them.

Floats of 32-bit files are written with 9 significant digits in the spelling of ``%.9g``
(plain decimals for exponents -4..8, ``d.ddde+XX`` otherwise, trailing zeros dropped).
Plain decimals, what meshes hold, are assembled in two 8-byte words with masks and shifts;
the other spellings go through a per-byte layout gather.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .pieces import Piece, pool_ahead

#: values per vectorised step: keeps every temporary of a step in cache-sized arrays, and each
#: array op long enough (~20 us) that a second spelling thread can take the GIL meanwhile
#: (with 16k steps the threads ran one at a time: each took the GIL back before the other woke)
STEP = 1 << 16
#: steps formatted at once on big arrays (numpy releases the GIL in its array loops)
THREADS = min(4, os.cpu_count() or 1)

_ZERO = ord("0")
_POW10_INT = 10 ** np.arange(19, dtype=np.int64)
_POW10 = np.array([10.0**i for i in range(64)])  # exact up to 1e22, correctly rounded after
_NON_FINITE = {"nan": b"1.#QNAN0", "inf": b"1.#INF00", "-inf": b"-1.#INF00"}

# -- integers ------------------------------------------------------------------------------


def int_rows(values: np.ndarray, tails: np.ndarray) -> np.ndarray:
    """Decimal integers, each followed by its tail (``(n, w)`` uint32 words of separator
    bytes), as a byte matrix: a sign column, the digits right-aligned (leading zeros are
    padding), then the tail."""
    v = np.asarray(values).astype(np.int64, copy=False).reshape(-1)
    n = v.size
    negative = v < 0
    a = np.abs(v)  # int64 min stays negative: not an index or count any file holds
    top = int(a.max()) if n else 0
    if n and top < 10**8 and not negative.any():
        return _quad_rows(a.astype(np.uint32), tails)
    digits = max(1, len(str(top)))
    head = -(-(digits + 1) // 4) * 4  # whole words, so the tail is written as words
    out = np.zeros((n, head + 4 * tails.shape[1]), dtype=np.uint8)
    out.view(np.uint32)[:, head // 4 :] = tails
    out[:, head - digits - 1] = negative * ord("-")
    small = a.astype(np.uint32) if top < 2**32 else a  # 32-bit division is the faster one
    for j in range(digits):
        power = int(_POW10_INT[digits - 1 - j])
        column = (small // power) % 10 + _ZERO
        if j < digits - 1:  # a leading zero is padding; the last digit always shows
            column = np.where(small >= power, column, 0)
        out[:, head - digits + j] = column
    return out


def _quad_rows(a: np.ndarray, tails: np.ndarray) -> np.ndarray:
    """Indices and counts (0 <= a < 10**8) as two table words of four digits each, leading
    zeros cleared by a mask: a few passes instead of five per digit."""
    high = a // 10_000
    low = a - high * 10_000
    number = _QUADS64.take(low)
    number <<= np.uint64(32)
    number |= _QUADS64.take(high)
    # the leading '0' bytes are the bytes below the lowest nonzero digit value (the last digit
    # always counts): x & -x isolates its lowest bit, and everything below it is cleared
    x = number - _ALL_ZEROS
    x |= np.uint64(1 << 56)
    lowest = np.negative(x)
    lowest &= x
    lowest -= np.uint64(1)
    number &= ~lowest
    out = np.empty((a.size, 8 + 4 * tails.shape[1]), dtype=np.uint8)
    word_column(out, 0, np.uint64)[:] = number
    put_tails(out, 8, tails)
    return out


def word_column(rows: np.ndarray, at: int, dtype: type) -> np.ndarray:
    """The ``dtype`` word at byte ``at`` of every row of a uint8 matrix, as a 1-D view: numpy
    copies into it ~8x faster than into an ``(n, 2)`` uint32 block (a loop of 2 per row)."""
    return rows[:, at : at + np.dtype(dtype).itemsize].view(dtype)[:, 0]


def put_tails(rows: np.ndarray, at: int, tails: np.ndarray) -> None:
    """``(n, w)`` uint32 tail words into the rows from byte ``at``, one column at a time."""
    for j in range(tails.shape[1]):
        word_column(rows, at + 4 * j, np.uint32)[:] = tails[:, j]


# -- float32 -------------------------------------------------------------------------------

# Source bytes of one value, four 32-bit words filled whole; a layout picks and orders them.
# word 0: pad, sign, '0', '.'; word 1: 'e', exponent sign, two exponent digits; word 2: the
# first digit; words 3 and 4: four digits each (a 10000-entry table of ASCII quads).
_PAD, _SIGN, _C0, _POINT, _E, _ESIGN, _X1, _X2 = range(8)
_SOURCE_WIDTH = 20
_FIXED_LOW, _FIXED_HIGH = -4, 8  # %g's plain decimals for 9 digits: exponent -4..8
_WIDTH = 15  # longest spelling: -0.000ddddddddd and -d.ddddddddde-XX


def _word(text: bytes) -> int:
    return int.from_bytes(text, "little")


_SIGN_WORDS = np.array([_word(b"\0\0" + b"0."), _word(b"\0-" + b"0.")], dtype=np.uint32)
_EXPONENT_WORDS = np.array(
    [_word(b"e%c%02d" % (45 if x < 0 else 43, abs(x))) for x in range(-64, 64)], dtype=np.uint32
)
_QUADS = np.frombuffer(b"".join(b"%04d" % i for i in range(10000)), dtype="<u4")
_QUADS64 = _QUADS.astype(np.uint64)
_ALL_ZEROS = np.uint64(_word(b"00000000"))
_TRAILING_ZEROS = np.array(
    [4] + [len(str(i)) - len(str(i).rstrip("0")) for i in range(1, 10000)], dtype=np.int8
)


def _digit(i: int) -> int:
    return 8 if i == 0 else 11 + i


def _layout(exponent: int | None, count: int) -> list[int]:
    """Source columns for ``count`` significant digits at a decimal ``exponent`` (None: the
    ``e`` form)."""
    digits = [_digit(i) for i in range(count)]
    if exponent is None:
        body = digits[:1] + ([_POINT, *digits[1:]] if count > 1 else [])
        return [_SIGN, *body, _E, _ESIGN, _X1, _X2]
    if exponent < 0:
        return [_SIGN, _C0, _POINT] + [_C0] * (-exponent - 1) + digits
    whole = [_digit(i) for i in range(exponent + 1)]  # digits past ``count`` are zeros
    return [_SIGN, *whole] + ([_POINT, *digits[exponent + 1 :]] if count > exponent + 1 else [])


def _layouts() -> np.ndarray:
    rows = [_layout(e, k) for e in range(_FIXED_LOW, _FIXED_HIGH + 1) for k in range(1, 10)]
    rows += [_layout(None, k) for k in range(1, 10)]
    rows.append([_SIGN, _C0])  # zero
    table = np.zeros((len(rows), _WIDTH), dtype=np.int32)
    for i, row in enumerate(rows):  # right-aligned: a separator then follows without a gap
        table[i, _WIDTH - len(row) :] = row
    return table


_LAYOUTS = _layouts()
_LENGTHS = (_LAYOUTS != _PAD).sum(axis=1)  # the sign column counts, blank or not
_SCIENTIFIC = (_FIXED_HIGH - _FIXED_LOW + 1) * 9
_ZERO_LAYOUT = _SCIENTIFIC + 9


def _layout_of() -> np.ndarray:
    """Layout of exponent ``e`` (-64..63) and ``z`` trailing zeros at ``(e + 64) * 9 + z``."""
    e = np.repeat(np.arange(-64, 64), 9)
    count = 9 - np.tile(np.arange(9), 128)
    fixed = (e >= _FIXED_LOW) & (e <= _FIXED_HIGH)
    start = np.where(fixed, (np.clip(e, _FIXED_LOW, _FIXED_HIGH) - _FIXED_LOW) * 9, _SCIENTIFIC)
    return (start + count - 1).astype(np.int32)


_LAYOUT_OF = _layout_of()


def _nine_digits(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Decimal exponent and 9-digit integer mantissa (10**8 <= m < 10**9) of positive finite
    float32 values, computed in float64.

    Why float64 is enough: the scaled value ``a * 10**(8 - e)`` carries a relative error of a
    few 2**-53, so ``m`` is the correctly rounded mantissa or, in rare near-ties, one unit away.
    One unit is at most 1e-8 of the value (m >= 10**8), so ``m * 10**(e - 8)`` is within
    1.5e-8 relative of ``a``. Adjacent float32 are 2**-23 relative apart at most one binade
    up, so half their gap is >= 2**-25 ~ 2.98e-8 of the value (more for subnormals, whose gap
    is fixed): the decimal still lies strictly inside ``a``'s rounding interval, and reading
    it (to float64, correctly rounded, then to float32) gives ``a`` back. The margin (~1.5e-8
    relative) dwarfs float64's 2**-53, so the double rounding of that read cannot cross it.
    """
    e = np.floor(np.log10(a)).astype(np.int32)
    m = _scaled(a, e)
    for _ in range(2):  # log10 can miss by one next to a power of ten; rounding can carry
        high, low = m >= 1e9, m < 1e8
        if not (high.any() or low.any()):
            break
        e = e + high - low
        m = _scaled(a, e)
    return e, m.astype(np.uint32)  # < 10**9


def _scaled(a: np.ndarray, e: np.ndarray) -> np.ndarray:
    k = 8 - e
    if k.min() >= 0:  # nothing above 1e8 (most meshes): one side only
        return np.rint(a * _POW10.take(np.minimum(k, 63)))
    up = a * _POW10[np.clip(k, 0, 63)]
    down = a / _POW10[np.clip(-k, 0, 63)]
    return np.rint(np.where(k >= 0, up, down))


def float32_rows(values: np.ndarray, tails: np.ndarray) -> np.ndarray:
    """float32 values (any float dtype; rounded to float32 first) spelled as ``%.9g``, each
    followed by its tail (``(n, w)`` uint32 words of separator bytes), as a byte matrix whose
    zero bytes are padding; non-finite values get MSVC's spellings."""
    with np.errstate(over="ignore", invalid="ignore"):  # big float64s -> inf, NaNs stay
        v = np.asarray(values).astype(np.float32, copy=False).astype(np.float64).reshape(-1)
    finite = np.isfinite(v)
    every = bool(finite.all())
    a = np.abs(v) if every else np.where(finite, np.abs(v), 1.0)
    zero = a == 0.0
    a[zero] = 1.0
    e, m = _nine_digits(a)
    fixed = (e >= _FIXED_LOW) & (e <= _FIXED_HIGH) & ~zero
    if not every:
        fixed &= finite
    count = int(np.count_nonzero(fixed))
    if 2 * count < v.size:  # mostly e-form, zeros or non-finite: the general layouts
        return _general_rows(v, finite, every, zero, e, m, tails)
    out = _fixed_rows(v, e, m, tails)
    if count < v.size:  # the others spelled by the general layouts, right-aligned in place
        other = np.flatnonzero(~fixed)
        rows = _general_rows(v[other], finite[other], every, zero[other], e[other], m[other],
                             tails[other])  # fmt: skip
        out[other] = 0
        out[other, out.shape[1] - rows.shape[1] :] = rows
    return out


# Fixed notation (exponent -4..8) without a byte gather, in two little-endian 8-byte words
# holding the number right-aligned: the shown digits as 16 zero-padded ASCII digits (four
# table quads), masked to the digits that show; the digits left of the decimal point moved
# down one byte to open its slot; then the point, a leading ``0`` and the sign from a table
# of the (exponent, significant digits) class.
_FIXED_CLASSES = (_FIXED_HIGH - _FIXED_LOW + 1) * 9


def _byte_words(positions: dict[int, int]) -> tuple[int, int]:
    """Bytes (position 0..15 -> value) of a 16-byte row as its two little-endian words."""
    row = bytearray(16)
    for at, value in positions.items():
        row[at] = value
    return _word(bytes(row[:8])), _word(bytes(row[8:]))


def _fixed_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per class: how many digits show, the masks of the digits right and left of the point
    (as two words each), and the point/zero/sign bytes for a positive and a negative value."""
    shown = np.zeros(_FIXED_CLASSES, dtype=np.int64)
    right = np.zeros((_FIXED_CLASSES, 2), dtype=np.uint64)
    left = np.zeros((_FIXED_CLASSES, 2), dtype=np.uint64)
    marks = np.zeros((_FIXED_CLASSES, 2, 2), dtype=np.uint64)
    for e in range(_FIXED_LOW, _FIXED_HIGH + 1):
        for sig in range(1, 10):
            c = (e - _FIXED_LOW) * 9 + sig - 1
            kept = sig if e < 0 else max(sig, e + 1)  # integer digits always show
            fraction = kept - (e + 1) if e >= 0 else kept - e - 1  # digits after the point
            width = max(kept, fraction)  # e < 0: leading zeros of the fraction show
            shown[c] = kept
            stay = fraction if fraction else width  # no point: no digit moves
            right[c] = _byte_words({15 - i: 0xFF for i in range(stay)})
            left[c] = _byte_words({15 - i: 0xFF for i in range(stay, width)})
            head: dict[int, int] = {}
            if fraction:
                head[15 - fraction] = ord(".")
            if e < 0:
                head[14 - fraction] = ord("0")
            start = 16 - (width + (1 if fraction else 0) + (1 if e < 0 else 0))
            for negative in (0, 1):
                if negative:
                    head[start - 1] = ord("-")
                marks[c, negative] = _byte_words(head)
    return shown, right, left, marks.reshape(-1, 2)


_FIXED_SHOWN, _FIXED_RIGHT, _FIXED_LEFT, _FIXED_MARKS = _fixed_tables()
# one contiguous table per word: numpy gathers from 1-D tables several times faster
_RIGHT_LO, _RIGHT_HI = (np.ascontiguousarray(_FIXED_RIGHT[:, i]) for i in range(2))
_LEFT_LO, _LEFT_HI = (np.ascontiguousarray(_FIXED_LEFT[:, i]) for i in range(2))
_MARKS_LO, _MARKS_HI = (np.ascontiguousarray(_FIXED_MARKS[:, i]) for i in range(2))
# per class: the bits the nine digits move up to drop the hidden (trailing zero) ones
_FIXED_SHIFT = (8 * (9 - _FIXED_SHOWN)).astype(np.uint64)
_ZEROS7 = np.uint64(_word(b"0000000"))  # the fraction's leading zeros (e < 0) come from here


def _fixed_rows(v: np.ndarray, e: np.ndarray, m: np.ndarray, tails: np.ndarray) -> np.ndarray:
    """Rows of the fixed spelling (exponents -4..8, nonzero): the number right-aligned in 16
    bytes (zero bytes before it), then the tail. Other values get rows of no meaning."""
    m32 = m.astype(np.uint32, copy=False)
    first = m32 // 100_000_000  # scalar divisors: numpy divides by multiplying (``%`` does not)
    rest = m32 - first * 100_000_000
    high = rest // 10_000
    low = rest - high * 10_000
    zeros = _TRAILING_ZEROS.take(low)
    zeros += (low == 0) * _TRAILING_ZEROS.take(high)  # 0..8
    c = np.clip(e, _FIXED_LOW, _FIXED_HIGH)  # int32, a new array
    c -= _FIXED_LOW
    c *= 9
    c += 8
    c -= zeros  # the (exponent, significant digits) class
    # the nine digits as ASCII in bytes 7..15 of two little-endian words ('0's in bytes 0..6),
    # then moved up (a 128-bit shift) so that the last digit that shows ends at byte 15
    lo = first.astype(np.uint64)
    lo += np.uint64(_ZERO)
    lo <<= np.uint64(56)
    lo |= _ZEROS7
    hi = _QUADS64.take(low)
    hi <<= np.uint64(32)
    hi |= _QUADS64.take(high)
    shift = _FIXED_SHIFT.take(c)
    hi <<= shift  # numpy defines shifts by 64 as 0
    hi |= lo >> (np.uint64(64) - shift)
    lo <<= shift
    upper_lo = lo & _LEFT_LO.take(c)  # the digits left of the point go down a byte
    upper_hi = hi & _LEFT_HI.take(c)
    signed = c * 2
    signed += np.signbit(v)
    out = np.empty((v.size, 16 + 4 * tails.shape[1]), dtype=np.uint8)
    lo &= _RIGHT_LO.take(c)
    lo |= upper_lo >> np.uint64(8)
    lo |= upper_hi << np.uint64(56)
    lo |= _MARKS_LO.take(signed)
    word_column(out, 0, np.uint64)[:] = lo
    hi &= _RIGHT_HI.take(c)
    hi |= upper_hi >> np.uint64(8)
    hi |= _MARKS_HI.take(signed)
    word_column(out, 8, np.uint64)[:] = hi
    put_tails(out, 16, tails)
    return out


def _general_rows(
    v: np.ndarray,
    finite: np.ndarray,
    every: bool,
    zero: np.ndarray,
    e: np.ndarray,
    m: np.ndarray,
    tails: np.ndarray,
) -> np.ndarray:
    """Any float32 (given its digits) through the layout table: one byte gather per row."""
    n = v.size
    words = np.empty((n, _SOURCE_WIDTH // 4 + tails.shape[1]), dtype=np.uint32)
    words[:, 0] = _SIGN_WORDS[np.signbit(v).view(np.uint8)]
    words[:, 1] = _EXPONENT_WORDS[e + 64]
    m32 = m.astype(np.uint32, copy=False)
    first = m32 // 100_000_000
    rest = m32 - first * 100_000_000
    high = rest // 10_000
    low = rest - high * 10_000
    words[:, 2] = first + _ZERO
    words[:, 3] = _QUADS[high]
    words[:, 4] = _QUADS[low]
    words[:, _SOURCE_WIDTH // 4 :] = tails
    zeros = _TRAILING_ZEROS[low] + (low == 0) * _TRAILING_ZEROS[high]  # 0..8
    layout = _LAYOUT_OF[(e + 64) * 9 + zeros]  # one table for exponent and digit count
    layout[zero] = _ZERO_LAYOUT
    width = int(_LENGTHS[layout].max()) if n else 1
    if not every:
        width = max(width, 9)  # room for MSVC's spellings
    tail = np.arange(_SOURCE_WIDTH, 4 * words.shape[1], dtype=np.int32)
    columns = np.concatenate([_LAYOUTS[:, _WIDTH - width :], np.tile(tail, (len(_LAYOUTS), 1))], 1)
    index = columns[layout]
    index += np.arange(0, words.size * 4, words.shape[1] * 4, dtype=np.int32)[:, None]
    out = np.take(words.view(np.uint8).reshape(-1), index)  # int32: faster
    if not every:
        _spell_non_finite(out[:, :width], v, finite)
    return out


def _spell_non_finite(out: np.ndarray, v: np.ndarray, finite: np.ndarray) -> None:
    for where in np.flatnonzero(~finite):
        word = _NON_FINITE[str(float(v[where]))]
        out[where] = 0
        out[where, out.shape[1] - len(word) :] = np.frombuffer(word, dtype=np.uint8)


# -- joining -------------------------------------------------------------------------------


def suffix_words(suffixes: Sequence[str]) -> np.ndarray:
    """Separators as zero-padded rows of uint32 words (the tails of the row builders)."""
    width = -(-max(1, max(len(s) for s in suffixes)) // 4) * 4
    table = np.zeros((len(suffixes), width), dtype=np.uint8)
    for i, s in enumerate(suffixes):
        table[i, : len(s)] = np.frombuffer(s.encode("ascii"), dtype=np.uint8)
    return table.view(np.uint32)


def render(
    values: np.ndarray,
    integer: np.ndarray | bool,
    suffix_ids: np.ndarray,
    suffixes: Sequence[str],
) -> list[Piece]:
    """``values`` (flat) each followed by ``suffixes[suffix_ids[i]]``; ``integer`` says which
    values are written as integers (all, none, or a mask), the rest as float32. The text comes
    in pieces (one per step): joining 100 MB once more costs more than the file write."""
    values = np.asarray(values).reshape(-1)
    table = suffix_words(suffixes)

    def step(start: int) -> memoryview:
        stop = min(values.size, start + STEP)
        tails = np.take(table, suffix_ids[start:stop], axis=0)  # 1-D take: faster than []
        kinds = integer if isinstance(integer, bool) else integer[start:stop]
        rows = _rows(values[start:stop], kinds, tails)
        # one run of bytes per value (right-aligned number, left-aligned separator): the
        # mask copy is fastest on few runs; its array is the piece (no copy into bytes)
        return memoryview(rows[rows != 0])

    starts = range(0, values.size, STEP)
    if len(starts) < 2 * THREADS or THREADS < 2:
        return [step(s) for s in starts]
    ahead = pool_ahead()
    if ahead is not None:  # futures: the caller writes each piece when it is done
        return [ahead.submit(step, s) for s in starts]
    with ThreadPoolExecutor(THREADS) as pool:  # numpy lets go of the GIL inside each array op
        return list(pool.map(step, starts))


def _rows(values: np.ndarray, integer: np.ndarray | bool, tails: np.ndarray) -> np.ndarray:
    if isinstance(integer, bool) or integer.all() or not integer.any():
        whole = bool(integer) if isinstance(integer, bool) else bool(integer.all())
        return int_rows(values, tails) if whole else float32_rows(values, tails)
    ints = int_rows(values[integer], tails[integer])
    floats = float32_rows(values[~integer], tails[~integer])
    width = max(ints.shape[1], floats.shape[1])
    out = np.zeros((values.size, width), dtype=np.uint8)
    out[integer, width - ints.shape[1] :] = ints
    out[~integer, width - floats.shape[1] :] = floats
    return out
