"""A token model of .X bodies, written here from the format notes (no import from ``addon``).

The fuzzer mutates files as token lists and writes them back in any encoding, so one seed
gives text and binary variants and a mutation (a count, a GUID, a truncation) lands on a
token, not in the middle of a number. Text and binary are translated token for token:
numeric runs become INTEGER_LIST / FLOAT_LIST tokens and back.
"""

from __future__ import annotations

import math
import re
import struct
import uuid
from dataclasses import dataclass
from typing import Any

PUNCT_IDS = {"{": 10, "}": 11, "(": 12, ")": 13, "[": 14, "]": 15,
             "<": 16, ">": 17, ".": 18, ",": 19, ";": 20}  # fmt: skip
TYPE_IDS = {"WORD": 40, "DWORD": 41, "FLOAT": 42, "DOUBLE": 43, "CHAR": 44, "UCHAR": 45,
            "SWORD": 46, "SDWORD": 47, "VOID": 48, "STRING": 49, "UNICODE": 50,
            "CSTRING": 51, "ARRAY": 52}  # fmt: skip
ID_TYPES = {v: ("array" if k == "ARRAY" else k) for k, v in TYPE_IDS.items()}
ID_PUNCT = {v: k for k, v in PUNCT_IDS.items()}


@dataclass
class Tok:
    """``kind``: name, string, guid, ints, floats, int (a lone INTEGER), punct, template, or
    raw (bytes written as they are: a mutator's hostile token)."""

    kind: str
    value: Any


_TEXT = re.compile(
    rb"(?P<skip>(?:\s|\x00|\x1a)+|//[^\r\n]*|#[^\r\n]*)"
    rb"|(?P<string>\"[^\"]*\")"
    rb"|(?P<guid><\s*[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}\s*>)"
    rb"|(?P<number>[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:#(?:IND|QNAN|SNAN|INF)\d*)?(?:[eE][+-]?\d+)?)"
    rb"|(?P<name>[A-Za-z_\x80-\xff][A-Za-z0-9_\-.\x80-\xff]*)"
    rb"|(?P<punct>[{}\[\]()<>,;.])"
)
_INT = re.compile(rb"[+-]?\d+")


class LexError(ValueError):
    pass


def _number(text: bytes) -> int | float:
    if b"#" in text:
        upper = text.upper()
        if b"INF" in upper:
            return -math.inf if text.startswith(b"-") else math.inf
        return math.nan
    if _INT.fullmatch(text):
        return int(text)
    return float(text)


def lex_text(body: bytes) -> list[Tok]:
    """Tokens of a text body (after the 16-byte header); numbers grouped into runs."""
    toks: list[Tok] = []
    pos = 0
    run: list[int | float] = []

    def flush() -> None:
        if run:
            toks.append(Tok("numbers", list(run)))
            run.clear()

    while pos < len(body):
        m = _TEXT.match(body, pos)
        if m is None:
            raise LexError(f"unexpected byte {body[pos : pos + 1]!r} at {pos}")
        pos = m.end()
        kind = m.lastgroup
        text = m.group()
        if kind == "skip":
            continue
        if kind == "number":
            run.append(_number(text))
            continue
        if kind == "punct" and text in b",;" and run:
            continue  # separators inside a numeric run
        flush()
        if kind == "string":
            toks.append(Tok("string", text[1:-1].decode("latin-1")))
        elif kind == "guid":
            toks.append(Tok("guid", uuid.UUID(text.strip(b"<> \t\r\n").decode())))
        elif kind == "name":
            name = text.decode("latin-1")
            toks.append(Tok("template" if name.lower() == "template" else "name", name))
        else:
            toks.append(Tok("punct", text.decode()))
    flush()
    return _split_runs(toks)


def _split_runs(toks: list[Tok]) -> list[Tok]:
    """Numeric runs -> ``ints``/``floats`` list tokens (binary lists hold one kind each)."""
    out: list[Tok] = []
    depth_in_template = 0
    for tok in toks:
        if tok.kind == "template":
            depth_in_template = -1  # the next '{' opens the declaration
        elif tok.kind == "punct" and tok.value == "{" and depth_in_template == -1:
            depth_in_template = 1
        elif tok.kind == "punct" and tok.value == "}" and depth_in_template > 0:
            depth_in_template = 0
        if tok.kind != "numbers":
            out.append(tok)
            continue
        values = tok.value
        if depth_in_template > 0 and len(values) == 1 and isinstance(values[0], int):
            out.append(Tok("int", values[0]))  # a literal array dimension
            continue
        start = 0
        for j in range(1, len(values) + 1):
            if j == len(values) or _is_dword(values[j]) != _is_dword(values[start]):
                chunk = values[start:j]
                kind = "ints" if _is_dword(chunk[0]) else "floats"
                out.append(Tok(kind, [float(v) for v in chunk] if kind == "floats" else chunk))
                start = j
    return out


def _is_dword(v: int | float) -> bool:
    return isinstance(v, int) and 0 <= v < 2**32


