"""Numeric runs of text .X files to arrays.

A numeric run is a stretch of the text made only of numbers and the separators ``,`` ``;``
and white space (``1.0;2.0;3.0;,`` ...). The template-driven parser consumes its values like
a binary FLOAT_LIST, so one call converts a whole vertex array.

Run rules (the reader relies on them):

- run bytes are the separators (``,`` ``;`` space, tab, CR, LF, VT, FF) and the number bytes
  ``0-9 + - . e E``; MSVC's non-finite spellings (``-1.#IND00``, ``1.#QNAN0``, ``1.#INF00``,
  ``1.#SNAN0``, optionally with an exponent ``1.#INF00e+000``) stay inside the run, and so do
  their forms printed with a small precision, where MSVC rounds the letters like digits:
  ``%.2f`` gives ``1.#J`` (INF and IND), ``1.#R`` (QNAN), ``1.#T`` (SNAN); ``%.3f`` gives
  ``1.#IO``, ``1.#QO``, ``1.#SO``; ``%.4f`` ``1.#QNB``, ``1.#SNB``. ``#J`` and ``#IO`` read as
  +-infinity (an IND printed that way is indistinguishable), the QNAN/SNAN forms as NaN;
  ``%.1f`` (``1.$``) and ``%.0f`` (``1``) lose the marker and cannot be recognised;
- the run ends at the first other byte; if that byte is a name byte (letter, ``_``, non-ASCII)
  glued to the run's last token (``1.0 end``: the ``e``), that token is left out of the run;
- a token (a stretch between separators) is converted exactly like Python's ``float``; MSVC
  spellings give NaN / +-inf; anything else is a :class:`NumberSyntaxError`.
"""

from __future__ import annotations

import re

import numpy as np

from .number_kernel import PAD, convert, work_buffer

SEPARATORS = b" \t\n\r\v\f,;"
NUMBER_BYTES = b"0123456789+-.eE"
# Largest stretch converted per vectorised step: its temporaries stay near the L2 cache size.
CHUNK_BYTES = 1 << 18
FIRST_CHUNK_BYTES = 1 << 10  # the first step's size, and the smallest
# Peak memory stays within MEMORY_PER_BYTE x the run's bytes + MEMORY_SLACK. A step's kernel
# temporaries are bounded by TEMPORARY_PER_BYTE and TEMPORARY_PER_TOKEN (plus the output's 8
# per token): steps are sized by the token density seen so far and capped in tokens
# (number_kernel.convert's max_tokens), so they fit the room left by the run's bytes.
MEMORY_PER_BYTE = 10
MEMORY_SLACK = (240 - 8) << 10  # 256 KiB less the kernel's and the parser's own objects
TEMPORARY_PER_BYTE = 12
TEMPORARY_PER_TOKEN = 96 + 8
SHORT_RUN_BYTES = 4096  # a run that ends this soon takes the plain path (numpy costs more)

_RUN_BYTES = re.compile(rb"[0-9eE+\-.,; \t\n\r\v\f]*")
_TOKEN = re.compile(rb"[^,; \t\n\r\v\f]+")
_NUMBER_TOKEN = re.compile(rb"[0-9eE+\-.]+")
_SEPARATOR = re.compile(rb"[,; \t\n\r\v\f]")
_SEPARATOR_RUN = re.compile(rb"[,; \t\n\r\v\f]*")
# MSVC's markers after "1.#", full and rounded to a small precision (longest first)
_MSVC_MARKERS = b"INF|IND|QNAN|SNAN|QNB|SNB|QO|SO|IO|J|R|T"
_MSVC_INFINITE = frozenset((b"INF", b"IO", b"J"))
_MSVC = re.compile(
    rb"([+-]?)[0-9]+\.#(" + _MSVC_MARKERS + rb")[0-9]*(?:[eE][+-]?[0-9]+)?", re.IGNORECASE
)
_NAME_BYTES = frozenset(
    b"_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" + bytes(range(0x80, 0x100))
)


class NumberSyntaxError(ValueError):
    """A token in a numeric run that is not a number; ``offset`` is its byte offset."""

    def __init__(self, token: bytes, offset: int) -> None:
        super().__init__(f"not a number: {token[:40]!r}")
        self.token = token
        self.offset = offset


def msvc_value(token: bytes | bytearray) -> float | None:
    """MSVC printf's non-finite spellings (``-1.#IND00``...) as NaN / +-inf, else ``None``."""
    m = _MSVC.fullmatch(token)
    if m is None:
        return None
    if m.group(2).upper() in _MSVC_INFINITE:
        return float("-inf") if m.group(1) == b"-" else float("inf")
    return float("nan")


