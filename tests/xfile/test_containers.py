"""One mesh in every container (txt, bin, tzip, bzip), both versions and both float sizes."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from addon.xfile import XFileError, read, scene_of

from .xenc import Bin, block_needs_dictionary, compressed_file, dword, mszip, word

POSITIONS = [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 2.0, 2.0, 0.5]
FACES = [2, 4, 0, 1, 2, 3, 3, 1, 4, 2]  # nFaces, then (count, indices...) per face

TEXT_BODY = b"""
Mesh Quad {
 5;
 0.0;0.0;0.0;, 1.0;0.0;0.0;, 1.0;1.0;0.0;, 0.0;1.0;0.0;, 2.0;2.0;0.5;;
 2;
 4;0,1,2,3;, 3;1,4,2;;
 MeshTextureCoords { 5; 0.0;0.0;, 1.0;0.0;, 1.0;1.0;, 0.0;1.0;, 0.25;0.75;; }
}
"""


def binary_body(float_bits: int = 32) -> bytes:
    b = Bin(float_bits)
    b.name("Mesh").name("Quad").p("{")
    b.ints([5]).floats(POSITIONS).ints(FACES)  # lists span members, as real files do
    b.name("MeshTextureCoords").p("{").ints([5])
    b.floats([0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.25, 0.75]).p("}")
    b.p("}")
    return b.body()


def check_quad(data: bytes) -> None:
    doc = read(data)
    (mesh,) = scene_of(doc).meshes
    assert mesh.positions.tolist() == np.reshape(POSITIONS, (5, 3)).tolist()
    assert mesh.face_sizes.tolist() == [4, 3]
    assert mesh.corners.tolist() == [0, 1, 2, 3, 1, 4, 2]
    assert mesh.uv_sets[0][4].tolist() == [0.25, 0.75]
    assert mesh.positions.flags.writeable


@pytest.mark.parametrize("version", ["0302", "0303"])
@pytest.mark.parametrize("bits", [32, 64])
def test_text(version: str, bits: int) -> None:
    data = f"xof {version}txt 00{bits}".encode() + TEXT_BODY
    check_quad(data)
    doc = read(data)
    assert (doc.format, doc.version, doc.float_bits) == ("txt", version, bits)


@pytest.mark.parametrize("version", ["0302", "0303"])
@pytest.mark.parametrize("bits", [32, 64])
def test_binary(version: str, bits: int) -> None:
    data = f"xof {version}bin 00{bits}".encode() + binary_body(bits)
    check_quad(data)
    assert read(data).float_bits == bits


def test_binary_64_bit_floats_keep_double_precision() -> None:
    b = Bin(64).name("Mesh").p("{").ints([1]).floats([0.1, 1e-300, 3.0]).ints([0]).p("}")
    mesh = next(read(b.file()).top("Mesh"))
    assert mesh["vertices"][0].tolist() == [0.1, 1e-300, 3.0]


def test_tzip_and_bzip() -> None:
    check_quad(compressed_file(TEXT_BODY, "tzip"))
    check_quad(compressed_file(binary_body(), "bzip"))
    check_quad(compressed_file(binary_body(64), "bzip", float_bits=64))
    assert read(compressed_file(TEXT_BODY, "tzip")).format == "tzip"


def _big_text_body() -> bytes:
    """~120 KB of text whose later blocks repeat earlier ones (cross-block references)."""
    rows = [f"Frame F{i} {{ FrameTransformMatrix {{ 1,0,0,0,0,1,0,0,0,0,1,0,{i},0,0,1;; }} }}\n"
            for i in range(1500)]  # fmt: skip
    return "".join(rows).encode()


def test_multi_block_mszip_uses_the_previous_window() -> None:
    body = _big_text_body()
    payload = mszip(body)
    assert len(body) > 3 * 32768  # at least 4 blocks
    assert block_needs_dictionary(payload, 1) and block_needs_dictionary(payload, 3)
    doc = read(b"xof 0303tzip0032" + payload)
    frames = list(doc.top("Frame"))
    assert len(frames) == 1500
    m = next(frames[1234].objects("FrameTransformMatrix"))["frameMatrix"]["matrix"]
    assert m[12] == 1234.0


def test_multi_block_binary_bzip() -> None:
    b = Bin()
    for i in range(3000):
        b.name("Frame").name(f"F{i}").p("{").name("FrameTransformMatrix").p("{")
        b.floats([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, i, 2 * i, 0, 1]).p("}").p("}")
    body = b.body()
    assert len(body) > 3 * 32768
    payload = mszip(body)
    assert block_needs_dictionary(payload, 2)
    doc = read(b"xof 0303bzip0032" + payload)
    frames = list(doc.top("Frame"))
    assert len(frames) == 3000
    m = next(frames[2999].objects("FrameTransformMatrix"))["frameMatrix"]["matrix"]
    assert m[12:14].tolist() == [2999.0, 5998.0]


def test_blocks_smaller_than_32k_also_work() -> None:
    check_quad(compressed_file(TEXT_BODY, "tzip", block=50))


@pytest.mark.parametrize("block", [1, 2, 3, 7])
def test_blocks_of_a_few_bytes(block: int) -> None:
    """Blocks too small for a back-reference are decoded without the window first."""
    check_quad(compressed_file(TEXT_BODY, "tzip", block=block))


def test_a_tiny_block_reaching_into_the_window_fails_as_with_it() -> None:
    """A 2-byte block whose deflate data is a 3-byte back-reference: the error the window
    gives (too much data, no final block), not the one without it (distance too far)."""
    comp = zlib.compressobj(6, zlib.DEFLATED, -15, zdict=b"abcabc")
    reference = comp.compress(b"abc") + comp.flush(zlib.Z_FINISH)
    assert block_needs_dictionary(dword(16 + 8) + word(3) + word(len(reference) + 2) + b"CK"
                                  + reference, 0)  # fmt: skip
    first = mszip(b"abcabc")[4:]
    payload = dword(16 + 8) + first + word(2) + word(len(reference) + 2) + b"CK" + reference
    with pytest.raises(XFileError, match=r"block 1: deflate data gave 2 bytes without a final"):
        read(b"xof 0303tzip0032" + payload)


@pytest.mark.parametrize(
    ("data", "place", "why"),
    [
        (b"xof 0303txt", "byte 0", "header alone needs 16"),
        (b"abc 0303txt 0032 Frame {}", "byte 0", "not a .X file"),
        (b"xof 0303zip 0032 Frame {}", "byte 8", "unknown format"),
        (b"xof 0303txt 0016 Frame {}", "byte 12", "bad float size"),
        (b"xof abcdtxt 0032 Frame {}", "byte 4", "bad version"),
    ],
)
def test_bad_headers(data: bytes, place: str, why: str) -> None:
    with pytest.raises(XFileError) as info:
        read(data)
    assert f"<data>:{place}: " in str(info.value)
    assert why in str(info.value)


def test_header_line_may_carry_junk() -> None:
    data = b"xof 0303txt 0032 // written by an exporter\r\n" + TEXT_BODY
    check_quad(data)


def _space_bomb(blocks: int) -> bytes:
    """A tzip file of ``blocks`` 32 KiB blocks of spaces (an empty document once read), each
    block the same ~50-byte DEFLATE stream: about 620x."""
    deflater = zlib.compressobj(9, zlib.DEFLATED, -15)
    payload = deflater.compress(b" " * 32768) + deflater.flush()
    block = word(32768) + word(len(payload) + 2) + b"CK" + payload
    return b"xof 0303tzip0032" + dword(16 + 32768 * blocks) + block * blocks


def test_an_mszip_bomb_is_refused_before_it_is_decompressed() -> None:
    """Issue 34 item 9: a 6.9 MB file of 32 KiB blocks of spaces, its header declaring
    3.99 GiB, took 23 s and 8.4 GB to read. Refused from its declared size, at once."""
    import time

    bomb = _space_bomb(131_000)  # 131,000 x 32 KiB + 16 = 4,292,608,016 bytes: 3.99 GiB
    assert 6.5e6 < len(bomb) < 7.5e6
    start = time.perf_counter()
    with pytest.raises(XFileError) as caught:
        read(bomb)
    assert time.perf_counter() - start < 1.0
    message = str(caught.value)
    assert message.startswith("<data>:byte 16 of the compressed file: declares 4,292,608,016 ")
    assert f"x its {len(bomb):,} bytes" in message
    assert "more than the limit of 1,073,741,824 bytes" in message
    assert "'Max Decompressed Size' (read(..., max_inflated=N))" in message


def test_the_ratio_limit_past_64_mib_and_raising_it() -> None:
    bomb = _space_bomb(2100)  # 68,812,816 bytes from about 110 KB
    ratio = (16 + 32768 * 2100) / len(bomb)
    assert 500 < ratio < 700
    limit = r"past 64 MiB a file may inflate to at most 100x its size; "
    with pytest.raises(XFileError, match=limit + r".*'Max Compression Ratio' \(read\(\.\.\., "
                       r"max_ratio=N\)\)"):  # fmt: skip
        read(bomb)
    assert read(bomb, max_ratio=1000).objects == []  # trusted: 68.8 MB of spaces read
    with pytest.raises(XFileError, match="more than the limit of 68,812,815 bytes"):
        read(bomb, max_ratio=1000, max_inflated=68_812_815)
    small = _space_bomb(2)  # under 64 MiB any ratio passes (a file of zeros: 400x)
    assert (16 + 65536) / len(small) > 500 and read(small).objects == []
