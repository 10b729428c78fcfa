"""Broken input: one exception type, the right place, no hang, no big allocation."""

from __future__ import annotations

import struct
import time
import tracemalloc

import pytest

from addon.xfile import XFileError, read, scene_of

from .test_containers import TEXT_BODY, binary_body
from .xenc import Bin, compressed_file, dword, word

HEAD = b"xof 0303txt 0032\n"


def place_of(data: bytes, needle: bytes, nth: int = 0) -> str:
    """'line:column' of the nth occurrence of needle, computed here by hand."""
    off = -1
    for _ in range(nth + 1):
        off = data.index(needle, off + 1)
    line = data.count(b"\n", 0, off) + 1
    col = off - (data.rfind(b"\n", 0, off) + 1) + 1
    return f"{line}:{col}"


def error_of(data: bytes) -> str:
    with pytest.raises(XFileError) as info:
        read(data)
    return str(info.value)


@pytest.mark.parametrize(
    "data",
    [
        b"xof 0303txt 0032" + TEXT_BODY,
        b"xof 0303bin 0032" + binary_body(),
        compressed_file(TEXT_BODY, "tzip"),
        compressed_file(binary_body(), "bzip"),
    ],
    ids=["txt", "bin", "tzip", "bzip"],
)
def test_truncated_at_every_byte(data: bytes) -> None:
    read(data)
    for cut in range(len(data)):
        try:
            doc = read(data[:cut])
        except XFileError as exc:
            assert "<data>:" in str(exc)
            continue
        # a cut that still leaves a complete file: only white space or whole objects lost
        assert data[:16].endswith((b"txt 0032", b"bin 0032")), cut
        assert len(list(doc.walk())) <= 2


def test_float_where_an_integer_is_expected() -> None:
    data = HEAD + b"Mesh {\n  3;\n  0;0;0;, 1;0;0;, 0;1;0;;\n  1;\n  3;0,1.5,2;;\n}"
    msg = error_of(data)
    assert f"<data>:{place_of(data, b'1.5')}: " in msg
    assert "Mesh.faces" in msg and "integer" in msg


def test_count_larger_than_the_file_fails_fast_without_allocating() -> None:
    cases = [
        HEAD + b"Mesh { 4000000000; 1;2;3;; 0;; }",
        HEAD + b"Mesh { 1; 0;0;0;; 4000000000; 3;0,0,0;; }",
        HEAD + b'Url { 4000000000; "a"; }',
        HEAD + b"AnimationKey { 0; 4000000000; 0; 1; 1;;; }",
        Bin().name("Mesh").p("{").ints([0xFFFFFFFF]).floats([0, 0, 0]).p("}").file(),
        Bin().name("Mesh").p("{").raw(word(7) + dword(0x3FFFFFFF)).file(),
        Bin().name("Frame").raw(word(1) + dword(0xFFFFFFF0) + b"ab").file(),
    ]
    for data in cases:
        tracemalloc.start()
        start = time.perf_counter()
        with pytest.raises(XFileError):
            read(data)
        elapsed = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert elapsed < 0.5 and peak < 2_000_000, (data[:40], elapsed, peak)


def test_binary_count_error_names_the_byte() -> None:
    data = Bin().name("Mesh").p("{").raw(word(7) + dword(0x3FFFFFFF)).file()
    # token at byte 16 + NAME(2+4+4) + '{'(2) = 28
    assert error_of(data).startswith("<data>:byte 28: truncated list of 1073741823 values")


def test_unknown_tokens() -> None:
    data = HEAD + b"Frame F {\n  @oops\n}"
    assert error_of(data).startswith(f"<data>:{place_of(data, b'@')}: unexpected character")
    binary = Bin().name("Frame").p("{").raw(word(99)).p("}").file()
    # byte 16 + NAME "Frame" (2 + 4 + 5) + '{' (2) = 29
    assert error_of(binary).startswith("<data>:byte 29: unknown binary token id 99")
    compressed = compressed_file(Bin().name("Frame").p("{").raw(word(99)).p("}").body(), "bzip")
    assert "byte 29 of the decompressed data: unknown binary token id 99" in error_of(compressed)


def test_bad_syntax_places() -> None:
    data = HEAD + b"Frame F {\n}\n}\n"
    assert error_of(data).startswith(f"<data>:{place_of(data, b'}', 1)}: expected a template")
    data = HEAD + b"Frame F\n  Frame G {}"
    assert f"<data>:{place_of(data, b'Frame G')}: expected '{{'" in error_of(data)
    data = HEAD + b'Frame F { "unterminated }'
    quote = place_of(data, b'"')
    assert error_of(data).startswith(f"<data>:{quote}: unterminated string")
    data = HEAD + b"template T { <11111111-2222-3333-4444-555555555555> DWORD n; array FLOAT v; }"
    assert "array member v has no dimension" in error_of(data)


