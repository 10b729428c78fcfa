"""Structure-aware mutations: a seed's tokens are changed where a reader is most likely wrong
(counts, dimensions, GUIDs, references, nesting, truncation), written in a random container,
then optionally damaged at the byte level (token ids, MSZIP fields, deflate data).

``mutate(seed, rng, seeds)`` returns ``(data, recipe)``; the recipe names what was done, so a
crasher's file name and the campaign's log say which mutation found it.
"""

from __future__ import annotations

import math
import random
import struct
import uuid
from collections.abc import Callable

from .encodings import FORMATS, encode
from .seeds import Seed
from .xtokens import TYPE_IDS, Tok

INTERESTING_INTS: list[int | str] = [
    0, 1, 2, 3, 4, 16, 255, 256, 65535, 65536, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**63,
    -1, -2, -(2**31), -(2**63), "9" * 40, "-" + "9" * 40,
]  # fmt: skip
INTERESTING_FLOATS: list[float | str] = [
    0.0, -0.0, 0.5, -1.5, 1e-45, 1e38, 3.5e38, 1e308, -1e308, math.nan, math.inf, -math.inf,
    "1e999", "-1e999", "1.#QNAN0", "-1.#IND00", "1.#INF00e+000", "1" + "0" * 400 + ".5",
]  # fmt: skip
TYPES = ["WORD", "DWORD", "FLOAT", "DOUBLE", "CHAR", "STRING", "Vector", "MeshFace",
         "Matrix4x4", "Nowhere", "VOID", "ULONGLONG"]  # fmt: skip
STANDARD = ["Mesh", "Frame", "AnimationKey", "MeshFace", "Vector", "SkinWeights",
            "TimedFloatKeys", "FloatKeys", "Coords2d", "MeshMaterialList"]  # fmt: skip
DEPTHS = [2, 50, 200, 255, 256, 257, 1000, 5000]

Mutation = Callable[[list[Tok], random.Random, list[Seed]], str]


def _pick(toks: list[Tok], rng: random.Random, pred: Callable[[Tok], bool]) -> int | None:
    found = [i for i, t in enumerate(toks) if pred(t)]
    return rng.choice(found) if found else None


def _is(kind: str, value: str | None = None) -> Callable[[Tok], bool]:
    return lambda t: t.kind == kind and (value is None or t.value == value)


def _template_spans(toks: list[Tok]) -> list[tuple[int, int]]:
    """(start, end) token index ranges of template declarations."""
    spans = []
    i = 0
    while i < len(toks):
        if toks[i].kind == "template":
            j = i
            while j < len(toks) and not (toks[j].kind == "punct" and toks[j].value == "}"):
                j += 1
            spans.append((i, j))
            i = j
        i += 1
    return spans


# -- token mutations ---------------------------------------------------------------------------
def m_count(toks: list[Tok], rng: random.Random, seeds: list[Seed]) -> str:
    """A count or a value replaced by an interesting one (huge, negative, off by one, NaN)."""
    i = _pick(toks, rng, lambda t: t.kind in ("ints", "floats", "int") and t.value != [])
    if i is None:
        return "count:none"
    tok = toks[i]
    values = list(tok.value) if isinstance(tok.value, list) else [tok.value]
    j = rng.randrange(min(len(values), 8)) if rng.random() < 0.7 else rng.randrange(len(values))
    old = values[j]
    if rng.random() < 0.6:
        choice: object = rng.choice(INTERESTING_INTS)
    elif rng.random() < 0.5:
        choice = rng.choice(INTERESTING_FLOATS)
    else:
        delta = rng.choice([-1, 1, 2, -2])
        choice = old + delta if isinstance(old, (int, float)) else delta
    values[j] = choice
    kind = tok.kind
    if kind == "ints" and not (isinstance(choice, int) and 0 <= choice < 2**32):
        kind = "floats" if rng.random() < 0.5 else "ints"  # binary: wraps or becomes a float
    toks[i] = Tok(kind, values if isinstance(tok.value, list) else values[0])
    return f"count:{choice!s:.12}"


