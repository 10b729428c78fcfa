"""``check``: D3D's grammar, rule by rule, on small text and binary files (pass and fail), the
``check`` command, and that everything our writer produces passes ``--strict``.

The expectations are D3D's own behaviour as Wine's d3dxof tests record it (the buffer
template there: ``DWORD num_elem; array DWORD value[num_elem]; DWORD dummy;``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from addon.xfile import XFileError, read
from addon.xfile.strict import check
from addon.xfile.writer import FORMATS, write

from .test_writer import doc_of, small_mesh
from .xenc import Bin, compressed_file

ROOT = Path(__file__).resolve().parents[2]
GUID = "<3D82AB43-62DA-11CF-AB39-0020AF71E433>"
BUFFER = (
    f"template Buffer {{\n{GUID}\nDWORD num_elem;\narray DWORD value[num_elem];\nDWORD dummy;\n}}\n"
)


def text_buffer(values: str, version: str = "0302") -> bytes:
    return f"xof {version}txt 0064\n{BUFFER}Buffer {{\n{values}\n}}\n".encode()


def firsts(data: bytes) -> str | None:
    first = check(data).first
    return None if first is None else str(first)


@pytest.mark.parametrize(
    "values",
    [
        "3;\n0; 1; 2;\n5;",  # semicolons
        "3,\n0, 1, 2,\n5,",  # commas
        "3;;;;;\n0;;;;; 1;;;;; 2;;;;;\n5;;;;;",  # several semicolons
        "3;;;;;,\n0;;;;;, 1;;;;;, 2;;;;;,\n5;;;;;,",  # semicolons then one comma
        "3; // a comment between values\n0, 1, 2;\n5;",
    ],
)
def test_text_separators_d3d_accepts(values: str) -> None:
    data = text_buffer(values)
    assert firsts(data) is None
    assert read(data).objects[0]["value"].tolist() == [0, 1, 2]


@pytest.mark.parametrize(
    ("values", "where", "what"),
    [
        ("3;\n0, 1,, 2;\n5;", "10:6", "two ',' in a row"),
        ("3;\n0, 1,; 2;\n5;", "10:6", "';' after ','"),
        ("3;\n0, 1, 2;\n5", "12:1", "no ';' or ','"),  # nothing before the closing brace
        ("3;\n0 1 2;\n5;", "10:3", "no ';' or ','"),  # array values without separators
        ("3;\n0, 1, 2;\n5; 7;", "8:1", "beyond the template"),  # the object's place
    ],
)
def test_text_separators_d3d_refuses_and_we_tolerate(values: str, where: str, what: str) -> None:
    data = text_buffer(values)
    first = check(data).first
    assert first is not None and first.where == where and what in first.message
    assert read(data).objects[0]["value"].tolist() == [0, 1, 2]  # the importer still reads it


def bin_buffer(tokens: Bin) -> bytes:
    """The Wine tests' binary buffer object, its template declared in text first."""
    b = Bin(64).template_kw().name("Buffer").p("{").guid(GUID[1:-1])
    b.type("DWORD").name("num_elem").p(";")
    b.type("array").type("DWORD").name("value").p("[").name("num_elem").p("]").p(";")
    b.type("DWORD").name("dummy").p(";").p("}")
    b.name("Buffer").p("{").raw(tokens.body()).p("}")
    return b.file("0302")


def ints_with(separators: list[str]) -> Bin:
    """INTEGER 3, 0, 1, 2, 5, each followed by its separator tokens."""
    b = Bin(64)
    for value, sep in zip([3, 0, 1, 2, 5], separators, strict=True):
        b.integer(value).p(sep)
    return b


@pytest.mark.parametrize(
    "tokens",
    [
        ints_with([";"] * 5),
        ints_with([","] * 5),
        ints_with([";;;;;"] * 5),
        ints_with([";;;;;,"] * 5),
        Bin(64).integer(3).p(";").ints([0, 1, 2]).integer(5).p(";"),  # a list in the middle
        Bin(64).ints([3, 0, 1, 2, 5]),  # one list for every member
    ],
)
def test_binary_separators_d3d_accepts(tokens: Bin) -> None:
    data = bin_buffer(tokens)
    assert firsts(data) is None
    obj = read(data).objects[0]
    assert obj["value"].tolist() == [0, 1, 2] and obj["dummy"] == 5
    bzip = compressed_file(data[16:], "bzip", 64)
    assert firsts(bzip) is None and read(bzip).objects[0]["dummy"] == 5


