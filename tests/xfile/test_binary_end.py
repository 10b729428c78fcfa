"""A lone byte where a binary token would start is the end of the file, as for D3D: a bzip
file whose body is one "\\n" (the smallest MSZIP stream there is) reads as an empty file."""

from __future__ import annotations

import pytest

from addon.xfile import XFileError, read

from .xenc import Bin, compressed_file


def test_bzip_of_a_newline_is_an_empty_file() -> None:
    data = compressed_file(b"\n", "bzip", 64)
    doc = read(data)  # was: "truncated token id: needs 2 bytes, 1 left"
    assert (doc.format, doc.objects, doc.warnings) == ("bzip", [], [])


def test_tzip_of_a_newline_is_an_empty_file_too() -> None:
    assert read(compressed_file(b"\n", "tzip", 64)).objects == []


@pytest.mark.parametrize("fmt", ["bin", "bzip"])
def test_lone_byte_after_the_last_object_ends_the_file(fmt: str) -> None:
    body = Bin().name("Frame").name("F").p("{").p("}").body() + b"\n"
    data = b"xof 0303bin 0032" + body if fmt == "bin" else compressed_file(body, "bzip")
    assert [(o.template, o.name) for o in read(data).objects] == [("Frame", "F")]


def test_lone_byte_inside_an_object_is_still_an_error() -> None:
    body = Bin().name("Frame").name("F").p("{").body() + b"\n"
    with pytest.raises(XFileError) as caught:
        read(b"xof 0303bin 0032" + body)
    assert "end of file inside Frame F" in caught.value.reason


def test_two_stray_bytes_are_a_token_id() -> None:
    with pytest.raises(XFileError) as caught:
        read(b"xof 0303bin 0032\xff\xff")
    assert caught.value.reason == "unknown binary token id 65535"