def m_list_length(toks: list[Tok], rng: random.Random, seeds: list[Seed]) -> str:
    """A numeric list shortened, emptied, or grown (arrays that disagree with their counts)."""
    i = _pick(toks, rng, lambda t: t.kind in ("ints", "floats"))
    if i is None:
        return "listlen:none"
    values = list(toks[i].value)
    op = rng.random()
    if op < 0.4 and values:
        values = values[: rng.randrange(len(values))]
    elif op < 0.7:
        extra = rng.choice([1, 2, 3, 17, 1000])
        values += [values[-1] if values else 0] * extra
    else:
        values = values * rng.choice([2, 3])
    toks[i] = Tok(toks[i].kind, values)
    return f"listlen:{len(values)}"


def m_dims(toks: list[Tok], rng: random.Random, seeds: list[Seed]) -> str:
    """An array dimension in a declaration changed: other member, literal, extra, missing."""
    spans = _template_spans(toks)
    cands = [
        i for a, b in spans for i in range(a, b) if toks[i].kind == "punct" and toks[i].value == "["
    ]
    if not cands:
        return _insert_template(toks, rng)
    i = rng.choice(cands)
    names = [t.value for t in toks if t.kind == "name"]
    op = rng.randrange(4)
    if op == 0 and i + 1 < len(toks):
        toks[i + 1] = Tok("name", rng.choice([*names, "nowhere", "template"]))
    elif op == 1 and i + 1 < len(toks):
        toks[i + 1] = Tok("int", rng.choice([0, 1, 3, 2**31, 2**32 - 1]))
    elif op == 2:
        toks[i:i] = [
            Tok("punct", "["),
            Tok("int", rng.choice([0, 2, 1000, 2**20])),
            Tok("punct", "]"),
        ]
    else:
        del toks[i : i + 3]
    return f"dims:{op}"


def m_member_type(toks: list[Tok], rng: random.Random, seeds: list[Seed]) -> str:
    """A member type in a declaration changed (to a struct, a string, itself, nothing known)."""
    spans = _template_spans(toks)
    cands = [i for a, b in spans for i in range(a + 3, b) if toks[i].kind == "name"]
    if not cands:
        return _insert_template(toks, rng)
    i = rng.choice(cands)
    own = next((toks[a + 1].value for a, b in spans if a < i <= b and a + 1 < len(toks)), "X")
    toks[i] = Tok("name", rng.choice([*TYPES, own, "array"]))
    return f"type:{toks[i].value}"


def _insert_template(toks: list[Tok], rng: random.Random) -> str:
    """A file declaration overriding a standard template with a hostile layout."""
    target = rng.choice(STANDARD)
    member_type = rng.choice([*TYPES, target])
    body = [Tok("name", "DWORD"), Tok("name", "n"), Tok("punct", ";"), Tok("name", "array"),
            Tok("name", member_type), Tok("name", "v"), Tok("punct", "["), Tok("name", "n"),
            Tok("punct", "]"), Tok("punct", ";")]  # fmt: skip
    if rng.random() < 0.3:
        body += [Tok("punct", "["), Tok("punct", "."), Tok("punct", "."), Tok("punct", "."),
                 Tok("punct", "]")]  # fmt: skip
    decl = [Tok("template", "template"), Tok("name", target), Tok("punct", "{"), *body,
            Tok("punct", "}")]  # fmt: skip
    toks[0:0] = decl
    return f"template:{target}:{member_type}"


def m_guid(toks: list[Tok], rng: random.Random, seeds: list[Seed]) -> str:
    """A GUID replaced, removed, duplicated onto another object, or half written."""
    i = _pick(toks, rng, _is("guid"))
    opens = [k for k, t in enumerate(toks) if t.kind == "punct" and t.value == "{"]
    op = rng.randrange(4)
    if i is not None and op == 0:
        toks[i] = Tok("guid", uuid.UUID(int=rng.getrandbits(128)))
    elif i is not None and op == 1:
        del toks[i]
    elif i is not None and op == 2 and opens:
        toks.insert(rng.choice(opens) + 1, Tok("guid", toks[i].value))
    elif opens:
        toks.insert(rng.choice(opens) + 1, Tok("raw", b"<0123-4567"))
    return f"guid:{op}"