def lex_binary(body: bytes, float_bits: int) -> list[Tok]:
    """Tokens of a binary body (after the header, decompressed)."""
    toks: list[Tok] = []
    pos = 0
    fcode, fsize = ("d", 8) if float_bits == 64 else ("f", 4)
    while pos < len(body):
        if pos + 2 > len(body):
            raise LexError("truncated token id")
        tid = struct.unpack_from("<H", body, pos)[0]
        pos += 2
        if tid in ID_PUNCT:
            toks.append(Tok("punct", ID_PUNCT[tid]))
        elif tid in ID_TYPES:
            toks.append(Tok("name", ID_TYPES[tid]))
        elif tid == 31:
            toks.append(Tok("template", "template"))
        elif tid in (1, 2):
            (n,) = struct.unpack_from("<I", body, pos)
            raw = body[pos + 4 : pos + 4 + n]
            if len(raw) != n:
                raise LexError("truncated name")
            pos += 4 + n
            text = raw.rstrip(b"\x00").decode("latin-1")
            toks.append(Tok("name" if tid == 1 else "string", text))
        elif tid == 3:
            toks.append(Tok("int", struct.unpack_from("<I", body, pos)[0]))
            pos += 4
        elif tid == 5:
            toks.append(Tok("guid", uuid.UUID(bytes_le=bytes(body[pos : pos + 16]))))
            pos += 16
        elif tid in (6, 7):
            (n,) = struct.unpack_from("<I", body, pos)
            size = 4 if tid == 6 else fsize
            if pos + 4 + n * size > len(body):
                raise LexError("truncated list")
            code = "I" if tid == 6 else fcode
            values = list(struct.unpack_from(f"<{n}{code}", body, pos + 4))
            toks.append(Tok("ints" if tid == 6 else "floats", values))
            pos += 4 + n * size
        else:
            raise LexError(f"unknown token id {tid}")
    return toks


# -- writing -----------------------------------------------------------------------------------
def _fmt_float(v: float) -> str:
    if math.isnan(v):
        return "-1.#IND00"
    if math.isinf(v):
        return "-1.#INF00" if v < 0 else "1.#INF00"
    return repr(float(v))


def _fmt_value(v: Any) -> str:
    if isinstance(v, str):
        return v  # mutators may plant raw number spellings (huge digit strings)
    if isinstance(v, float):
        return _fmt_float(v)
    return str(int(v))


def to_text(toks: list[Tok]) -> bytes:
    """A text body: one token per space, lists as ``v,v,v;``."""
    parts: list[str] = []
    for tok in toks:
        k, v = tok.kind, tok.value
        if k in ("name", "template"):
            parts.append(str(v))
        elif k == "string":
            parts.append('"' + str(v).replace('"', "'") + '"')
        elif k == "guid":
            parts.append(f"<{str(v).upper()}>")
        elif k == "int":
            parts.append(_fmt_value(v))
        elif k in ("ints", "floats"):
            parts.append(",".join(_fmt_value(x) for x in v) + ";")
        elif k == "raw":
            parts.append(bytes(v).decode("latin-1"))
        else:
            parts.append(str(v))
            if v in "{};":
                parts.append("\n")
    return " ".join(parts).encode("latin-1", errors="replace")


def _u32(v: Any) -> int:
    try:
        return int(v) & 0xFFFFFFFF
    except (ValueError, OverflowError):
        return 0xFFFFFFFF


def _float_bytes(values: list[Any], float_bits: int) -> bytes:
    code = "d" if float_bits == 64 else "f"
    out = []
    for v in values:
        try:
            f = float(v)
        except (ValueError, OverflowError):
            f = math.inf
        if code == "f" and math.isfinite(f) and abs(f) > 3.4e38:
            f = math.copysign(math.inf, f)
        out.append(struct.pack("<" + code, f))
    return b"".join(out)


def to_binary(toks: list[Tok], float_bits: int) -> bytes:
    """A binary body; names of primitive types inside templates become type tokens."""
    out: list[bytes] = []
    in_template = 0
    for tok in toks:
        k, v = tok.kind, tok.value
        if k == "template":
            out.append(struct.pack("<H", 31))
            in_template = -1
        elif k == "punct":
            out.append(struct.pack("<H", PUNCT_IDS[v]))
            if v == "{" and in_template == -1:
                in_template = 1
            elif v == "}" and in_template == 1:
                in_template = 0
        elif k == "name":
            tid = TYPE_IDS.get(str(v).upper()) if in_template == 1 else None
            if tid is not None:
                out.append(struct.pack("<H", tid))
            else:
                raw = str(v).encode("latin-1", errors="replace")
                out.append(struct.pack("<HI", 1, len(raw)) + raw)
        elif k == "string":
            raw = str(v).encode("latin-1", errors="replace")
            out.append(struct.pack("<HI", 2, len(raw)) + raw)
        elif k == "guid":
            out.append(struct.pack("<H", 5) + v.bytes_le)
        elif k == "int":
            out.append(struct.pack("<HI", 3, _u32(v)))
        elif k == "ints":
            out.append(
                struct.pack("<HI", 6, len(v)) + b"".join(struct.pack("<I", _u32(x)) for x in v)
            )
        elif k == "floats":
            out.append(struct.pack("<HI", 7, len(v)) + _float_bytes(v, float_bits))
        elif k == "raw":
            out.append(bytes(v))
        else:
            raise ValueError(f"unknown token kind {k}")
    return b"".join(out)
