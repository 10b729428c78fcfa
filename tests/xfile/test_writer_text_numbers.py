"""Vectorised text numbers: the spelling of Python's ``%.9g`` / ``%d`` in each array kind's
punctuation, and float arrays of every kind (subnormals, +-0, inf, nan, extremes) that read
back bit-identical through our reader and through Python's own ``float``."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from addon.xfile import XObject, read
from addon.xfile.document import XDocument
from addon.xfile.standard_templates import standard_templates
from addon.xfile.writer import write
from addon.xfile.writer.text_digits import render
from addon.xfile.writer.text_numbers import format_list, format_ragged, format_rows

MSVC = {"nan": "1.#QNAN0", "inf": "1.#INF00", "-inf": "-1.#INF00"}


def g9(x: float) -> str:
    """The reference spelling: Python's own correctly rounded ``%.9g`` of the float32."""
    text = f"{float(np.float32(x)):.9g}"
    return MSVC.get(text, text)


def masses(values: np.ndarray, bits: int) -> np.ndarray:
    obj = XObject("ClothMasses", members={"NumPoints": len(values), "Mass": values})
    doc = XDocument(None, "txt", "0303", bits, standard_templates(), [], [obj])
    back = read(write(doc, "txt", bits)).objects[0]
    assert isinstance(back, XObject)
    return np.asarray(back["Mass"])


def same_bits(got: np.ndarray, want: np.ndarray) -> bool:
    """Bit-identical, except that any NaN matches any NaN."""
    nan = np.isnan(want)
    return bool((np.isnan(got) == nan).all() and (got[~nan].view(want.dtype) == want[~nan]).all())


def special_float32() -> np.ndarray:
    f = np.finfo(np.float32)
    values = [0.0, -0.0, np.inf, -np.inf, np.nan, f.max, -f.max, f.tiny, f.smallest_subnormal]
    values += [1e-45, 3e-39, 1e-4, 9.99999e-5, 1e9, 999999999.0, 123456789.0, 0.1, 1 / 3]
    return np.array(values, dtype=np.float32)


def test_float32_spelling_is_percent_9g_for_random_bit_patterns() -> None:
    rng = np.random.default_rng(3)
    bits = rng.integers(0, 2**32, size=200_000, dtype=np.uint64).astype(np.uint32)
    values = np.concatenate([bits.view(np.float32), special_float32()])
    text = b"".join(render(values, False, np.zeros(values.size, np.int8), [" "])).decode()
    assert text.split(" ")[:-1] == [g9(x) for x in values]


def decimal_float32(rng: np.random.Generator, n: int, low: int, high: int) -> np.ndarray:
    """Signed float32 with 1-9 significant digits at decimal exponents ``low..high``."""
    digits = rng.integers(1, 10, n)
    mantissa = np.round(rng.random(n) * 10.0**digits) / 10.0**digits
    return (mantissa * 10.0 ** rng.integers(low, high + 1, n) * rng.choice([-1, 1], n)).astype(
        np.float32
    )


def test_fixed_notation_spelling_is_percent_9g_beside_every_other_kind() -> None:
    """Plain decimals (exponents -4..8) take their own path; e-form, zeros and non-finite
    values among them are spelled apart and put in their place."""
    rng = np.random.default_rng(11)
    edges = [1e-4, -1e-4, 9.99999e-5, 1e8, 999999999.0, 123456789.0, 100.0, 1.0, 10.0, 0.5]
    edges += [12345678.0, 0.1, 1 / 3, 0.001, 5e-5, 1e9, 2.5e9, 1234.5, 0.0001234]
    fixed = decimal_float32(rng, 100_000, -5, 9)  # a few of every exponent fall outside
    mostly = np.concatenate([special_float32(), np.array(edges, np.float32), fixed])
    only = fixed[(np.abs(fixed) >= 1e-4) & (np.abs(fixed) < 999999999.5)]
    rare = np.concatenate([special_float32(), fixed[:5]])  # mostly not plain: one path
    for values in (mostly, only, rare):
        for sep in ([" "], [";,\n"]):
            ids = np.zeros(values.size, np.int8)
            text = b"".join(render(values, False, ids, sep)).decode()
            assert text.split(sep[0])[:-1] == [g9(x) for x in values]


def test_float32_text_reads_back_exactly_through_python_float() -> None:
    rng = np.random.default_rng(4)
    bits = rng.integers(0, 2**32, size=100_000, dtype=np.uint64).astype(np.uint32)
    values = bits.view(np.float32)
    values = values[np.isfinite(values)]
    tokens = b"".join(render(values, False, np.zeros(values.size, np.int8), [" "])).split()
    back = np.array([float(t) for t in tokens]).astype(np.float32)
    assert same_bits(back, values)


float32_bits = st.integers(0, 2**32 - 1).map(lambda b: np.uint32(b).view(np.float32))
float64_bits = st.integers(0, 2**64 - 1).map(lambda b: np.uint64(b).view(np.float64))


@settings(max_examples=60, deadline=None)
@given(st.lists(float32_bits | st.sampled_from(list(special_float32())), min_size=1, max_size=40))
def test_random_float32_arrays_round_trip_bit_identical(values: list) -> None:
    want = np.array(values, dtype=np.float32)
    assert same_bits(masses(want.astype(np.float64), 32).astype(np.float32), want)


