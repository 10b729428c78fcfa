"""Lip-sync: a PhonemeSequence of timed phonemes -> shape-key weight curves (numpy, no bpy).

The book's files hold one ``PhonemeSequence`` (``NumPhonemes``, then ``PhonemeIndex``,
``StartTime``, ``EndTime`` in milliseconds per phoneme). At time ``t`` inside phoneme ``i``
the face blends target(i) with weight ``1 - f`` and target(i + 1) with ``f``, ``f = (t - s) /
(e - s)``; the last phoneme holds, and the sequence loops over its length (last end + 1 ms).
A phoneme index maps to a target (a shape key) through a 38-entry table: the book's by
default, editable as an import option.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .plan import SetCurves

#: the book's map of the 38 standard phonemes to its ten facial targets
DEFAULT_PHONEME_TARGETS: tuple[str, ...] = (
    "neutral",  # 0 silence
    "aaa", "aaa", "aaa", "aaa", "aaa",  # 1 AA, 2 AE, 3 AH, 4 AO, 5 AX
    "fff", "consonant", "iii", "consonant", "eee",  # 6 B, 7 CH, 8 D, 9 DH, 10 EH
    "consonant", "eee", "fff", "consonant", "consonant",  # 11 ER, 12 EY, 13 F, 14 G, 15 HH
    "iii", "iii",  # 16 IH, 17 IY
    "consonant", "consonant", "consonant", "consonant", "consonant", "consonant",  # 18-23
    "ooo", "consonant", "consonant", "iii",  # 24 OW, 25 P, 26 R, 27 S
    "consonant", "consonant", "consonant", "consonant", "consonant",  # 28 SH .. 32 UW
    "fff", "consonant", "uuu", "consonant", "consonant",  # 33 V, 34 W, 35 Y, 36 Z, 37 ZH
)  # fmt: skip

#: at most this many phonemes per sequence (a file's count is not trusted for allocation)
MAX_PHONEMES = 1_000_000


@dataclass(frozen=True)
class PhonemeKeys:
    index: np.ndarray  # (n,) int64 phoneme indices
    start: np.ndarray  # (n,) float64 ms
    end: np.ndarray  # (n,) float64 ms


def read_sequence(members: dict) -> PhonemeKeys:
    """A PhonemeSequence's members -> its phonemes; ValueError (saying what) when unusable."""
    rows = members.get("Phonemes")
    try:
        table = np.asarray(rows, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError("PhonemeSequence: Phonemes is not a table of numbers") from exc
    if table.ndim != 2 or table.shape[1] != 3 or not len(table):
        raise ValueError(f"PhonemeSequence: Phonemes has shape {table.shape}, not (n, 3)")
    if len(table) > MAX_PHONEMES:
        raise ValueError(f"PhonemeSequence: {len(table)} phonemes (at most {MAX_PHONEMES})")
    if not np.all(np.isfinite(table)):
        raise ValueError("PhonemeSequence: a phoneme time or index is not finite")
    order = np.argsort(table[:, 1], kind="stable")
    table = table[order]
    return PhonemeKeys(
        table[:, 0].astype(np.int64), table[:, 1], np.maximum(table[:, 2], table[:, 1])
    )


def parse_map(text: str) -> tuple[tuple[str, ...], str | None]:
    """The option's comma-separated map -> 38 names (the book's where missing) and a note."""
    names = [n.strip() for n in text.split(",")] if text.strip() else []
    out = list(DEFAULT_PHONEME_TARGETS)
    for i, name in enumerate(names[: len(out)]):
        if name:
            out[i] = name
    note = None
    if names and len(names) != len(out):
        note = f"phoneme map has {len(names)} names for {len(out)} phonemes: the rest the book's"
    return tuple(out), note


def phoneme_curves(
    keys: PhonemeKeys,
    targets: tuple[str, ...],
    blocks: set[str],
    fps: float,
    frame_start: float,
    name: str = "LipSync",
    basis: str | None = None,
) -> tuple[SetCurves, list[str]]:
    """Weight curves of the key blocks the sequence reaches, and the targets it lacks.

    Keys at every phoneme's start (its target at 1) and end (the next's target at 1; the last
    holds), and at the loop point (the first's). Targets not in ``blocks`` (the Basis, or
    absent) get no curve: at those phonemes every other weight is 0, the Basis shape.
    """
    n = len(keys.index)
    which = [targets[i] if 0 <= i < len(targets) else "" for i in keys.index.tolist()]
    after = [*which[1:], which[-1]]
    times = np.concatenate([keys.start, keys.end, [keys.end[-1] + 1.0]])
    owners = [*which, *after, which[0]]
    order = np.argsort(times, kind="stable")
    times, owners = times[order], [owners[k] for k in order]
    keep = np.r_[True, np.diff(times) > 0]  # an end equal to the next start: one key
    times = times[keep]
    owners = [o for o, k in zip(owners, keep, strict=True) if k]
    used = sorted({t for t in which if t in blocks})
    values = {b: np.array([1.0 if o == b else 0.0 for o in owners]) for b in used}
    frames = frame_start + times * fps / 1000.0
    missing = sorted({t for t in which if t and t not in blocks and t != basis})
    assert len(frames) <= 2 * n + 1
    return SetCurves(name, True, frames, values), missing
