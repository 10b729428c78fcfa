"""Exponent tokens and MSVC's non-finite spellings: values equal float() bit for bit.

Exponents (``1.5e-05``, ``-2.5E+3``, MSVC's ``e+005``) go through the vectorised core on
their two halves while exact; MSVC's ``1.#INF00``, ``-1.#IND00`` and their small-precision
forms (``1.#J``, ``1.#R``...) are NaN / +-inf. Expected values: ``float()`` and hand tables.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from addon.xfile.scan import number_kernel, numbers
from addon.xfile.scan.numbers import scan_numbers

from .test_numbers import CHUNKS, bits, check, exponent_text, float_text, use_chunks


@pytest.fixture(params=CHUNKS, ids=lambda c: f"chunk{c}")
def chunk(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    for name, value in use_chunks(request.param).items():
        monkeypatch.setattr(numbers, name, value)
    return int(request.param)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tokens=st.lists(exponent_text, min_size=1, max_size=60), chunk=st.sampled_from(CHUNKS))
def test_exponent_tokens_match_float(tokens: list[bytes], chunk: int) -> None:
    """Every exponent spelling, bit for bit; the vectorised path takes those within 10**22."""
    text = b",".join(tokens) + b";}"
    with pytest.MonkeyPatch.context() as mp:
        for name, value in use_chunks(chunk).items():
            mp.setattr(numbers, name, value)
        check(text, tokens, len(text) - 1)


def test_exponent_edges_of_the_exact_range() -> None:
    """|power| 22 is vectorised, 23 is not; both equal float(); digits shift the power."""
    toks = [b"1e22", b"1e-22", b"1.5e23", b"15e-22", b"123456789012345e7", b"0.5e23",
            b"1e23", b"1e-23", b"1.5e24", b"15e-23",
            b"-0e0", b"-0.0e-5", b"9.999999e+022"]  # fmt: skip
    fast = [True] * 6 + [False] * 4 + [True, True, True]
    text = b" ".join(toks)
    tokens = number_kernel.convert(number_kernel.work_buffer(text, 0, len(text)))
    assert tokens.fast.tolist() == fast
    check(text, toks, len(text))


# --- MSVC non-finite spellings -------------------------------------------------------------

SPECIALS = [
    (b"-1.#IND00", math.nan),
    (b"1.#IND00", math.nan),
    (b"1.#QNAN0", math.nan),
    (b"-1.#QNAN0", math.nan),
    (b"1.#SNAN0", math.nan),
    (b"1.#INF00", math.inf),
    (b"-1.#INF00", -math.inf),
    (b"+1.#INF00", math.inf),
    (b"1.#INF00e+000", math.inf),
    (b"-1.#IND", math.nan),
    (b"1.#INF", math.inf),
    (b"1.#inf00", math.inf),
    # small precisions: MSVC rounds the marker's letters like digits ('I' + 1 = 'J')
    (b"1.#J", math.inf),  # printf("%.2f", INFINITY)
    (b"-1.#J", -math.inf),
    (b"1.#IO", math.inf),  # "%.3f"
    (b"-1.#IO", -math.inf),
    (b"1.#R", math.nan),  # QNAN with "%.2f"
    (b"-1.#R", math.nan),
    (b"1.#QO", math.nan),  # "%.3f"
    (b"1.#QNB", math.nan),  # "%.4f"
    (b"1.#T", math.nan),  # SNAN with "%.2f"
    (b"1.#SO", math.nan),
    (b"1.#SNB", math.nan),
    (b"1.#QNAN", math.nan),
    (b"-1.#IND0", math.nan),
    (b"1.#j", math.inf),
    (b"1.#J00e+000", math.inf),
]


def test_msvc_spellings(chunk: int) -> None:
    text = b"1.0;" + b";".join(t for t, _ in SPECIALS) + b";2.0; }"
    values, end = scan_numbers(text, 0)
    assert bits(values) == bits([1.0] + [v for _, v in SPECIALS] + [2.0])
    assert end == len(text) - 1


def test_many_specials_in_a_long_run(chunk: int) -> None:
    toks = [b"-1.#IND00", b"0.5", b"1.#INF00"] * 300
    text = b",".join(toks) + b";;\n}"
    values, end = scan_numbers(text, 0)
    assert bits(values) == bits([math.nan, 0.5, math.inf] * 300)
    assert end == len(text) - 1


@settings(max_examples=200, deadline=None)
@given(
    picks=st.lists(st.integers(0, len(SPECIALS) - 1), min_size=1, max_size=30),
    numbers_between=st.lists(st.floats(-1e6, 1e6).map(lambda v: b"%.6e" % v), max_size=30),
    chunk=st.sampled_from(CHUNKS),
)
def test_random_runs_with_msvc_spellings(
    picks: list[int], numbers_between: list[bytes], chunk: int
) -> None:
    """MSVC spellings anywhere among exponent numbers: each one's value, the run whole."""
    toks: list[bytes] = []
    expected: list[float] = []
    for i, pick in enumerate(picks):
        tok, value = SPECIALS[pick]
        toks.append(tok)
        expected.append(value)
        if i < len(numbers_between):
            toks.append(numbers_between[i])
            expected.append(float(numbers_between[i]))
    text = b";,\n".join(toks) + b";;\n}"
    with pytest.MonkeyPatch.context() as mp:
        for name, value in use_chunks(chunk).items():
            mp.setattr(numbers, name, value)
        values, end = scan_numbers(text, 0)
    assert bits(values) == bits(expected)
    assert end == len(text) - 1