@settings(max_examples=60, deadline=None)
@given(st.lists(float64_bits | st.sampled_from([0.0, -0.0, np.nan, 5e-324, 1.7e308]), min_size=1))
def test_random_float64_arrays_round_trip_bit_identical(values: list) -> None:
    want = np.array(values, dtype=np.float64)
    assert same_bits(masses(want, 64), want)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(-(2**40), 2**40), min_size=1, max_size=50), st.integers(1, 9))
def test_integer_lists_match_python_formatting(values: list[int], per_line: int) -> None:
    got = b"".join(format_list(np.array(values, dtype=np.int64), "%d", True, per_line=per_line))
    got = got.decode()
    lines = [values[i : i + per_line] for i in range(0, len(values), per_line)]
    want = ",\n".join(",".join(str(v) for v in line) for line in lines) + ";"
    assert got == want


@given(
    st.lists(st.integers(0, 10**8 - 1) | st.sampled_from([0, 9, 10, 10**7, 10**8 - 1])),
    st.sampled_from([np.int32, np.int64, np.uint32]),
)
def test_indices_below_1e8_match_python_formatting(values: list[int], dtype: type) -> None:
    """Indices and counts take the four-digit table path (two words, leading zeros masked)."""
    values = values or [0]
    got = b"".join(format_list(np.array(values, dtype=dtype), "%d", True, per_line=3)).decode()
    lines = [values[i : i + 3] for i in range(0, len(values), 3)]
    assert got == ",\n".join(",".join(str(v) for v in line) for line in lines) + ";"


def test_float_lists_use_a_spaced_comma_and_line_breaks() -> None:
    values = np.array([1.5, -0.0, 1e-7, 2.0, 1e20], dtype=np.float64)
    got = b"".join(format_list(values, "%.9g", False, per_line=2, sep=", ")).decode()
    assert got == "1.5, -0,\n1.00000001e-07, 2,\n1.00000002e+20;"


def test_ragged_records_with_empty_ones_match_python_formatting() -> None:
    records = [[3, 0, 1, 2], [0], [4, 10, 200, 3000, 45678], [1, 7], [0]]
    flat = np.array([v for r in records for v in r], dtype=np.int64)
    starts = np.cumsum([0] + [len(r) for r in records[:-1]])
    got = b"".join(format_ragged(flat, starts, "%d", True)).decode()
    want = ",\n".join(f"{r[0]};" + ",".join(map(str, r[1:])) + ";" for r in records) + ";"
    assert got == want
    assert got.endswith("1;7;,\n0;;;")


def test_rows_mixing_integer_and_float_leaves() -> None:
    """IndexedColor-like rows: an index, then four floats."""
    rows = np.array([[0, 1.0, 0.5, 0.25, 1.0], [12345, 0.1, 0.0, -2.5, 3e-6]])
    specs = ["%d"] + ["%.9g"] * 4
    seps = [";", ", ", ", ", ", ", ";;"]
    got = b"".join(format_rows(rows, specs, seps, False)).decode()
    want = ",\n".join(f"{int(r[0])};" + ", ".join(g9(x) for x in r[1:]) + ";;" for r in rows) + ";"
    assert got == want


def test_threaded_steps_keep_their_order(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Big arrays are formatted a few steps at a time in threads; the text is the same."""
    from addon.xfile.writer import text_digits

    rng = np.random.default_rng(5)
    values = rng.normal(size=9 * text_digits.STEP + 17).astype(np.float32)
    ids = (np.arange(values.size) % 3 == 2).astype(np.int8)
    monkeypatch.setattr(text_digits, "THREADS", 1)
    alone = b"".join(render(values, False, ids, [", ", ",\n"]))
    monkeypatch.setattr(text_digits, "THREADS", 3)
    threaded = render(values, False, ids, [", ", ",\n"])
    assert len(threaded) == 10
    assert b"".join(threaded) == alone
    assert alone.decode().replace(",\n", ", ").split(", ")[:-1] == [g9(x) for x in values]


def test_every_digit_count_and_trailing_zero_run_matches_python_formatting() -> None:
    """Edges of the word tricks: integers with every digit count and run of trailing zeros
    (the leading-zero mask comes from the lowest nonzero digit byte), and plain decimals that
    show 1..9 digits at every exponent (the digits move by 0..64 bits; 64 must clear)."""
    ints = [0] + [d * 10**k + r for k in range(8) for d in (1, 2, 5, 8, 9) for r in (0, 1)]
    ints += [10**k - 1 for k in range(1, 9)]
    ints = [v for v in ints if v < 10**8]
    got = b"".join(format_list(np.array(ints, dtype=np.int64), "%d", True, per_line=1))
    assert got.decode() == ",\n".join(str(v) for v in ints) + ";"
    floats = [
        s * d * 10.0**e for e in range(-4, 9) for d in (1, 2, 5, 9, 1.5, 12.5) for s in (1, -1)
    ]
    floats += [s * 123456789 * 10.0 ** (e - 8) for e in range(-4, 9) for s in (1, -1)]
    values = np.array(floats, dtype=np.float32)
    text = b"".join(render(values, False, np.zeros(values.size, np.int8), [" "])).decode()
    assert text.split(" ")[:-1] == [g9(x) for x in values]