@pytest.mark.parametrize(
    ("tokens", "what"),
    [
        (ints_with([";", ",", ",,", ";", ";"]), "two ',' in a row"),
        (ints_with([";", ",", ",;", ";", ";"]), "';' after ','"),
        (ints_with([";", ",", ",", ";", ""]), "no ';' or ','"),
        (ints_with([";", "", "", ";", ";"]), "no ';' or ','"),
        (Bin(64).ints([3, 0, 1, 2, 5]).p(";"), "a separator after a binary list"),
        (Bin(64).ints([3, 0, 1, 2, 5]).p(","), "a separator after a binary list"),
    ],
)
def test_binary_separators_d3d_refuses_and_we_tolerate(tokens: Bin, what: str) -> None:
    data = bin_buffer(tokens)
    first = check(data).first
    assert first is not None and what in first.message and first.where.startswith("byte ")
    obj = read(data).objects[0]
    assert obj["value"].tolist() == [0, 1, 2] and obj["dummy"] == 5


def test_binary_place_is_the_offending_token() -> None:
    data = bin_buffer(Bin(64).ints([3, 0, 1, 2, 5]).p(";"))
    semicolon = len(data) - 4  # the ';' token, then the closing brace
    assert check(data).first.where == f"byte {semicolon}"  # type: ignore[union-attr]


@pytest.mark.parametrize(("version", "accepted"), [("0302", True), ("0303", True), ("0301", False)])
def test_versions(version: str, accepted: bool) -> None:
    data = text_buffer("3;\n0, 1, 2;\n5;", version)
    first = check(data).first
    assert (first is None) == accepted
    if not accepted:
        assert first is not None and first.where == "1:5" and "version 0301" in first.message
    binary = Bin().name("Frame").p("{").p("}").file(version)
    first = check(binary).first
    assert (first is None) == accepted
    if not accepted:
        assert first is not None and first.where == "byte 4"


COLORS = "template MeshVertexColors {{\n<1630B821-7842-11cf-8F52-0040333594A3>\n" \
    "DWORD nVertexColors;\narray {} vertexColors[nVertexColors];\n}}\n"  # fmt: skip


@pytest.mark.parametrize(
    ("member_type", "accepted"),
    [("indexColor", True), ("IndexedColor", True), ("IndexColor", False), ("indexedcolor", False)],
)
def test_member_types_are_case_sensitive(member_type: str, accepted: bool) -> None:
    data = ("xof 0302txt 0064\n" + COLORS.format(member_type)).encode()
    first = check(data).first
    assert (first is None) == accepted, first
    if not accepted:
        assert first is not None and first.where == "2:1"
        assert f"member type {member_type!r} is not a known template" in first.message
    if member_type == "indexedcolor":
        assert first is not None and "'IndexedColor'" in first.message


def test_object_templates_must_be_known() -> None:
    data = b'xof 0303txt 0032\nTextureFileName { "a.png"; }\nWidget C { 1; }\n'
    found = check(data).departures
    assert [d.where for d in found] == ["3:1"]
    assert "unknown template 'Widget'" in found[0].message
    assert [o.template for o in read(data).objects] == ["TextureFileName", "Widget"]