def test_rounded_spellings_glued_to_names_are_not_msvc() -> None:
    """``1.#Jx``: a name glued on, so '1.' is the number and '#' starts a comment."""
    for tok in (b"1.#Jx", b"1.#Rz", b"1.#IOa"):
        values, end = scan_numbers(b"2;" + tok + b" }", 0)
        assert values.tolist() == [2.0, 1.0] and end == 4


def test_special_at_end_of_data() -> None:
    values, end = scan_numbers(b"1;-1.#IND00", 0)
    assert math.isnan(values[1]) and end == 11


def test_reader_takes_exponents_and_rounded_msvc_spellings() -> None:
    """Through the whole reader: a Mesh whose numbers mix %e, %g and MSVC's %.2f markers."""
    from addon.xfile import read

    text = (
        b"xof 0303txt 0032\nMesh m {\n 3;\n 1.500000e-05;-2.5E+3;1.#J;,\n"
        b" -1.#J;1.#R;7e0;,\n 1e-300;-1.#IND00;1.#QO;;\n 1;\n 3;0,1,2;;\n}\n"
    )
    mesh = next(o for o in read(text).objects if getattr(o, "template", "") == "Mesh")
    got = mesh["vertices"].ravel().tolist()
    want = [1.5e-05, -2500.0, math.inf, -math.inf, math.nan, 7.0, 1e-300, math.nan, math.nan]
    assert bits(got) == bits(want)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tokens=st.lists(
        st.one_of(
            exponent_text,
            float_text,
            st.sampled_from([t for t, _ in SPECIALS] + [b"1e5e5", b"e5", b"1e", b"-"]),
        ),
        min_size=1,
        max_size=50,
    )
)
def test_exponent_hint_changes_nothing_but_speed(tokens: list[bytes]) -> None:
    """convert(exponents=True) (after a chunk full of %e) gives the same values and flags."""
    text = b" ".join(tokens)
    buf = number_kernel.work_buffer(text, 0, len(text))
    plain = number_kernel.convert(buf)
    hinted = number_kernel.convert(buf, exponents=True)
    assert hinted.fast.tolist() == plain.fast.tolist()
    assert bits(hinted.values[hinted.fast]) == bits(plain.values[plain.fast])
    for tok, value, fast in zip(tokens, hinted.values.tolist(), hinted.fast.tolist(), strict=True):
        if fast:
            assert bits([value]) == bits([float(tok)])
