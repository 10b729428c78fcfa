"""Names as the .X grammar allows them: no spaces or structure characters, unique per kind.

Blender names may hold spaces, quotes or start with a digit; other readers split names on
those. Every object, bone and mesh gets one sanitised name, used for its frame, for
``SkinWeights``, for animation references and for morph keys alike.
"""

from __future__ import annotations

import re

_BAD = re.compile(r"[^A-Za-z0-9_\-.\x80-\U0010ffff]")


def sanitize(name: str) -> str:
    clean = _BAD.sub("_", name) or "_"
    if not (clean[0].isalpha() or clean[0] == "_"):
        clean = "_" + clean
    return clean


class NameTable:
    """One file name per (kind, Blender identity), unique within its kind (a frame and its
    mesh may share a name, as in most files)."""

    def __init__(self) -> None:
        self._given: dict[tuple[str, str], str] = {}
        self._used: dict[str, set[str]] = {}

    def get(self, kind: str, key: str, wanted: str | None = None) -> str:
        found = self._given.get((kind, key))
        if found is not None:
            return found
        base = sanitize(wanted if wanted is not None else key)
        used = self._used.setdefault(kind, set())
        name, k = base, 1
        while name in used:
            name = f"{base}.{k:03d}"
            k += 1
        used.add(name)
        self._given[(kind, key)] = name
        return name
