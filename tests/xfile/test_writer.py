"""The .X writer: exact text punctuation, binary tokens, MSZIP blocks, declarations, and
read -> write -> read round trips of real files in every format and float size."""

from __future__ import annotations

import struct
import zlib

import numpy as np
import pytest

from addon.xfile import XObject, read
from addon.xfile.document import Ragged, XDocument
from addon.xfile.standard_templates import standard_templates
from addon.xfile.writer import write
from addon.xfile.writer.compare import document_differences
from addon.xfile.writer.mszip_writer import block_count

FORMATS = ("txt", "bin", "tzip", "bzip")


def doc_of(*objects: XObject, declared: list[str] | None = None) -> XDocument:
    return XDocument(None, "txt", "0303", 32, standard_templates(), declared or [], list(objects))


def small_mesh() -> XObject:
    faces = Ragged(np.array([3, 0, 1, 2, 4, 0, 2, 3, 1]), np.array([0, 4]))
    mesh = XObject(
        "Mesh",
        "Tri",
        members={
            "nVertices": 4,
            "vertices": np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0.5, 0.25, -2]], float),
            "nFaces": 2,
            "faces": faces,
        },
    )
    mesh.children.append(
        XObject("ClothMasses", members={"NumPoints": 4, "Mass": np.array([1.0, 0.0, 0.5, 1.0])})
    )
    return mesh


def test_text_punctuation_is_d3dx() -> None:
    text = write(doc_of(small_mesh()), "txt", 32).decode()
    assert text.startswith("xof 0303txt 0032")
    # each member ends with ';', elements are separated by ',', a struct adds its own ';'
    assert (
        "Mesh Tri {\n4;0;0;0;,\n1;0;0;,\n0;1;0;,\n0.5;0.25;-2;;2;3;0,1,2;,\n4;0,2,3,1;;\n" in text
    )
    assert "ClothMasses {\n4;1, 0, 0.5, 1;\n" in text


def test_custom_templates_are_declared_and_standard_ones_are_not() -> None:
    text = write(doc_of(small_mesh()), "txt", 32).decode()
    assert "template ClothMasses {\n <F5AD0F93-9BF2-4BCF-B7CF-D68CD6B54156>" in text
    assert "array FLOAT Mass[NumPoints];" in text
    assert "template Mesh " not in text
    for fmt in FORMATS:
        back = read(write(doc_of(small_mesh()), fmt, 32))
        assert back.declared == ["ClothMasses"]


def test_binary_lists_cross_member_boundaries() -> None:
    data = write(doc_of(small_mesh()), "bin", 32)
    pos = data.index(b"Tri") + 3
    assert struct.unpack_from("<H", data, pos)[0] == 10  # '{'
    kind, count, first = struct.unpack_from("<HII", data, pos + 2)
    assert (kind, count, first) == (6, 1, 4)  # INTEGER_LIST [nVertices]
    pos += 2 + 10
    kind, count = struct.unpack_from("<HI", data, pos)
    assert (kind, count) == (7, 12)  # FLOAT_LIST: every coordinate
    floats = np.frombuffer(data, "<f4", 12, pos + 6)
    assert floats[-1] == -2.0 and floats[9] == 0.5
    pos += 6 + 48
    kind, count = struct.unpack_from("<HI", data, pos)
    assert (kind, count) == (6, 10)  # nFaces and both faces, counts included
    assert list(np.frombuffer(data, "<u4", 10, pos + 6)) == [2, 3, 0, 1, 2, 4, 0, 2, 3, 1]


@pytest.mark.parametrize("bits", [32, 64])
def test_floats_come_back_exactly(bits: int) -> None:
    rng = np.random.default_rng(7)
    values = rng.normal(size=3000) * 10.0 ** rng.integers(-12, 12, size=3000)
    dtype = np.float32 if bits == 32 else np.float64
    values = values.astype(dtype).astype(np.float64)
    values[:4] = [0.0, -0.0, 1e-38, 3.0e38 if bits == 32 else 1e300]
    obj = XObject("ClothMasses", members={"NumPoints": len(values), "Mass": values})
    for fmt in FORMATS:
        back = read(write(doc_of(obj), fmt, bits)).objects[0]
        assert isinstance(back, XObject)
        np.testing.assert_array_equal(back["Mass"].astype(dtype), values.astype(dtype))