def convert_token(token: bytes | bytearray, offset: int) -> float:
    """One token's value, exactly ``float(token)``; MSVC spellings; or NumberSyntaxError."""
    if b"#" not in token:
        try:
            return float(token)
        except ValueError:
            pass
    else:
        special = msvc_value(token)
        if special is not None:
            return special
    raise NumberSyntaxError(bytes(token), offset)


def _token_start(data: bytes | bytearray | memoryview, start: int, pos: int) -> int:
    """Offset of the token holding ``pos - 1`` (``pos`` itself when ``pos - 1`` is a separator)."""
    while pos > start and data[pos - 1] not in SEPARATORS:
        pos -= 1
    return pos


def run_end(data: bytes | bytearray | memoryview, start: int, limit: int | None = None) -> int:
    """Where the numeric run starting at ``start`` ends (see the module's run rules).

    With ``limit``, looks no further: returns ``limit`` when the run reaches it.
    """
    n = len(data) if limit is None else limit
    pos = start
    while True:
        m = _RUN_BYTES.match(data, pos, n)
        stop = m.end() if m else pos
        if stop >= n:
            return n
        if data[stop] == 0x23:  # '#': an MSVC non-finite token keeps the run going
            tok = _token_start(data, start, stop)
            mm = _MSVC.match(data, tok)
            if (
                mm
                and mm.end() > stop
                and (mm.end() >= len(data) or data[mm.end()] not in _NAME_BYTES)
            ):
                pos = mm.end()
                continue
        if data[stop] in _NAME_BYTES:
            return _token_start(data, start, stop)
        return stop


def scan_numbers(data: bytes | bytearray | memoryview, start: int) -> tuple[np.ndarray, int]:
    """The numeric run starting at ``start``: its values (float64, in order) and its end.

    The run is the longest stretch of numbers and separators (``,`` ``;`` white space) from
    ``start``; ``end`` is the offset of the first byte after it (a comment, a brace, a name,
    a string...). A trailing fragment of a following name (``e`` of ``end``) is not part of
    the run. Raises :class:`NumberSyntaxError` with the absolute byte offset of a bad token.
    """
    parts, end = scan_number_parts(data, start)
    if len(parts) == 1:
        return parts[0][1], end
    return (np.concatenate([values for _, values in parts]) if parts else np.empty(0)), end


def scan_number_parts(
    data: bytes | bytearray | memoryview, start: int
) -> tuple[list[tuple[int, np.ndarray]], int]:
    """:func:`scan_numbers` as the stretches it converted: (byte offset, values) each, in order.

    The reader takes the parts as they are: joining a long run's values into one array first
    would write every value once more, into fresh memory.
    """
    n = len(data)
    probe = min(n, start + SHORT_RUN_BYTES)
    m = _RUN_BYTES.match(data, start, probe)
    if m is None or m.end() < probe or probe == n:
        values, end = _scan_plain(data, start)
        return [(start, values)], end
    if isinstance(data, memoryview):
        data = data.tobytes()  # rfind and regexes over slices need a bytes-like with methods
    return _scan_chunked(data, start)


def _scan_plain(data: bytes | bytearray | memoryview, start: int) -> tuple[np.ndarray, int]:
    """Token by token with ``float``: the reference, and the fastest way for short runs."""
    end = run_end(data, start)
    values = [convert_token(m.group(), m.start()) for m in _TOKEN.finditer(data, start, end)]
    return np.array(values, dtype=np.float64), end


def _scan_chunked(data: bytes | bytearray, start: int) -> tuple[list[tuple[int, np.ndarray]], int]:
    """Vectorised, over stretches that end at separators, until a token holds the run's end.

    Each stretch's values are kept as a part, with the stretch's byte offset. Steps are as big
    as the memory limit allows on the bytes the run surely has: those converted, or more when
    a regex proves the run goes on (cheaper than converting in small steps while the run is
    short; once the converted bytes allow full steps, no regex runs ahead).
    """
    n = len(data)
    parts: list[tuple[int, np.ndarray]] = []
    count = 0  # values kept so far (8 bytes each)
    pos = start
    known = start  # the run surely reaches this far
    proving = True  # until the run's end is seen or steps are full without a proof
    end = n
    exponents = False  # the last chunk was full of exponent tokens ("%e" files)
    while pos < n:
        known = max(known, pos)
        density = (count + 1) / (pos - start + 8)  # tokens per byte so far
        if proving:
            want = start + _run_bytes_for(CHUNK_BYTES, 8 * count, density)
            if want > known:
                known, proving = _proven_end(data, known, min(n, want + CHUNK_BYTES))
        size, tokens = _step(_room(known - start, 8 * count), density)
        # a step the converted bytes alone allow needs no proof: the slow path finds an end
        # in it, and a regex over every byte of a long run costs a tenth of reading it
        if (
            proving
            and pos + size > known
            and size > _step(_room(pos - start, 8 * count), density)[0]
        ):
            known, proving = _proven_end(data, known, min(n, pos + size + 1))
        # with the run's end in sight, the step stops at its proof (a token boundary): the
        # bytes after the run (braces, names) would only go through the slow path
        capped = not proving and pos < known <= pos + size
        stop = _stretch_end(data, pos, known if capped else pos + size)
        values, valid, run_stop, exponents, stop = _convert_stretch(
            data, pos, stop, exponents, tokens
        )
        if valid:  # a part's place is its first value's (errors name it)
            lead = _SEPARATOR_RUN.match(data, pos)
            parts.append((lead.end() if lead else pos, values[:valid]))
        count += valid
        del values
        if run_stop is not None:
            end = run_stop
            break
        pos = stop
        if capped and pos == known:
            known = run_end(data, known)  # further only past an MSVC token
            if known == pos:
                end = pos
                break
    return parts, end


