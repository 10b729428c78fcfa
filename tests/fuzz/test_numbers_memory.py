"""For the numbers engineer: ``scan_numbers`` should peak at most 10x the bytes it scans.

Found by the reader campaign (``crashers/memory-numbers-*.x``): a run of short numbers
(``0,0,0,...``) peaked at 20-80x its size in temporaries; now the scanner's steps grow with
what it has read, within the limit.
"""

from __future__ import annotations

import tracemalloc

import pytest

from addon.xfile.scan.numbers import scan_numbers


@pytest.mark.parametrize("unit", [b"0,", b"1.5;", b"-123.456789,"])
@pytest.mark.parametrize("count", [2_000, 20_000])
def test_scan_numbers_peak_memory_is_at_most_10x_the_run(unit: bytes, count: int) -> None:
    data = b"x" + unit * count + b"}"
    scan_numbers(data, 1)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        values, end = scan_numbers(data, 1)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert len(values) == count and end == len(data) - 1
    assert peak <= 10 * len(data) + 256 * 1024  # the fuzz harness's limit (harness.py)
