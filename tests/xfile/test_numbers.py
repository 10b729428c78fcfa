"""Numeric runs: values equal Python's float() bit for bit, run ends, errors with offsets.

Expected values come from ``float()`` on each token (the tests build the text from a token
list, so the token boundaries are known independently of the scanner) and from hand-written
tables; the scanner is run with several chunk sizes so tokens straddle chunk edges.
"""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from addon.xfile.scan import number_kernel, numbers
from addon.xfile.scan.numbers import NumberSyntaxError, scan_numbers

CHUNKS = [7, 16, 61, 1 << 20]  # tiny ones put token and chunk edges everywhere


def use_chunks(chunk: int) -> dict[str, int]:
    """Settings that force the vectorised path with ``chunk``-byte steps (the big one: defaults)."""
    if chunk >= 1 << 20:
        return {}
    return {"CHUNK_BYTES": chunk, "FIRST_CHUNK_BYTES": max(1, chunk // 3), "SHORT_RUN_BYTES": 0}


@pytest.fixture(params=CHUNKS, ids=lambda c: f"chunk{c}")
def chunk(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    for name, value in use_chunks(request.param).items():
        monkeypatch.setattr(numbers, name, value)
    return int(request.param)


def bits(values: list[float] | np.ndarray) -> list[int]:
    """Bit patterns, with every NaN folded to one pattern (the sign of a NaN is not data)."""
    out = []
    for v in np.asarray(values, dtype=np.float64).tolist():
        out.append(-1 if math.isnan(v) else struct.unpack("<q", struct.pack("<d", v))[0])
    return out


def check(text: bytes, tokens: list[bytes], end: int, start: int = 0) -> None:
    values, got_end = scan_numbers(text, start)
    assert values.dtype == np.float64
    assert bits(values) == bits([float(t) for t in tokens])
    assert got_end == end


# --- exact values -----------------------------------------------------------------------

EXACT_CASES = [
    b"0",
    b"-0",
    b"+0",
    b"0.0",
    b"-0.0",
    b".5",
    b"-.5",
    b"5.",
    b"+1",
    b"-1.500000",
    b"0.123456",
    b"123456.654321",
    b"999999999999999",
    b"0.999999999999999",
    b"1.00000000000000",
    b"9007199254740992",
    b"9007199254740993",
    b"18446744073709551616",
    b"1e22",
    b"1e23",
    b"1e-22",
    b"1e-23",
    b"1.5e-05",
    b"1.5E+05",
    b"2e0",
    b"-2.5e-3",
    b"123456789012345e-22",
    b"123456789012345e7",
    b"1234567890123456",
    b"0.1234567890123456",
    b"4.9e-324",
    b"2.2250738585072014e-308",
    b"1e309",
    b"-1e400",
    b"1e-400",
    b"0.30000000000000004",
    b"000000000000000000001.5",
    b"1.000000000000000000000",
    b"00.00000000000000000001",
    b"7e0000000000000000000001",
]


def test_exact_cases(chunk: int) -> None:
    text = b";".join(EXACT_CASES) + b";"
    check(text, EXACT_CASES, len(text))


def test_every_exact_case_alone(chunk: int) -> None:
    for tok in EXACT_CASES:
        check(b" " + tok + b" }", [tok], len(tok) + 2)


def test_powers_of_ten_and_digit_counts() -> None:
    toks = []
    for e in range(-25, 26):
        toks += [b"1e%d" % e, b"7.123456789012345e%d" % e, b"-9.99999999999999e%d" % e]
    for d in range(1, 19):
        toks += [b"9" * d, b"0." + b"7" * d, b"3" * d + b".5"]
    text = b",\n".join(toks)
    check(text, toks, len(text))


# mantissa (sign, digits, point) and exponent (sign, 1 to 4 digits, zero-padded like MSVC's
# "%e" e+005), with exponents across the exact range (|power| <= 22) and beyond it
exponent_text = st.builds(
    lambda mantissa, e, esign, power, width: mantissa + e + esign + b"%0*d" % (width, power),
    st.from_regex(rb"\A[+-]?([0-9]{1,17}\.?[0-9]{0,17}|\.[0-9]{1,17})\Z"),
    st.sampled_from([b"e", b"E"]),
    st.sampled_from([b"", b"-", b"+"]),
    st.integers(0, 40),
    st.integers(1, 4),
)

float_text = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(lambda v: b"%f" % v),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda v: repr(v).encode()),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda v: b"%.6e" % v),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda v: b"%.15g" % v),
    st.floats(-1e4, 1e4).map(lambda v: b"%.3f" % v),
    st.integers(-(2**63), 2**63).map(lambda v: b"%d" % v),
    st.from_regex(rb"\A[+-]?([0-9]{1,20}\.?[0-9]{0,20}|\.[0-9]{1,20})([eE][+-]?[0-9]{1,3})?\Z"),
    exponent_text,
    st.floats(allow_nan=False, allow_infinity=False).map(lambda v: b"%g" % v),
)
separator = st.from_regex(rb"\A[,; \t\r\n]{1,4}\Z")
terminator = st.sampled_from([b"", b"}", b" }", b"{", b"//c", b"# c", b'"s"', b"<", b"[", b"*"])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tokens=st.lists(float_text, max_size=40),
    seps=st.lists(separator, min_size=41, max_size=41),
    lead=st.sampled_from([b"", b" ", b";", b"\n  "]),
    tail=terminator,
    chunk=st.sampled_from(CHUNKS),
)
def test_random_runs_match_float(
    tokens: list[bytes], seps: list[bytes], lead: bytes, tail: bytes, chunk: int
) -> None:
    body = lead + b"".join(t + s for t, s in zip(tokens, seps, strict=False))
    text = b"Mesh {" + body + tail
    with pytest.MonkeyPatch.context() as mp:
        for name, value in use_chunks(chunk).items():
            mp.setattr(numbers, name, value)
        check(text, tokens, len(text) - len(tail.lstrip(b" ")), start=6)


