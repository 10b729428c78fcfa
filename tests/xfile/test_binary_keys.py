"""Binary animation keys, one INTEGER_LIST and one FLOAT_LIST each (as exporters write them),
read in one pass: the same table as the token-by-token walk and as the text file, and the
walk's errors where the layout breaks."""

from __future__ import annotations

import numpy as np
import pytest

from addon.xfile import XFileError, read
from addon.xfile.binary_tokens import BinaryTokens

from .xenc import Bin

RNG = np.random.default_rng(11)


def _keys_file(keys: list[tuple[int, list[float]]], float_bits: int = 32, sep: bool = False):
    b = Bin(float_bits).name("AnimationKey").p("{").ints([0, len(keys)])  # keyType, nKeys
    for time, values in keys:
        b.ints([time, len(values)]).floats(values)
        if sep:
            b.p(";")
    return b.p("}").file()


def _text_file(keys: list[tuple[int, list[float]]]) -> bytes:
    rows = ",\n".join(
        f"{t};{len(v)};" + ",".join(repr(float(x)) for x in v) + ";;" for t, v in keys
    )
    return f"xof 0303txt 0032\nAnimationKey {{ 0; {len(keys)};\n{rows};\n}}\n".encode()


def _table(data: bytes) -> np.ndarray:
    return np.asarray(next(read(data).top())["keys"])


def _walked(data: bytes, monkeypatch: pytest.MonkeyPatch):
    with monkeypatch.context() as m:
        m.setattr(BinaryTokens, "fixed_records", lambda *_a: None)
        return next(read(data).top())["keys"]


def _keys(count: int, width: int) -> list[tuple[int, list[float]]]:
    values = RNG.integers(-64, 64, (count, width)) / 8.0  # exact in float32 and in text
    return [(160 * i + 3, list(row)) for i, row in enumerate(values)]


@pytest.mark.parametrize("float_bits", [32, 64])
@pytest.mark.parametrize(("count", "width"), [(1, 4), (2, 3), (500, 4), (37, 0)])
def test_one_pass_equals_the_walk_and_the_text(float_bits, count, width, monkeypatch) -> None:
    keys = _keys(count, width)
    data = _keys_file(keys, float_bits)
    fast = _table(data)
    assert fast.shape == (count, 2 + width)
    np.testing.assert_array_equal(fast, _walked(data, monkeypatch))
    np.testing.assert_array_equal(fast, _table(_text_file(keys)))
    assert fast[:, 0].tolist() == [t for t, _ in keys]


def test_mixed_widths_and_separators_take_the_walk(monkeypatch) -> None:
    keys = _keys(40, 4)
    keys[17] = (keys[17][0], keys[17][1][:3])  # one key with 3 values: a ragged table
    mixed = _keys_file(keys)
    walked = _walked(mixed, monkeypatch)
    got = next(read(mixed).top())["keys"]
    assert type(got) is type(walked)
    np.testing.assert_array_equal(got.flat, walked.flat)
    np.testing.assert_array_equal(got.starts, walked.starts)
    separated = _keys_file(_keys(40, 4), sep=True)
    np.testing.assert_array_equal(_table(separated), _walked(separated, monkeypatch))


def test_a_truncated_key_list_is_an_error_at_its_byte() -> None:
    data = _keys_file(_keys(300, 4))
    cut = data[: len(data) - 700]  # inside the keys, before the closing brace
    with pytest.raises(XFileError) as err:
        read(cut)
    assert "byte" in str(err.value)


def test_a_list_that_lies_about_its_width_is_not_read_in_bulk(monkeypatch) -> None:
    keys = _keys(50, 4)
    data = bytearray(_keys_file(keys))
    # key 30 says it has 4 values, but its FLOAT_LIST holds 4 and its integer list says 5
    marker = (160 * 30 + 3).to_bytes(4, "little") + (4).to_bytes(4, "little")
    at = bytes(data).index(marker)
    data[at + 4 : at + 8] = (5).to_bytes(4, "little")
    with pytest.raises(XFileError):
        read(bytes(data))
    with pytest.raises(XFileError):
        _walked(bytes(data), monkeypatch)
