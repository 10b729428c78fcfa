"""Names and strings in UTF-8, Shift-JIS or CP1252: ``read(..., encoding=)`` and ``auto``'s
guess, in text and binary files; the encoding used is on the document."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from addon.xfile import ENCODINGS, read

from .xenc import Bin, compressed_file

ROOT = Path(__file__).resolve().parents[2]
HAIR = "髪の毛"  # "hair": Shift-JIS 94 AF 82 CC 96 D1
SO = "ソ"  # Shift-JIS 83 5C: its second byte is ASCII "\\"
TABLE = "表"  # Shift-JIS 95 5C
BRACE = "ー"  # Shift-JIS 81 5B: its second byte is "["


def text_file(frame: str, texture: str, encoding: str) -> bytes:
    material = f'Material m {{ 1;1;1;1;; 0; 0;0;0;; 0;0;0;; TextureFilename {{ "{texture}"; }} }}'
    body = f"Frame {frame} {{\n {material}\n}}\n"
    return b"xof 0303txt 0032\n" + body.encode(encoding)


def names(doc) -> tuple[str | None, str]:  # type: ignore[no-untyped-def]
    frame = doc.objects[0]
    texture = next(frame.objects("Material")).children[0]
    return frame.name, texture["filename"]


@pytest.mark.parametrize("frame", [HAIR, f"{SO}{TABLE}", f"a{BRACE}b"])
def test_shift_jis_text_names_auto_and_chosen(frame: str) -> None:
    data = text_file(frame, f"{HAIR}.png", "cp932")
    for encoding in ("auto", "shift_jis"):
        doc = read(data, encoding=encoding)
        assert names(doc) == (frame, f"{HAIR}.png")
        assert doc.names_encoding == "shift_jis"
    if frame == HAIR:  # read as CP1252, what the reader did before
        garbled = read(data, encoding="cp1252")
        mojibake = "\u201d\u00af\u201a\u00cc\u2013\u00d1"
        assert garbled.names_encoding == "cp1252"
        assert names(garbled) == (mojibake, f"{mojibake}.png")


def test_cp1252_text_is_guessed_when_not_japanese() -> None:
    data = text_file("Müller", "café.bmp", "cp1252")
    doc = read(data)
    assert names(doc) == ("Müller", "café.bmp") and doc.names_encoding == "cp1252"


def test_utf8_wins_when_valid() -> None:
    data = text_file(HAIR, "café.bmp", "utf-8")
    doc = read(data)
    assert names(doc) == (HAIR, "café.bmp") and doc.names_encoding == "utf-8"
    ascii_doc = read(text_file("plain", "a.png", "ascii"))
    assert ascii_doc.names_encoding == "utf-8"


def test_explicit_utf8_replaces_what_it_cannot_decode() -> None:
    doc = read(text_file("Müller", "x.bmp", "cp1252"), encoding="utf-8")
    assert names(doc)[0] == "M\ufffdller" and doc.names_encoding == "utf-8"


def binary_file(frame: str, texture: str, encoding: str, fmt: str = "bin") -> bytes:
    b = Bin()
    raw = frame.encode(encoding)
    b.name("Frame").raw(b"\x01\x00" + len(raw).to_bytes(4, "little") + raw).p("{")
    tex = texture.encode(encoding)
    b.name("TextureFilename").p("{").raw(b"\x02\x00" + len(tex).to_bytes(4, "little") + tex)
    b.p(";").p("}").p("}")
    if fmt == "bzip":
        return compressed_file(b.body(), "bzip")
    return b.file()


@pytest.mark.parametrize("fmt", ["bin", "bzip"])
def test_shift_jis_binary_names(fmt: str) -> None:
    data = binary_file(HAIR, f"{SO}.png", "cp932", fmt)
    doc = read(data)
    frame = doc.objects[0]
    assert frame.name == HAIR and frame.children[0]["filename"] == f"{SO}.png"
    assert doc.names_encoding == "shift_jis"
    latin = read(binary_file("Müller", "é.png", "cp1252", fmt))
    assert latin.objects[0].name == "Müller" and latin.names_encoding == "cp1252"


def test_unknown_encoding_is_a_value_error() -> None:
    assert ENCODINGS == ("auto", "utf-8", "shift_jis", "cp1252")
    with pytest.raises(ValueError, match="unknown names encoding 'latin9'"):
        read(b"xof 0303txt 0032", encoding="latin9")


def test_cli_encoding_option(tmp_path: Path) -> None:
    path = tmp_path / "hair.x"
    path.write_bytes(text_file(HAIR, "a.png", "cp932").replace(b"Frame", b"Mesh", 1)
                     .replace(b"Material m", b"0;; 0;; Material m"))  # fmt: skip
    for args, shown in (([], HAIR), (["--encoding", "shift_jis"], HAIR)):
        out = subprocess.run(
            [sys.executable, "-m", "addon.xfile", "info", str(path), *args],
            cwd=ROOT, capture_output=True, text=True, timeout=60, encoding="utf-8",
        )  # fmt: skip
        assert out.returncode == 0, out.stderr
        assert out.stdout.splitlines()[0].endswith(", names in shift_jis")
        assert f"  mesh {shown}: 0 vertices" in out.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "addon.xfile", "info", str(path), "--encoding", "latin9"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert bad.returncode == 2 and "invalid choice: 'latin9'" in bad.stderr


def test_choices_for_an_import_option() -> None:
    from addon.xfile import ENCODING_CHOICES

    assert [c[0] for c in ENCODING_CHOICES] == list(ENCODINGS)
    assert all(len(c) == 3 and all(isinstance(x, str) and x for x in c) for c in ENCODING_CHOICES)
