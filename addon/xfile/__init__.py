"""The .X format layer: read and write DirectX .X files. Pure Python + numpy, no bpy.

    from addon.xfile import read, XFileError
    doc = read("model.x")          # or read(b"xof 0303txt 0032 ...")
"""

from __future__ import annotations

from .document import Ragged, XDocument, XObject, XReference
from .errors import XFileError

__all__ = ["Ragged", "XDocument", "XFileError", "XObject", "XReference", "read"]


def read(source: str | bytes | bytearray | memoryview | object) -> XDocument:
    """Parse a .X file (a path, or the file's bytes) into a document; raises XFileError."""
    from .reader import read_document

    return read_document(source)
