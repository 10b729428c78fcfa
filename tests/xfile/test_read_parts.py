"""A long text run reaches the reader as consecutive parts, one per converted stretch.

Joining a run's values into one array before the members took them wrote every value once more,
into fresh memory (on the 1M-vertex grid, 144 MB of the read's fresh pages). The members now
take values across the parts: faces and animation keys keep their one-pass paths, errors keep
their exact places, and an unknown template's values stay one array. Expected values are the
numbers each test writes itself.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from addon.xfile import XFileError, read
from addon.xfile.scan import numbers
from addon.xfile.scan.text_tokens import TextTokens
from addon.xfile.scan.tokens import EOF, NUMBERS
from addon.xfile.values import ValueStream

from .test_read_big import grid_text


@pytest.fixture
def small_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stretches of at most 2 KiB: a run of a few hundred values comes in many parts."""
    monkeypatch.setattr(numbers, "CHUNK_BYTES", 2048)
    monkeypatch.setattr(numbers, "FIRST_CHUNK_BYTES", 512)
    monkeypatch.setattr(numbers, "SHORT_RUN_BYTES", 0)


def numeric_tokens(text: bytes) -> list[tuple[int, int]]:
    """(offset, value count) of each NUMBERS token of a text file."""
    tokens = TextTokens(text, text.index(b"\n") + 1, None)
    out = []
    while (tok := tokens.next())[0] != EOF:
        if tok[0] == NUMBERS:
            out.append((tok[2], len(tok[1])))
    return out


def test_a_long_run_comes_in_parts_at_token_boundaries(small_steps: None) -> None:
    text, pos, quads = grid_text(30)
    parts = numeric_tokens(text)
    assert len(parts) > 20
    # every part starts where a value or a separator starts, never inside a number
    for offset, _ in parts[1:]:
        assert text[offset - 1 : offset] in (b";", b",", b"\n", b" ")
    assert sum(count for _, count in parts) == 1 + pos.size + 1 + 5 * len(quads)