def m_reference(toks: list[Tok], rng: random.Random, seeds: list[Seed]) -> str:
    """References renamed, empty, to GUIDs nobody has, to their own parent, at top level."""
    names = [t.value for t in toks if t.kind == "name"] or ["X"]
    guids = [t.value for t in toks if t.kind == "guid"] or [uuid.UUID(int=7)]
    op = rng.randrange(5)
    refs = [k for k in range(len(toks) - 2)
            if toks[k].kind == "punct" and toks[k].value == "{" and toks[k + 1].kind == "name"
            and toks[k + 2].kind == "punct" and toks[k + 2].value == "}"]  # fmt: skip
    if op == 0 and refs:
        toks[rng.choice(refs) + 1] = Tok("name", rng.choice([*names, "Missing", "x" * 300]))
    elif op == 1:
        toks.insert(rng.randrange(len(toks) + 1), Tok("punct", "{"))
        return "ref:unbalanced"
    else:
        pos = rng.choice([k + 1 for k, t in enumerate(toks) if t.kind == "punct" and t.value == "{"]
                         or [0])  # fmt: skip
        ref = [Tok("punct", "{")]
        if op in (2, 4):
            ref.append(Tok("name", rng.choice(names)))
        if op in (3, 4):
            ref.append(Tok("guid", rng.choice(guids)))
        ref.append(Tok("punct", "}"))
        toks[pos:pos] = ref
    return f"ref:{op}"


def m_truncate(toks: list[Tok], rng: random.Random, seeds: list[Seed]) -> str:
    """The file cut at a token, preferring object boundaries (truncation at every depth)."""
    if not toks:
        return "trunc:empty"
    bounds = [k for k, t in enumerate(toks) if t.kind == "punct" and t.value in "{}"]
    cut = (
        rng.choice(bounds) + rng.choice([0, 1])
        if bounds and rng.random() < 0.6
        else rng.randrange(len(toks))
    )
    del toks[cut:]
    if toks and toks[-1].kind in ("ints", "floats") and toks[-1].value and rng.random() < 0.5:
        values = toks[-1].value
        toks[-1] = Tok(toks[-1].kind, values[: rng.randrange(len(values))])  # inside a list
    return f"trunc:{cut}"


def m_nest(toks: list[Tok], rng: random.Random, seeds: list[Seed]) -> str:
    """Deep nesting: frames in frames, references in references, templates in templates."""
    depth = rng.choice(DEPTHS)
    op = rng.randrange(4)
    if op == 0:
        head = [
            t
            for k in range(depth)
            for t in (Tok("name", "Frame"), Tok("name", f"F{k}"), Tok("punct", "{"))
        ]
        closed = rng.random() < 0.8
        toks[0:0] = head
        if closed:
            toks.extend(Tok("punct", "}") for _ in range(depth))
    elif op == 1:
        pos = rng.randrange(len(toks) + 1)
        toks[pos:pos] = (
            [Tok("punct", "{")] * depth + [Tok("name", "A")] + [Tok("punct", "}")] * depth
        )
    elif op == 2:  # a chain of templates, each holding the next: deep layouts
        decls: list[Tok] = []
        for k in range(depth):
            inner = f"T{k + 1}" if k + 1 < depth else rng.choice(["DWORD", "T0", "FLOAT"])
            decls += [Tok("template", "template"), Tok("name", f"T{k}"), Tok("punct", "{")]
            decls += [Tok("name", inner), Tok("name", "m"), Tok("punct", ";"), Tok("punct", "}")]
        toks[0:0] = [
            *decls,
            Tok("name", "T0"),
            Tok("punct", "{"),
            Tok("ints", [1] * 4),
            Tok("punct", "}"),
        ]
    else:  # an array of arrays of the same struct: nested member dicts
        toks[0:0] = [Tok("template", "template"), Tok("name", "Self"), Tok("punct", "{"),
                     Tok("name", "DWORD"), Tok("name", "n"), Tok("punct", ";"),
                     Tok("name", "array"), Tok("name", "Self"), Tok("name", "s"),
                     Tok("punct", "["), Tok("name", "n"), Tok("punct", "]"), Tok("punct", ";"),
                     Tok("punct", "}"), Tok("name", "Self"), Tok("punct", "{"),
                     Tok("ints", [1] * depth + [0]), Tok("punct", "}")]  # fmt: skip
    return f"nest:{op}:{depth}"