def test_nesting_past_10000_deep_is_an_error_not_a_crash() -> None:
    data = HEAD + b"Frame a {\n" * 10001 + b"}\n" * 10001
    msg = error_of(data)
    assert msg.startswith("<data>:10002:1: objects nested deeper than 10,000 levels")
    data = HEAD + b"Frame a {\n" * 100_000  # and unclosed: the limit comes first
    assert error_of(data).startswith("<data>:10002:1: objects nested deeper than 10,000")


def test_end_of_file_inside_an_object() -> None:
    data = HEAD + b"Frame Outer {\n  Frame Inner {\n"
    assert "end of file inside Frame Inner opened at 3:3" in error_of(data)


def _mszip_file(payload: bytes, fmt: bytes = b"tzip") -> bytes:
    return b"xof 0303" + fmt + b"0032" + payload


def test_mszip_bad_sizes() -> None:
    good = compressed_file(TEXT_BODY, "tzip")
    total = struct.unpack_from("<I", good, 16)[0]
    cases = {
        "bad uncompressed size 3": good[:16] + dword(3) + good[20:],
        "impossible for a": good[:16] + dword(0xFFFFFFFF) + good[20:],
        "would exceed the declared total": good[:16] + dword(total - 10) + good[20:],
        "block 1 header missing": good[:16] + dword(total + 40000) + good[20:],
        "bad uncompressed size 40000": good[:20] + word(40000) + good[22:],
        "runs past the end of the file": good[:22] + word(60000) + good[24:],
        "missing 'CK' signature": good[:24] + b"XX" + good[26:],
        "no uncompressed size": good[:18],
    }
    for why, data in cases.items():
        msg = error_of(data)
        assert why in msg, (why, msg)
        assert "of the compressed file" in msg


def test_corrupt_deflate() -> None:
    good = compressed_file(TEXT_BODY * 3, "tzip")
    bad = bytearray(good)
    bad[26] ^= 0xFF  # the first byte of the deflate stream: an invalid block type
    bad[27] ^= 0x55
    msg = error_of(bytes(bad))
    assert msg.startswith("<data>:byte 26 of the compressed file: block 0:")


def test_not_a_path_or_bytes() -> None:
    with pytest.raises(TypeError):
        read(12)  # type: ignore[arg-type]
    with pytest.raises(XFileError) as info:
        read("/nonexistent/file.x")
    assert "/nonexistent/file.x" in str(info.value)


def test_places_in_cr_only_and_crlf_files() -> None:
    """Columns count from the last line end actually used by the file."""
    assert error_of(HEAD[:-1] + b"\rFrame F {\r  @\r}").startswith("<data>:3:3: unexpected")
    assert error_of(HEAD[:-1] + b"\r\nFrame F {\r\n  @\r\n}").startswith("<data>:3:3: unexpected")


def test_binary_places_are_packed_and_read_back() -> None:
    """Template places of binary files are kept as packed ints (memory of declaration-heavy
    files) and still read as "byte N", with the decompressed note for tzip/bzip."""
    from addon.xfile.scan.tokens import binary_place, place_text

    assert place_text(binary_place(0, False)) == "byte 0"
    assert place_text(binary_place(1234, False)) == "byte 1234"
    assert place_text(binary_place(77, True)) == "byte 77 of the decompressed data"
    assert binary_place(5, False) < 0  # text places (line << shift | column) are >= 0


@pytest.mark.parametrize("fmt", ["txt", "bin", "tzip", "bzip"])
def test_a_5000_deep_chain_reads_views_writes_and_reads_back(fmt: str) -> None:
    """Issue 34 item 6: a 255-level hierarchy (300 nested empties, a 300-bone chain) was
    written and then refused on re-import ("deeper than 256 levels"). A chain of 5,000 frames
    (five times Python's recursion limit), a mesh at its tip and a reference to the root:
    read, viewed, written in each format and read back, on no Python stack per level."""
    from addon.xfile.writer import write
    from addon.xfile.writer.compare import document_differences

    depth = 5000
    step = b"FrameTransformMatrix { 1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0.5,0,1;; }\n"
    data = HEAD + b"".join(b"Frame f%d {\n" % i for i in range(depth)) + step
    data += b"Mesh tip { 3; 0;0;0;, 1;0;0;, 0;1;0;; 1; 3;0,1,2;; }\n{ f0 }\n" + b"}\n" * depth
    doc = read(data)
    again = read(write(doc, fmt))
    assert document_differences(doc, again, 32) == []
    for d in (doc, again):
        scene = scene_of(d)
        frame, levels = scene.frames[0], 1
        while frame.children:
            (frame,) = frame.children
            levels += 1
        assert levels == depth and frame.name == "f4999"
        assert float(frame.matrix[3, 1]) == 0.5
        assert [m.name for m in frame.meshes] == ["tip"]
        assert len(scene.all_meshes()[0].positions) == 3
        tip = d.objects[0]
        for _ in range(depth - 1):
            tip = tip.children[-1]
        assert tip.children[-1].target is d.objects[0]  # the reference to the root resolved