def test_faces_and_vertices_across_parts(
    small_steps: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_walk(*args: object) -> None:
        raise AssertionError("equal-sized faces across parts took the record-by-record walk")

    monkeypatch.setattr(ValueStream, "_take_ragged_walk", no_walk)
    text, pos, quads = grid_text(30)
    mesh = read(text).objects[0]
    assert np.array_equal(mesh["vertices"], pos)
    faces = mesh["faces"]
    assert faces.flat.dtype == np.int64
    assert np.array_equal(faces.flat.reshape(-1, 5)[:, 1:], quads)
    assert np.array_equal(faces.starts, np.arange(len(quads)) * 5)


def test_mixed_faces_across_parts_walk(small_steps: None) -> None:
    tris = [[i, i + 1, i + 2] for i in range(300)]
    body = b",\n".join(
        b"4;%d,%d,%d,%d;" % (i, i + 1, i + 2, i + 3) if i % 7 == 0 else b"3;%d,%d,%d;" % tuple(t)
        for i, t in enumerate(tris)
    )
    verts = b",\n".join(b"%d.5;0.0;0.0;" % i for i in range(310))
    text = b"xof 0303txt 0032\nMesh m {\n310;\n" + verts + b";\n300;\n" + body + b";\n}\n"
    faces = read(text).objects[0]["faces"]
    got = [faces.flat[s + 1 : s + 1 + faces.flat[s]].tolist() for s in faces.starts.tolist()]
    want = [[i, i + 1, i + 2, i + 3] if i % 7 == 0 else t for i, t in enumerate(tris)]
    assert got == want


def test_a_bad_face_index_in_a_late_part_names_its_line(small_steps: None) -> None:
    text, _, quads = grid_text(30)
    q = quads[700]
    line = b"4;%d,%d,%d,%d;,\n" % tuple(q)
    at = text.index(line)
    broken = text[:at] + line.replace(b"%d," % q[1], b"%d.5," % q[1], 1) + text[at + len(line) :]
    expected = text[:at].count(b"\n") + 1
    column = len(b"4;%d," % q[0]) + 1
    with pytest.raises(XFileError) as err:
        read(broken)
    assert err.value.where == f"{expected}:{column}"
    assert "expected an integer" in err.value.reason


def test_animation_keys_across_parts(small_steps: None, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_walk(*args: object) -> None:
        raise AssertionError("equal-sized keys across parts took the key-by-key walk")

    monkeypatch.setattr(ValueStream, "_take_records_walk", no_walk)
    keys = [(t * 10, 1.0 + t, -0.5 * t, 0.25) for t in range(400)]
    body = b",\n".join(b"%d;3;%r,%r,%r;;" % k for k in keys)
    text = (
        b"xof 0303txt 0032\nAnimationSet walk {\nAnimation a {\n{ bone }\n"
        b"AnimationKey {\n2;\n400;\n" + body + b";\n}\n}\n}\nFrame bone {}\n"
    )
    anim = read(text).objects[0].children[0]
    key = next(o for o in anim.children if getattr(o, "template", "") == "AnimationKey")
    table = np.asarray(key["keys"])
    want = np.array([[k[0], 3, k[1], k[2], k[3]] for k in keys], dtype=np.float64)
    assert np.array_equal(table, want)


def test_unknown_template_values_stay_one_array(small_steps: None) -> None:
    values = [i * 0.5 for i in range(600)]
    text = (
        b"xof 0303txt 0032\nMystery m {\n"
        + b",".join(b"%r" % v for v in values)
        + b';\n"label";\n}\n'
    )
    raw = read(text).objects[0]["_values"]
    assert len(raw) == 2
    assert raw[0].tolist() == values
    assert raw[1] == "label"


def _outcome(data: bytes) -> tuple:
    """What a read gives: every object's template, name, place and member values (arrays
    by their bytes), and the warnings; or the error's place and reason."""

    def flat(value: object) -> object:
        if isinstance(value, np.ndarray):
            return (value.dtype.str, value.shape, value.tobytes())
        if hasattr(value, "flat") and hasattr(value, "starts"):
            return (flat(value.flat), flat(value.starts))  # type: ignore[attr-defined]
        if isinstance(value, dict):
            return tuple((k, flat(v)) for k, v in value.items())
        if isinstance(value, list | tuple):
            return tuple(flat(v) for v in value)
        return value

    try:
        doc = read(data)
    except XFileError as exc:
        return ("error", exc.where, exc.reason)
    objects, todo = [], list(doc.objects)
    while todo:
        obj = todo.pop()
        if hasattr(obj, "members"):
            objects.append((obj.template, obj.name, obj.where, flat(obj.members)))
            todo.extend(obj.children)
    return ("read", objects, list(doc.warnings))


def test_small_steps_read_files_as_the_default_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    """The examples, and copies with a few bytes changed (extra values, bad numbers, cut
    runs): values, places, warnings and errors do not depend on where runs are cut. Before,
    an error right after a part named the separators before the next value (168:3, not
    168:5), and values beyond a template across parts lost their count in the warning."""
    rng = np.random.default_rng(9)
    root = Path(__file__).resolve().parents[2] / "examples"
    checked = 0
    for path in sorted(root.glob("*.x")):
        data = path.read_bytes()
        variants = [data]
        for _ in range(8):
            copy = bytearray(data)
            for at in rng.integers(16, len(copy), size=rng.integers(1, 4)):
                copy[at] = rng.choice(list(b"0123456789.-e,; \n}x"))
            variants.append(bytes(copy))
        for variant in variants:
            default = _outcome(variant)
            with monkeypatch.context() as patch:
                patch.setattr(numbers, "CHUNK_BYTES", 97)
                patch.setattr(numbers, "FIRST_CHUNK_BYTES", 31)
                patch.setattr(numbers, "SHORT_RUN_BYTES", 0)
                assert _outcome(variant) == default
            checked += 1
    assert checked == 27


def test_values_beyond_the_template_are_counted_across_parts(small_steps: None) -> None:
    pairs = b",\n".join(b"0.%d;0.25;" % (i % 10) for i in range(300))
    text = (
        b"xof 0303txt 0032\nMesh m {\n3; 0;0;0;, 1;0;0;, 0;1;0;;\n1; 3;0,1,2;;\n"
        b"MeshTextureCoords {\n2;\n" + pairs + b";\n}\n}\n"
    )
    warnings = read(text).warnings
    assert any("MeshTextureCoords: 596 value(s) beyond the template ignored" in w for w in warnings)


def test_an_error_after_a_part_names_the_next_value(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first value's place, not the separators before it that open its stretch."""
    monkeypatch.setattr(numbers, "CHUNK_BYTES", 8)
    monkeypatch.setattr(numbers, "FIRST_CHUNK_BYTES", 8)
    monkeypatch.setattr(numbers, "SHORT_RUN_BYTES", 0)
    text = (
        b"xof 0303txt 0032\n"
        b"template Named { <11111111-2222-3333-4444-555555555555> DWORD a; STRING s; }\n"
        b"Named n {\n1;        2;\n}\n"
    )
    with pytest.raises(XFileError) as err:
        read(text)
    line = text[: text.index(b"1;   ")].count(b"\n") + 1
    assert err.value.where == f"{line}:{len(b'1;        ') + 1}"
    assert "expected a string" in err.value.reason
