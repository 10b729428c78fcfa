"""Steps of the vectorised scanner: a token cap cuts a step exactly, output kept either way.

The memory limit (issue 7) sizes steps by the token density seen so far and caps their tokens;
a dense stretch after a sparse one is cut short. Values must not depend on where it is cut,
nor on how the output is cut into steps.
"""

from __future__ import annotations

import numpy as np
import pytest

from addon.xfile.scan.number_kernel import PAD, convert, work_buffer
from addon.xfile.scan.numbers import scan_numbers


@pytest.mark.parametrize("cap", [1, 2, 5, 1000])
def test_token_cap_takes_a_prefix_of_the_tokens(cap: int) -> None:
    text = b"1.5,-2e3;0.25 7,1.#INF00,12345678901234567,3;"
    whole = convert(work_buffer(text, 0, len(text)))
    part = convert(work_buffer(text, 0, len(text)), max_tokens=cap)
    kept = min(cap, len(whole.values))
    assert np.array_equal(part.fast, whole.fast[:kept])
    assert np.array_equal(part.values[part.fast], whole.values[:kept][whole.fast[:kept]])
    if kept < len(whole.values):
        assert part.cut is not None and text[part.cut - PAD] in b",; "
    else:
        assert part.cut is None


def test_sparse_then_dense_run_equals_float() -> None:
    tokens = [b"123456789012.5"] * 3000 + [b"1e1", b"0", b"-0", b"2.5"] * 20000 + [b"7"]
    text = b",".join(tokens) + b" }"
    values, end = scan_numbers(text, 0)
    assert end == len(text) - 1
    assert values.tobytes() == np.array([float(t) for t in tokens]).tobytes()
