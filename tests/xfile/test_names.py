"""Case-insensitive names: ``fold`` is ``str.lower`` without its scratch."""

from __future__ import annotations

import random
import tracemalloc

import pytest

from addon.xfile import names
from addon.xfile.names import fold, is_word

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
