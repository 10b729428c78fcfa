"""The bound on declared templates keeps the shortest declarations within the memory limit.

``template a{}`` is 17 bytes with its number and newline, and a declaration costs ~265 bytes
of Python objects: without the bound a file of them took ~13x its size (1.2x the limit).
"""

from __future__ import annotations

import struct

import pytest

from addon.xfile import XFileError, read
from addon.xfile.parser import MAX_TEMPLATES
from tests.fuzz import harness


def _text(count: int, same: bool = False) -> bytes:
    lines = (b"template a%d{}\n" % (0 if same else i) for i in range(count))
    return b"xof 0303txt 0032\n" + b"".join(lines)


def _binary(count: int) -> bytes:
    out = [b"xof 0303bin 0032"]
    for i in range(count):
        name = b"a%d" % i
        out.append(struct.pack("<HHI", 31, 1, len(name)) + name + struct.pack("<HH", 10, 11))
    return b"".join(out)


@pytest.mark.parametrize("make", [_text, _binary])
def test_the_most_templates_allowed_fit_the_memory_limit(make) -> None:
    outcome = harness.run(make(MAX_TEMPLATES))
    assert outcome.status == "ok"
    limit = harness.MEMORY_FACTOR * outcome.basis + harness.MEMORY_CONSTANT
    assert outcome.peak <= 0.8 * limit


def test_one_more_is_an_error_at_its_place() -> None:
    with pytest.raises(XFileError) as err:
        read(_text(MAX_TEMPLATES + 1))
    assert f"more than {MAX_TEMPLATES} templates" in str(err.value)
    assert f"{MAX_TEMPLATES + 2}:1" in str(err.value)  # line 1 is the header
    with pytest.raises(XFileError, match="byte"):
        read(_binary(MAX_TEMPLATES + 1))


def test_declaring_one_name_again_and_again_is_not_counted() -> None:
    doc = read(_text(3 * MAX_TEMPLATES, same=True))
    assert doc is not None
    assert harness.run(_text(3 * MAX_TEMPLATES, same=True)).status == "ok"