@settings(max_examples=300, deadline=None)
@given(
    tokens=st.lists(st.from_regex(rb"\A[0-9+\-.eE]{1,8}\Z"), max_size=12),
    chunk=st.sampled_from(CHUNKS),
)
def test_random_garbage_tokens_agree_with_float(tokens: list[bytes], chunk: int) -> None:
    """Tokens made of number bytes in any order: float()'s value, or an error at the first bad."""
    text = b" ".join(tokens) + b" }"
    offsets = []
    pos = 0
    for t in tokens:
        offsets.append(pos)
        pos += len(t) + 1
    expected: list[float] = []
    bad: int | None = None
    for t, off in zip(tokens, offsets, strict=True):
        try:
            expected.append(float(t))
        except ValueError:
            bad = off
            break
    with pytest.MonkeyPatch.context() as mp:
        for name, value in use_chunks(chunk).items():
            mp.setattr(numbers, name, value)
        if bad is None:
            values, end = scan_numbers(text, 0)
            assert bits(values) == bits(expected)
            assert end == len(text) - 1
        else:
            with pytest.raises(NumberSyntaxError) as err:
                scan_numbers(text, 0)
            assert err.value.offset == bad


# --- run ends ------------------------------------------------------------------------------

RUN_ENDS = [
    # text, values, end
    (b"", [], 0),
    (b"}", [], 0),
    (b"   ;;,\n", [], 7),
    (b"1.0;2.0;3.0;,\n}", [1.0, 2.0, 3.0], 14),
    (b"1.0; end", [1.0], 5),  # the e of 'end' stays out
    (b"1.0;\nEffectParam", [1.0], 5),
    (b"1.0;2.0abc", [1.0], 4),  # a name glued to a number: the whole token stays out
    (b"1.0; -x", [1.0], 5),
    (b"1; 2e_", [1.0], 3),
    (b"1.0//comment\n2", [1.0], 3),
    (b"1.0 # comment\n2", [1.0], 4),
    (b"1.0;#comment", [1.0], 4),
    (b"3;{Name}", [3.0], 2),
    (b'1;"text"', [1.0], 2),
    (b"1.0;1.#INFO", [1.0, 1.0], 6),  # not MSVC: '1.' is a number, '#...' a comment
    (b"1; 1.#IND00x5 }", [1.0, 1.0], 5),  # a glued name: not MSVC, '#' starts a comment
    (b"7 \xc3\xa9", [7.0], 2),  # a non-ASCII name byte
    (b"1.5e", None, None),  # lone exponent at the end of data: an error
]


@pytest.mark.parametrize(("text", "values", "end"), RUN_ENDS)
def test_run_ends(text: bytes, values: list[float] | None, end: int | None, chunk: int) -> None:
    if values is None:
        with pytest.raises(NumberSyntaxError):
            scan_numbers(text, 0)
        return
    got, got_end = scan_numbers(text, 0)
    assert bits(got) == bits(values)
    assert got_end == end


def test_start_offset_and_buffer_types(chunk: int) -> None:
    raw = b"Vector v { 1.5; -2; 3e1;; }"
    for data in (raw, bytearray(raw), memoryview(raw)):
        values, end = scan_numbers(data, 10)
        assert values.tolist() == [1.5, -2.0, 30.0]
        assert end == raw.index(b"}")


def test_start_at_end_of_data() -> None:
    values, end = scan_numbers(b"1.0", 3)
    assert values.size == 0 and end == 3


# --- errors --------------------------------------------------------------------------------