def m_edit(toks: list[Tok], rng: random.Random, seeds: list[Seed]) -> str:
    """Tokens deleted, duplicated, swapped, or spliced in from another seed."""
    if not toks:
        return "edit:empty"
    op = rng.randrange(4)
    i = rng.randrange(len(toks))
    j = min(len(toks), i + rng.choice([1, 1, 2, 5, 20]))
    if op == 0:
        del toks[i:j]
    elif op == 1:
        toks[j:j] = [Tok(t.kind, t.value) for t in toks[i:j]] * rng.choice([1, 2, 50])
    elif op == 2:
        k = rng.randrange(len(toks))
        toks[i], toks[k] = toks[k], toks[i]
    else:
        donors = [s for s in seeds if s.toks and len(s.toks) < 5000]
        if donors:
            other = rng.choice(donors).toks or []
            a = rng.randrange(len(other))
            toks[i:i] = list(other[a : a + rng.choice([1, 3, 10, 40])])
    return f"edit:{op}"


def m_text_value(toks: list[Tok], rng: random.Random, seeds: list[Seed]) -> str:
    """A name or string replaced: empty, long, NUL bytes, non-UTF-8, a keyword."""
    i = _pick(toks, rng, lambda t: t.kind in ("name", "string"))
    if i is None:
        return "text:none"
    value = rng.choice(["", "x" * 70000, "a\x00b", "\xff\xfe", "template", "array", "Frame",
                        "Mesh", "{", "1abc", "é"])  # fmt: skip
    toks[i] = Tok(toks[i].kind, value)
    return "text"


def m_raw(toks: list[Tok], rng: random.Random, seeds: list[Seed]) -> str:
    """A hostile raw token: unknown binary ids, lists longer than the file, junk text bytes."""
    pos = rng.randrange(len(toks) + 1)
    op = rng.randrange(5)
    if op == 0:
        raw = struct.pack(
            "<H", rng.choice([0, 4, 8, 9, 21, 30, 32, 39, 53, 255, 65535, rng.randrange(65536)])
        )
    elif op == 1:
        raw = struct.pack("<HI", rng.choice([6, 7]), rng.choice([2**32 - 1, 2**30, 1000, 3]))
    elif op == 2:
        raw = struct.pack("<HI", rng.choice([1, 2]), rng.choice([2**32 - 1, 2**31, 100]))
    elif op == 3:
        raw = struct.pack("<H", rng.choice([3, 5]))  # INTEGER / GUID without their payload
    else:
        raw = bytes(rng.choice(b'@$%^&*!?"\\`~|\x00\x7f\xff\r/') for _ in range(rng.randint(1, 3)))
    toks.insert(pos, Tok("raw", raw))
    if rng.random() < 0.3:
        toks.insert(pos, Tok("name", rng.choice(list(TYPE_IDS))))
    return f"raw:{op}"


TOKEN_MUTATIONS: list[tuple[Mutation, float]] = [
    (m_count, 5), (m_list_length, 2), (m_dims, 1.5), (m_member_type, 1), (m_guid, 1),
    (m_reference, 1.5), (m_truncate, 2), (m_nest, 0.5), (m_edit, 2), (m_text_value, 0.7),
    (m_raw, 1.5),
]  # fmt: skip


