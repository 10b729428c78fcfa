"""Case-insensitive names: ``fold`` is ``str.lower`` without its scratch; the template
table's case-insensitive index gives the same answers as a dict of folded names."""

from __future__ import annotations

import random
import tracemalloc
import uuid

import pytest

from addon.xfile import names
from addon.xfile.names import fold, is_word
from addon.xfile.standard_templates import standard_templates
from addon.xfile.templates import (
    CLOSED,
    OPEN,
    RESTRICTED,
    Member,
    Template,
    TemplateTable,
    _FoldIndex,
)

# capital sigma (lowered by its neighbours), case-ignorable ones (. ' : combining accent,
# modifier letter), cased non-ASCII (É, dotted İ that lowers to two characters), neutral
# ASCII, and the Kelvin sign
ALPHABET = "ΣΣΣσ.'\u0301\u02b0ÉéİaZ09_-K"


@pytest.mark.parametrize("piece", [1, 2, 3, 7, 64])
def test_fold_is_lower_in_pieces(monkeypatch: pytest.MonkeyPatch, piece: int) -> None:
    monkeypatch.setattr(names, "PIECE", piece)
    rng = random.Random(piece)
    for _ in range(3000):
        text = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 40)))
        assert fold(text) == text.lower(), text


def test_fold_of_a_long_non_ascii_name_needs_no_big_scratch() -> None:
    for name in ("é" * 200_000, "x" * 100_000 + "€" + "x" * 100_000, "Σa" * 100_000):
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            folded = fold(name)
            peak = tracemalloc.get_traced_memory()[1] - base
        finally:
            tracemalloc.stop()
        assert folded == name.lower()
        # the result (up to 2 bytes a character here) and its pieces; str.lower needs 12
        assert peak < 5 * len(name) + 200_000, peak


def test_is_word() -> None:
    assert is_word("FRAME", "frame") and is_word("Frame", "frame")
    assert not is_word("Frames", "frame") and not is_word("x" * 10**6, "frame")
    assert is_word("\u212a", "k")  # Kelvin sign lowers to k, as str.lower says


def _template(name: str, tag: int) -> Template:
    return Template(name, uuid.UUID(int=tag), [Member("a", "DWORD")])


@pytest.mark.parametrize("bits", [36, 60], ids=["hash-28-bits", "hash-4-bits"])
def test_case_insensitive_lookup_matches_a_folded_dict_through_many_declarations(
    monkeypatch: pytest.MonkeyPatch, bits: int
) -> None:
    """Declarations and lookups interleaved: the index sorts names in as they come and
    always answers like a dict of folded names kept up to date (the latest one wins), also
    when most names share their hash bits."""
    monkeypatch.setattr(_FoldIndex, "_BITS", bits)
    monkeypatch.setattr(_FoldIndex, "_MASK", (1 << bits) - 1)
    rng = random.Random(7)
    builtin = standard_templates()
    table = TemplateTable(builtin)
    expected = {k.lower(): v for k, v in builtin.items()}
    spellings = ["T{}", "t{}", "T{}X", "t{}x", "ΣT{}", "\u03c3t{}", "Mesh", "MESH", "frame"]
    for tag in range(4000):
        name = rng.choice(spellings).format(rng.randrange(300))
        template = _template(name, tag)
        table.declare(template)
        expected[name.lower()] = template
        if rng.random() < 0.3:
            asked = rng.choice(spellings).format(rng.randrange(300))
            asked = "".join(c.upper() if rng.random() < 0.5 else c for c in asked)
            found = table.find(asked)
            want = table.templates.get(asked) or expected.get(asked.lower())
            assert found is want, asked
    for asked in ["mesh", "MESHNORMALS", "t5X", "nowhere", "\u03c3T1"]:
        assert table.find(asked) is (table.templates.get(asked) or expected.get(asked.lower()))


def test_templates_read_as_fields() -> None:
    member = Member("a", "DWORD")
    one = Template("One", None, [member], place=5)
    assert one.members == (member,) and one.guid is None and one.restriction == CLOSED
    assert one.allowed == () and one.where == "0:5"
    two = Template("Two", uuid.UUID(int=1), [member, Member("b", "FLOAT", [3])], OPEN)
    assert len(two.members) == 2 and two.guid == uuid.UUID(int=1) and two.restriction == OPEN
    two.restriction = RESTRICTED
    two.allowed = [("Mesh", None)]
    assert (two.guid, two.restriction, list(two.allowed)) == (
        uuid.UUID(int=1), RESTRICTED, [("Mesh", None)]
    )  # fmt: skip
    two.guid = None
    assert two.guid is None and two.restriction == RESTRICTED
    assert one == Template("One", None, (member,), place=5) and one != two
    assert "One" in repr(one)