ERRORS = [
    (b"1.0; 1.2.3; 4", 5, b"1.2.3"),
    (b"1;--1;", 2, b"--1"),
    (b"1e;", 0, b"1e"),
    (b"2, -;", 3, b"-"),
    (b"1.0; . ;", 5, b"."),
    (b"1; 2; 3e+; }", 6, b"3e+"),
    (b"1; 2; e5 }", 6, b"e5"),
    (b"1; 1-2 }", 3, b"1-2"),
    (b"1; 1.#IND00-5 }", 3, b"1.#IND00-5"),
    (b"1;+-2", 2, b"+-2"),
    (b"1;1e5.5", 2, b"1e5.5"),
    (b"0+ }", 0, b"0+"),  # regression: a lone '+' was once taken for the decimal point
    (b"7;12-4;", 2, b"12-4"),
    (b"1;5;. 3", 4, b"."),
    (b"1;1e00000000.5;", 2, b"1e00000000.5"),  # a point in a long exponent
    (b"1;1e5.5;", 2, b"1e5.5"),
]


@pytest.mark.parametrize(("text", "offset", "token"), ERRORS)
def test_errors_have_exact_offsets(text: bytes, offset: int, token: bytes, chunk: int) -> None:
    with pytest.raises(NumberSyntaxError) as err:
        scan_numbers(text, 0)
    assert err.value.offset == offset
    assert err.value.token == token


def test_first_bad_token_wins_after_many_good(chunk: int) -> None:
    good = b"0.5;" * 5000
    text = good + b"1..2; --3; }"
    with pytest.raises(NumberSyntaxError) as err:
        scan_numbers(text, 0)
    assert err.value.offset == len(good)


def test_error_offset_is_absolute() -> None:
    text = b"x" * 100 + b" 1, 2, 3-, 4 }"
    with pytest.raises(NumberSyntaxError) as err:
        scan_numbers(text, 100)
    assert err.value.offset == 107


# --- pathological input --------------------------------------------------------------------


def test_huge_token_and_long_separator_stretch(chunk: int) -> None:
    big = b"1" + b"0" * 5000 + b".25"
    text = b";" * 3000 + big + b" " * 3000 + b"2}"
    values, end = scan_numbers(text, 0)
    assert bits(values) == bits([float(big), 2.0])
    assert end == len(text) - 1


def test_fast_path_takes_the_common_tokens() -> None:
    """The exporters' spellings stay on the vectorised path; the rest go to the exact one."""
    fast = [b"-5.000000", b"0.103675", b"4", b"1000000", b"+1", b".5", b"5.", b"-0",
            b"12345678901234.5", b"-1234567890123.5", b"999999999999999",
            b"1e5", b"1.5e-05", b"-2.5E+3", b"1.e5", b"7e-22", b"123456789012345e7"]  # fmt: skip
    slow = [b"1e23", b"1e-23", b"1.5e", b"e5", b"1e5.", b"1e+", b".e5", b"1e5e5",
            b"1.#IND00", b"1234567890123456", b"0.1234567890123456", b"1.2.3", b"-",
            b".", b"0+", b"1-2", b"}", b"ab", b"1e"]  # fmt: skip
    text = b" ".join(fast + slow)
    tokens = number_kernel.convert(number_kernel.work_buffer(text, 0, len(text)))
    assert tokens.fast.tolist() == [True] * len(fast) + [False] * len(slow)
    assert bits(tokens.values[: len(fast)]) == bits([float(t) for t in fast])


def test_long_regular_run_matches_float() -> None:
    rng = np.random.default_rng(7)
    vals = rng.normal(scale=100.0, size=20000)
    toks = [b"%f" % v for v in vals] + [b"%d" % i for i in rng.integers(0, 10**6, 5000)]
    text = b";,\n".join(toks) + b";;\n}"
    check(text, toks, len(text) - 1)


def test_chunks_without_a_point_take_the_integer_path() -> None:
    """No '.' in the chunk: signs, -0, long integers and bad tokens still decided right."""
    good = [b"-0", b"+7", b"4", b"-12345678", b"123456789012345", b"0000000001", b"1e5"]
    bad = [b"-", b"0-1", b"1+", b"--2", b"1234567890123456"]  # the last is slow, not bad
    text = b" ".join(good + bad)
    tokens = number_kernel.convert(number_kernel.work_buffer(text, 0, len(text)))
    assert tokens.fast.tolist() == [True] * len(good) + [False] * len(bad)
    assert bits(tokens.values[: len(good)]) == bits([float(t) for t in good])


def test_long_run_in_an_mmap(tmp_path: object) -> None:
    """A memory-mapped file reads like bytes (its rfind takes bytes only, not ints)."""
    import mmap
    from pathlib import Path

    toks = [b"%d.%03d" % (i, i % 1000) for i in range(3000)]
    text = b"Mesh {" + b";,\n".join(toks) + b";;\n}"
    path = Path(str(tmp_path)) / "run.txt"
    path.write_bytes(text)
    with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as m:
        for chunk in CHUNKS:
            with pytest.MonkeyPatch.context() as mp:
                for name, value in use_chunks(chunk).items():
                    mp.setattr(numbers, name, value)
                values, end = scan_numbers(m, 6)  # type: ignore[arg-type]
            assert bits(values) == bits([float(t) for t in toks])
            assert end == len(text) - 1
