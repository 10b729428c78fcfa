"""Bulk text formatting of numeric arrays, in the punctuation of each array kind.

Integers and the floats of 32-bit files are spelled by :mod:`.text_digits` with array
arithmetic (no Python call per value). The floats of 64-bit files keep ``%.17g`` through one
C-level ``%`` call per chunk: 17 digits must be correctly rounded to come back exactly, which
float64 arithmetic cannot promise. 9 digits give back every float32 (17 every float64), and
values that came from text with fewer digits (``0.5``) are written as they were read.
Non-finite values get MSVC's spellings, which D3DX-era readers and ours understand.
"""

from __future__ import annotations

import numpy as np

from .pieces import Piece
from .text_digits import render

#: values per ``%`` call: bounds the temporary Python objects of one call
CHUNK = 1 << 16

FLOAT_SPEC = {32: "%.9g", 64: "%.17g"}
_NON_FINITE = {"nan": "1.#QNAN0", "inf": "1.#INF00", "-inf": "-1.#INF00"}
_FAST_SPECS = ("%d", FLOAT_SPEC[32])


def float_text(value: float, float_bits: int) -> str:
    """One float as the files of that float size spell it."""
    text = FLOAT_SPEC[float_bits] % float(value)
    return _NON_FINITE.get(text, text)


def _python_values(flat: np.ndarray, integer: bool) -> list:
    if integer:
        return flat.astype(np.int64, copy=False).tolist()
    return flat.astype(np.float64, copy=False).tolist()


def _fix_non_finite(text: str, flat: np.ndarray) -> str:
    if np.isfinite(flat).all():
        return text
    for bad, good in _NON_FINITE.items():  # '%g' spells them nan/inf; never part of a number
        text = text.replace(bad, good)
    return text


def format_units(unit: str, per_unit: int, flat: np.ndarray, integer: bool) -> str:
    """``unit`` (a format string taking ``per_unit`` values) repeated over ``flat`` with
    ``%``: the float64 path. ``flat`` holds ``k * per_unit`` values."""
    flat = np.asarray(flat).reshape(-1)
    if per_unit <= 0 or flat.size == 0:
        return ""
    units = flat.size // per_unit
    step = max(1, CHUNK // per_unit)
    parts: list[str] = []
    for start in range(0, units, step):
        stop = min(units, start + step)
        chunk = flat[start * per_unit : stop * per_unit]
        parts.append((unit * (stop - start)) % tuple(_python_values(chunk, integer)))
    text = "".join(parts)
    return text if integer else _fix_non_finite(text, flat)


def format_list(
    flat: np.ndarray,
    spec: str,
    integer: bool,
    per_line: int = 8,
    last: str = ";",
    sep: str = ",",
) -> list[Piece]:
    """A primitive array: values joined by ``sep`` (``,`` and a line break every
    ``per_line``), then ``last``. An empty array is ``last`` alone."""
    flat = np.asarray(flat).reshape(-1)
    n = flat.size
    if n == 0:
        return [last.encode()]
    if integer or spec in _FAST_SPECS:
        ids = (np.arange(n) % per_line == per_line - 1).astype(np.int8)
        ids[-1] = 2
        return render(flat, integer or spec == "%d", ids, [sep, ",\n", last])
    full = (n - 1) // per_line  # whole lines before the one holding the last value
    line = sep.join([spec] * per_line) + ",\n"
    head = format_units(line, per_line, flat[: full * per_line], integer)
    rest = flat[full * per_line :]
    tail = (sep.join([spec] * rest.size) + last) % tuple(_python_values(rest, integer))
    return [(head + (tail if integer else _fix_non_finite(tail, rest))).encode()]


def format_rows(
    rows: np.ndarray, specs: list[str], seps: list[str], integer: bool, last: str = ";"
) -> list[Piece]:
    """A fixed-size struct array (one row per element): each leaf followed by its separator,
    elements joined by ``,`` and a line break, then ``last`` (``Vector``: ``x;y;z;,``)."""
    rows = np.asarray(rows)
    n = rows.shape[0] if rows.ndim else 0
    if n == 0:
        return [last.encode()]
    width = len(specs)
    flat = rows.reshape(n, width)
    if all(s in _FAST_SPECS for s in specs):
        suffixes = [*seps[:-1], seps[-1] + ",\n", seps[-1] + last]
        ids = np.tile(np.arange(width, dtype=np.int16), n)
        ids[-1] = width
        ints = [s == "%d" for s in specs]
        if integer or all(ints) or not any(ints):  # one kind: no per-value mask
            return render(flat, integer or all(ints), ids, suffixes)
        return render(flat, np.tile(np.array(ints), n), ids, suffixes)
    unit = "".join(s + p for s, p in zip(specs, seps, strict=True))
    head = format_units(unit + ",\n", width, flat[:-1].reshape(-1), integer)
    tail_values = flat[-1].reshape(-1)
    tail = (unit + last) % tuple(_python_values(tail_values, integer))
    return [(head + (tail if integer else _fix_non_finite(tail, tail_values))).encode()]


def format_ragged(
    flat: np.ndarray, starts: np.ndarray, spec: str, integer: bool, last: str = ";"
) -> list[Piece]:
    """``MeshFace``-like records ``[k, v1..vk]`` stored flat: ``k;v1,..,vk;`` joined by ``,``
    and a line break, then ``last``. Formats are built per distinct size, not per record."""
    flat = np.asarray(flat).reshape(-1)
    count = len(starts)
    if count == 0:
        return [last.encode()]
    starts = np.asarray(starts, dtype=np.int64)
    sizes = np.diff(np.append(starts, flat.size)) - 1
    if integer or spec in _FAST_SPECS:
        return _ragged_fast(flat, starts, sizes, integer or spec == "%d", last)
    distinct, which = np.unique(sizes, return_inverse=True)
    units = ["%d;" + ",".join([spec] * int(k)) + ";,\n" for k in distinct]
    if len(distinct) == 1:
        text = format_units(units[0], int(distinct[0]) + 1, flat, integer)
    else:
        fmt_of = np.array(units, dtype=object)[which]
        parts = []
        for begin in range(0, count, CHUNK // 4):
            end = min(count, begin + CHUNK // 4)
            lo = int(starts[begin])
            hi = int(starts[end]) if end < count else flat.size
            parts.append(
                "".join(fmt_of[begin:end].tolist()) % tuple(_python_values(flat[lo:hi], integer))
            )
        text = "".join(parts)
        text = text if integer else _fix_non_finite(text, flat)
    return [(text[:-2] + last).encode()]  # the last record ends the array, not ",\n"


def _ragged_fast(
    flat: np.ndarray, starts: np.ndarray, sizes: np.ndarray, integer: bool, last: str
) -> list[Piece]:
    # suffix ids: 0 ',' between values, 1 ';' after a count, 2 ';,\n' ends a record,
    # 3 ';;,\n' an empty record; 4 and 5 the same two ends for the array's last record
    ids = np.zeros(flat.size, dtype=np.int8)
    empty = sizes == 0
    ids[starts] = np.where(empty, 3, 1)
    ends = starts + sizes
    ids[ends[~empty]] = 2
    ids[ends[-1]] += 2
    kinds: np.ndarray | bool = True
    if not integer:
        kinds = np.zeros(flat.size, dtype=bool)
        kinds[starts] = True
    return render(flat, kinds, ids, [",", ";", ";,\n", ";;,\n", ";" + last, ";;" + last])