def test_float64_values_in_32_bit_text_match_binary() -> None:
    """Regression: a float64 printed to 9 digits, then read as float32, could land one float32
    step away from the value binary stores (rounding twice); text now prints the float32."""
    rng = np.random.default_rng(11)
    values = rng.uniform(-1.0, 1.0, size=20000)  # float64 values, as an exporter's maths gives
    obj = XObject("ClothMasses", members={"NumPoints": len(values), "Mass": values})
    want = values.astype(np.float32)
    for fmt in FORMATS:
        back = read(write(doc_of(obj), fmt, 32)).objects[0]
        assert isinstance(back, XObject)
        np.testing.assert_array_equal(back["Mass"].astype(np.float32), want, err_msg=fmt)


def test_non_finite_floats_use_msvc_spellings() -> None:
    obj = XObject("ClothMasses", members={"NumPoints": 3, "Mass": np.array([np.nan, np.inf, -1])})
    text = write(doc_of(obj), "txt", 32).decode()
    assert "1.#QNAN0, 1.#INF00, -1;" in text
    back = read(text.encode()).objects[0]
    assert isinstance(back, XObject)
    got = back["Mass"]
    assert np.isnan(got[0]) and got[1] == np.inf and got[2] == -1


def test_big_compressed_files_have_several_blocks_that_need_the_window() -> None:
    n = 20000
    rng = np.random.default_rng(1)
    values = np.round(rng.random(n), 3)
    obj = XObject("ClothMasses", members={"NumPoints": n, "Mass": values})
    for fmt in ("tzip", "bzip"):
        data = write(doc_of(obj), fmt, 32)
        body = write(doc_of(obj), "txt" if fmt == "tzip" else "bin", 32)[16:]
        assert len(body) > 32768
        assert block_count(data) == -(-len(body) // 32768)
        assert struct.unpack_from("<I", data, 16)[0] == len(body) + 16
        # block 2 back-references block 1: without the dictionary it does not decode
        usize, csize = struct.unpack_from("<HH", data, 20)
        assert usize == 32768
        second = 20 + 4 + csize
        payload = data[second + 6 : second + 4 + struct.unpack_from("<HH", data, second)[1]]
        with pytest.raises(zlib.error):
            zlib.decompressobj(-15).decompress(payload)
        back = read(data).objects[0]
        assert isinstance(back, XObject)
        np.testing.assert_array_equal(back["Mass"].astype(np.float32), values.astype(np.float32))


def test_a_file_declared_template_is_written_back() -> None:
    source = (
        b"xof 0303txt 0032\n"
        b"template MorphAnimationKey { <2746B58A-B375-4cc3-8D23-7D094D3C7C67> DWORD Time;"
        b" STRING MeshName; }\n"
        b"template MorphAnimationSet { <0892DE81-915A-4f34-B503-F7C397CB9E06> DWORD Loop;"
        b" DWORD NumKeys; array MorphAnimationKey Keys[NumKeys]; }\n"
        b'MorphAnimationSet Dance { 1; 2; 0; "A";, 500; "B";; }\n'
    )
    doc = read(source)
    for fmt in FORMATS:
        back = read(write(doc, fmt, 32))
        assert back.declared == ["MorphAnimationKey", "MorphAnimationSet"]
        assert not document_differences(doc, back, 32)
        obj = next(back.top("MorphAnimationSet"))
        assert obj["Loop"] == 1 and [k["MeshName"] for k in obj["Keys"]] == ["A", "B"]


def corpus_files(corpus):  # type: ignore[no-untyped-def]
    return sorted(p for p in corpus.iterdir() if p.suffix.lower() == ".x")


@pytest.mark.corpus
@pytest.mark.parametrize("fmt", FORMATS)
def test_corpus_round_trips_to_equal_trees(corpus, fmt: str) -> None:  # type: ignore[no-untyped-def]
    for path in corpus_files(corpus):
        doc = read(path)
        for bits in (32, 64):
            back = read(write(doc, fmt, bits))
            assert document_differences(doc, back, bits) == [], (path.name, bits)
            assert back.count_by_template() == doc.count_by_template()


def test_write_file_writes_the_bytes_of_write(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Text goes to the file in pieces (no joined copy); the bytes are those of ``write``."""
    from addon.xfile.writer import write_file

    for fmt in FORMATS:
        path = tmp_path / f"m.{fmt}.x"
        size = write_file(path, doc_of(small_mesh()), fmt, 32)
        assert path.read_bytes() == write(doc_of(small_mesh()), fmt, 32)
        assert size == path.stat().st_size