# -- byte and container mutations --------------------------------------------------------------
def havoc(data: bytes, rng: random.Random) -> bytes:
    """Random bytes changed, dropped or inserted after the header."""
    b = bytearray(data)
    for _ in range(rng.randint(1, 6)):
        if len(b) <= 16:
            break
        i = rng.randrange(16, len(b))
        op = rng.random()
        if op < 0.5:
            b[i] = rng.randrange(256)
        elif op < 0.75:
            del b[i]
        else:
            b.insert(i, rng.randrange(256))
    return bytes(b)


def mszip_damage(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """Damage to a compressed file: sizes, the ``CK`` signature, deflate bits, truncation."""
    b = bytearray(data)
    blocks = []
    pos = 20
    while pos + 4 <= len(b):
        blocks.append(pos)
        pos += 4 + struct.unpack_from("<H", b, pos + 2)[0]
    op = rng.randrange(7)
    blk = rng.choice(blocks) if blocks else 20
    if op == 0:
        declared = struct.unpack_from("<I", b, 16)[0] + rng.choice([-1, 1, 32768])
        total = rng.choice([0, 15, 16, 17, 2**32 - 1, 2**31, len(b) * 1000, declared])
        struct.pack_into("<I", b, 16, total & 0xFFFFFFFF)
    elif op == 1 and blk + 2 <= len(b):
        struct.pack_into("<H", b, blk, rng.choice([0, 1, 32767, 32768, 32769, 65535]))
    elif op == 2 and blk + 4 <= len(b):
        struct.pack_into("<H", b, blk + 2, rng.choice([0, 1, 2, 3, 6, 65535]))
    elif op == 3 and blk + 6 <= len(b):
        b[blk + 4 : blk + 6] = rng.choice([b"ck", b"\x00\x00", b"KC"])
    elif op == 4 and blk + 6 < len(b):
        end = min(len(b), blk + 4 + struct.unpack_from("<H", b, blk + 2)[0])
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(blk + 6, max(blk + 7, end))
            if i < len(b):
                b[i] ^= 1 << rng.randrange(8)
    elif op == 5:
        del b[rng.randrange(16, len(b)) :]
    else:
        b += bytes(rng.randrange(256) for _ in range(rng.randint(1, 40)))
    return bytes(b), f"mszip:{op}"


def header_damage(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """A header that lies: another container, float size or version than the body."""
    field = rng.randrange(3)
    value = [rng.choice([b"0302", b"0303", b"0304"]),
             rng.choice([b"txt ", b"bin ", b"tzip", b"bzip", b"TXT "]),
             rng.choice([b"0032", b"0064"])][field]  # fmt: skip
    start = [4, 8, 12][field]
    return data[:start] + value + data[start + 4 :], f"header:{value.decode().strip()}"


def mutate(seed: Seed, rng: random.Random, seeds: list[Seed]) -> tuple[bytes, str]:
    """One mutated input from ``seed`` and the recipe that made it."""
    recipe: list[str] = [seed.name]
    if seed.toks is None:
        data = havoc(seed.data, rng)
        return data, "+".join([*recipe, "havoc"])
    toks = list(seed.toks)
    mutations, weights = zip(*TOKEN_MUTATIONS, strict=True)
    for _ in range(rng.choice([0, 1, 1, 1, 2, 2, 3])):
        mutation = rng.choices(mutations, weights)[0]
        recipe.append(mutation(toks, rng, seeds))
    fmt = rng.choice(FORMATS)
    bits = seed.float_bits if rng.random() < 0.7 else rng.choice([32, 64])
    version = rng.choice(["0302", "0303"])
    block = rng.choice([32768, 32768, rng.randint(1, 32768), rng.randint(1, 512)])
    window = rng.random() < 0.9
    recipe.append(f"{fmt}{bits}" + (f"/b{block}" if fmt in ("tzip", "bzip") else ""))
    data = encode(toks, fmt, bits, version, block=block, window=window)
    after = rng.random()
    if after < 0.15:
        data = havoc(data, rng)
        recipe.append("havoc")
    elif after < 0.3 and fmt in ("tzip", "bzip"):
        data, step = mszip_damage(data, rng)
        recipe.append(step)
    elif after < 0.35:
        data, step = header_damage(data, rng)
        recipe.append(step)
    return data, "+".join(recipe)