def _room(run: int, held: int) -> int:
    """Bytes the memory limit on ``run`` bytes leaves for a step beside the output (``held``
    bytes now, and a quarter of that spare)."""
    return MEMORY_PER_BYTE * run + MEMORY_SLACK - held - held // 4


def _step(room: int, density: float) -> tuple[int, int]:
    """The next stretch's bytes (if its tokens are as dense as ``density``) and most tokens."""
    per_byte = TEMPORARY_PER_BYTE + TEMPORARY_PER_TOKEN * min(0.5, density)
    size = max(1, min(CHUNK_BYTES, max(FIRST_CHUNK_BYTES, int(room / per_byte))))
    return size, (room - TEMPORARY_PER_BYTE * size) // TEMPORARY_PER_TOKEN


def _run_bytes_for(step: int, held: int, density: float) -> int:
    """The run's length at which :func:`_step` allows ``step`` bytes."""
    per_byte = TEMPORARY_PER_BYTE + TEMPORARY_PER_TOKEN * min(0.5, density)
    need = held + held // 4 + int(per_byte * step) - MEMORY_SLACK
    return max(0, need) // MEMORY_PER_BYTE + 1


def _proven_end(data: bytes | bytearray, pos: int, limit: int) -> tuple[int, bool]:
    """How far the run from before ``pos`` surely goes, looking up to ``limit``, and whether it
    may go further. Up to its last separator: a name glued to its last token drops that token;
    an MSVC ``#`` stops the regex early, which is safe."""
    m = _RUN_BYTES.match(data, pos, limit)
    stop = m.end() if m else pos
    if stop >= len(data):
        return stop, False
    cut = _last_separator(data, pos, stop)
    return (cut + 1 if cut >= 0 else pos), stop >= limit


def _last_separator(data: bytes | bytearray, pos: int, limit: int) -> int:
    """Offset of the last separator in ``data[pos:limit]``, -1 if none."""
    near = max(pos, limit - 256)  # a separator is almost always close: no scan of the stretch
    cut = max(data.rfind(c, near, limit) for c in SEPARATORS)
    if cut < near and near > pos:
        cut = max(data.rfind(c, pos, near) for c in SEPARATORS)
    return cut


def _stretch_end(data: bytes | bytearray, pos: int, limit: int) -> int:
    """An end for the stretch from ``pos``: just after the last separator before ``limit``."""
    n = len(data)
    if limit >= n:
        return n
    cut = _last_separator(data, pos, limit)
    if cut >= pos:
        return cut + 1
    m = _SEPARATOR.search(data, limit)  # one token longer than the stretch: take it whole
    return m.start() if m else n


def _convert_stretch(
    data: bytes | bytearray, begin: int, end: int, exponents: bool, max_tokens: int
) -> tuple[np.ndarray, int, int | None, bool, int]:
    """Values of ``data[begin:end]`` (the first ``valid`` of them), where the run ends if it
    ends in there, whether exponent tokens were many (``exponents``: expect them, a hint for
    speed only), and where the converted stretch stops (before ``end`` past ``max_tokens``)."""
    tokens = convert(work_buffer(data, begin, end), exponents, max_tokens)
    values = tokens.values
    shift = begin - PAD
    stop = end if tokens.cut is None else tokens.cut + shift
    for i in np.flatnonzero(~tokens.fast).tolist():
        s = int(tokens.starts[i]) + shift
        e = int(tokens.ends[i]) + shift
        token = data[s:e]
        if _NUMBER_TOKEN.fullmatch(token):
            values[i] = convert_token(token, s)
            continue
        run_stop = run_end(data, s, e)
        if run_stop >= e:  # an MSVC spelling
            values[i] = convert_token(token, s)
            continue
        tail = [convert_token(m.group(), m.start()) for m in _TOKEN.finditer(data, s, run_stop)]
        values[i : i + len(tail)] = tail  # at most one: data[s:run_stop] holds no separator
        return values, i + len(tail), run_stop, False, stop
    return values, len(values), None, tokens.exponents, stop
