"""Binary animation keys, one INTEGER_LIST and one FLOAT_LIST each (as exporters write them),
read in one pass: the same table as the token-by-token walk and as the text file, and the
walk's errors where the layout breaks."""

from __future__ import annotations

import numpy as np
import pytest

from addon.xfile import XFileError, read
from addon.xfile.scan.binary_tokens import BinaryTokens

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


def _tokens_at_first_values(data: bytes) -> BinaryTokens:
    """The tokenizer of a ``_keys_file`` just after key 0's INTEGER_LIST (where the parser
    asks for the rest in one pass)."""
    tokens = BinaryTokens(data, 16, None, 32 if data[12:16] == b"0032" else 64, False)
    for _ in range(4):  # AnimationKey, {, [keyType, nKeys], [time 0, width]
        tokens.next()
    return tokens


@pytest.mark.parametrize("float_bits", [32, 64])
def test_every_fixed_byte_of_a_record_is_checked(float_bits) -> None:
    # the ids and counts are compared as words that overlap the record's fixed bytes: a
    # change in any one byte of them (a high half of a count too) refuses the one pass
    count, width = 6, 4
    keys = _keys(count, width)
    data = _keys_file(keys, float_bits)
    tokens = _tokens_at_first_values(data)
    start = tokens.pos
    got = tokens.fixed_records(count, 1, width)
    assert got is not None
    ints, first, later = got
    assert ints.tolist() == [[t, width] for t, _ in keys[1:]]
    np.testing.assert_array_equal(first, keys[0][1])
    np.testing.assert_array_equal(later, [v for _, v in keys[1:]])
    size = float_bits // 8
    record = 2 + 4 + 8 + 2 + 4 + width * size
    fixed = [*range(0, 6), *range(10, 20)]  # ids and counts; bytes 6-10 hold the key's time
    for row in (0, 2, count - 2):  # the first, a middle and the last of the later records
        for byte in fixed:
            at = start + 6 + width * size + row * record + byte
            for flip in (0x01, 0x80):
                broken = bytearray(data)
                broken[at] ^= flip
                tokens = _tokens_at_first_values(bytes(broken))
                assert tokens.fixed_records(count, 1, width) is None, (row, byte, flip)
                assert tokens.pos == start  # nothing read
    for byte in range(6, 10):  # a time is a value, not layout
        broken = bytearray(data)
        broken[start + 6 + width * size + byte] ^= 0x01
        assert _tokens_at_first_values(bytes(broken)).fixed_records(count, 1, width)


def test_wider_prefixes_are_checked_at_their_own_offsets() -> None:
    # records [INTEGER_LIST: a, b, width][FLOAT_LIST: width]: the layout of two prefix
    # integers, read in one pass and refused when its last integer is not the width
    tokens_file = Bin(32).raw(b"")
    rows = [(i, 7 * i, [float(i), -float(i)]) for i in range(5)]
    for a, b, v in rows:
        tokens_file.ints([a, b, 2]).floats(v)
    data = b"xof 0303bin 0032" + tokens_file.body()
    tokens = BinaryTokens(data, 16, None, 32, False)
    tokens.next()  # key 0's integers
    got = tokens.fixed_records(5, 2, 2)
    assert got is not None
    assert got[0].tolist() == [[a, b, 2] for a, b, _ in rows[1:]]
    np.testing.assert_array_equal(got[2], [v for _, _, v in rows[1:]])
    broken = bytearray(data)
    first_later = 16 + (6 + 12) + (6 + 8)  # after key 0's two lists
    broken[first_later + 6 + 8] = 3  # record 1's last integer: 3, not the width 2
    tokens = BinaryTokens(bytes(broken), 16, None, 32, False)
    tokens.next()
    assert tokens.fixed_records(5, 2, 2) is None
