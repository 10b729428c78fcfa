"""The .X format layer: read and write DirectX .X files. Pure Python + numpy, no bpy.

    from addon.xfile import read, XFileError
    doc = read("model.x")                       # or read(b"xof 0303txt 0032 ...")
    doc = read("model.x", encoding="shift_jis")  # names written by a Japanese exporter
    doc.names_encoding                          # the encoding used: utf-8, shift_jis, cp1252
    scene = scene_of(doc)                       # typed views, built once per document
    strict.check("model.x").departures          # where D3D's own parser would refuse it

``encoding`` is the encoding of names and strings inside the file: ``"auto"`` (default;
UTF-8 when valid, else Shift-JIS when the bytes decode so and read as Japanese, else CP1252),
``"utf-8"``, ``"shift_jis"`` or ``"cp1252"`` (``ENCODINGS``; ``ENCODING_CHOICES`` holds them
as an import option's (identifier, label, description) items; report ``doc.names_encoding``).
Anything else is a ``ValueError``.

``max_inflated`` (bytes, default ``MAX_INFLATED``: 1 GiB) and ``max_ratio`` (default
``MAX_RATIO``: 100, for files that decompress past 64 MiB) bound what a compressed (tzip/bzip)
file may decompress to; a file declaring more is refused before it is decompressed.
"""

from __future__ import annotations

from .container.mszip import MAX_INFLATED, MAX_RATIO, InflateLimit
from .document import Ragged, XDocument, XObject, XReference
from .errors import XFileError
from .reader import read_document  # at load: Blender compiles sources (no .pyc) on first use
from .scan.codepages import ENCODING_CHOICES, ENCODINGS
from .views import scene_of

__all__ = [
    "ENCODINGS",
    "ENCODING_CHOICES",
    "MAX_INFLATED",
    "MAX_RATIO",
    "Ragged",
    "XDocument",
    "XFileError",
    "XObject",
    "XReference",
    "read",
    "scene_of",
]


def read(
    source: str | bytes | bytearray | memoryview | object,
    *,
    encoding: str = "auto",
    max_inflated: int = MAX_INFLATED,
    max_ratio: float = MAX_RATIO,
) -> XDocument:
    """Parse a .X file (a path, or the file's bytes) into a document; raises XFileError."""
    return read_document(source, encoding, InflateLimit(max_inflated, max_ratio))
