"""Names as the .X grammar allows them: no spaces or structure characters, unique per kind.

Blender names may hold spaces, quotes or start with a digit; other readers split names on
those. Every object, bone and mesh gets one sanitised name, used for its frame, for
``SkinWeights``, for animation references and for morph keys alike.
"""

from __future__ import annotations

import re
import unicodedata

_BAD = re.compile(r"[^A-Za-z0-9_\-.\x80-\U0010ffff]")


def sanitize(name: str) -> str:
    clean = _BAD.sub("_", name) or "_"
    if not (clean[0].isalpha() or clean[0] == "_"):
        clean = "_" + clean
    return clean


def ascii_name(name: str) -> str:
    """The name in ASCII letters, digits, ``_`` and ``-`` (what the strictest readers take):
    accents dropped (``é`` -> ``e``), anything else ``_``."""
    out = []
    for ch in unicodedata.normalize("NFKD", name):
        if ch.isascii():
            out.append(ch if ch.isalnum() or ch in "_-" else "_")
        elif not unicodedata.combining(ch):
            out.append("_")
    return "".join(out) or "_"


class NameTable:
    """One file name per (kind, Blender identity), unique within its kind (a frame and its
    mesh may share a name, as in most files); in Legacy files unique across kinds (a set and
    a frame both named ``body`` make Panda3D's reader refuse the file)."""

    def __init__(self, legacy: bool = False) -> None:
        self._given: dict[tuple[str, str], str] = {}
        self._used: dict[str, set[str]] = {}
        self.legacy = legacy  # ASCII letters, digits, _ and - only; copies numbered _001

    def get(self, kind: str, key: str, wanted: str | None = None) -> str:
        found = self._given.get((kind, key))
        if found is not None:
            return found
        base = sanitize(wanted if wanted is not None else key)
        if self.legacy:
            base = sanitize(ascii_name(base))
        used = self._used.setdefault("" if self.legacy else kind, set())
        name, k = base, 1
        mark = "_" if self.legacy else "."
        while name in used:
            name = f"{base}{mark}{k:03d}"
            k += 1
        used.add(name)
        self._given[(kind, key)] = name
        return name