def test_numbers_in_template_declarations_are_not_values() -> None:
    data = b"xof 0303txt 0032\ntemplate Quad {\n<11111111-2222-3333-4444-555555555555>\n" \
        b"array FLOAT corners[4];\n}\nQuad q { 1.0, 2.0, 3.0, 4.0; }\n"  # fmt: skip
    assert firsts(data) is None


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "addon.xfile", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_check_command(tmp_path: Path) -> None:
    sloppy = tmp_path / "sloppy.x"
    sloppy.write_bytes(text_buffer("3;\n0, 1,, 2;\n5"))
    listed = run("check", str(sloppy))
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines() == [
        f"{sloppy}: read as the importer does; tolerated: 2",
        "  10:6: two ',' in a row (D3D refuses ',,')",
        "  12:1: no ';' or ',' between a value and this (D3D wants one after every value)",
    ]
    strict = run("check", str(sloppy), "--strict")
    assert strict.returncode == 1
    refused = "D3D refuses this: two ',' in a row (D3D refuses ',,')"
    assert strict.stdout == f"{sloppy}:10:6: {refused}\n"
    as_json = run("check", str(sloppy), "--strict", "--json")
    assert as_json.returncode == 1
    assert json.loads(as_json.stdout) == {
        "file": str(sloppy), "d3d": False, "place": "10:6",
        "message": "two ',' in a row (D3D refuses ',,')",
    }  # fmt: skip
    clean = tmp_path / "clean.x"
    clean.write_bytes(text_buffer("3;\n0, 1, 2;\n5;"))
    ok = run("check", str(clean), "--strict", "--json")
    assert ok.returncode == 0 and json.loads(ok.stdout) == {"file": str(clean), "d3d": True}
    tolerated = json.loads(run("check", str(clean), "--json").stdout)["tolerated"]
    assert tolerated == []
    broken = tmp_path / "broken.x"
    broken.write_bytes(b"xof 0303txt 0032\nFrame {")
    failed = run("check", str(broken))
    assert failed.returncode == 1 and failed.stderr.startswith(f"error: {broken}:2:8: end of file")


def test_check_reads_what_read_reads_and_fails_alike() -> None:
    data = text_buffer("3;\n0, 1, 2;\n5;")
    assert check(data).document.objects[0]["value"].tolist() == [0, 1, 2]
    with pytest.raises(XFileError) as plain:
        read(data[:-5])
    with pytest.raises(XFileError) as checked:
        check(data[:-5])
    assert str(plain.value) == str(checked.value)


def writer_documents() -> list[object]:
    docs = [doc_of(small_mesh())]
    for example in sorted((ROOT / "examples").glob("*.x")):
        docs.append(read(example))
    return docs


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("bits", [32, 64])
def test_everything_the_writer_writes_passes_strict(fmt: str, bits: int) -> None:
    for doc in writer_documents():
        data = write(doc, fmt, bits)  # type: ignore[arg-type]
        result = check(data)
        assert result.departures == [], (fmt, bits, doc.path, result.departures[:3])  # type: ignore[attr-defined]


@pytest.mark.corpus
@pytest.mark.parametrize("fmt", FORMATS)
def test_corpus_written_back_passes_strict(corpus, fmt: str) -> None:  # type: ignore[no-untyped-def]
    for path in sorted(p for p in corpus.iterdir() if p.suffix.lower() == ".x"):
        try:
            doc = read(path)
        except XFileError:
            continue
        result = check(write(doc, fmt, 32))
        assert result.departures == [], (path.name, result.departures[:3])


@pytest.mark.parametrize(("member_type", "accepted"), [("indexColor", True), ("IndexColor", False)])
def test_member_types_are_case_sensitive_in_binary_declarations(
    member_type: str, accepted: bool
) -> None:
    b = Bin().template_kw().name("MeshVertexColors").p("{")
    b.guid("1630B821-7842-11cf-8F52-0040333594A3").type("DWORD").name("nVertexColors").p(";")
    b.type("array").name(member_type).name("vertexColors").p("[").name("nVertexColors")
    b.p("]").p(";").p("}")
    first = check(b.file("0302")).first
    assert (first is None) == accepted, first
    if not accepted:
        assert first is not None and first.where == "byte 16"
        assert "member type 'IndexColor' is not a known template" in first.message


def test_our_own_templates_need_a_declaration_for_d3d() -> None:
    masses = b"ClothMasses { 2; 1.0, 0.0; }\nClothMasses { 1; 1.0; }\n"
    data = b"xof 0303txt 0032\n" + masses
    found = check(data).departures
    assert [(d.where, d.message) for d in found] == [
        ("2:1", "ClothMasses is not declared (D3D knows only Microsoft's standard templates)")
    ]
    assert read(data).objects[0]["Mass"].tolist() == [1.0, 0.0]  # built into our reader
    declared = (
        b"xof 0303txt 0032\ntemplate ClothMasses {\n<F5AD0F93-9BF2-4bcf-B7CF-D68CD6B54156>\n"
        b"DWORD NumPoints;\narray FLOAT Mass[NumPoints];\n}\n" + masses
    )
    assert firsts(declared) is None
