"""The document tree: what a .X file holds, independent of text or binary encoding.

Member values, by the template's member type:
- scalar primitive: ``int`` (WORD, DWORD, CHAR, UCHAR, BYTE, SWORD, SDWORD), ``float``
  (FLOAT, DOUBLE), ``str`` (STRING, CSTRING, UNICODE);
- array of a numeric primitive: a 1-D ``numpy`` array (int64 for integer types, float64 for
  FLOAT/DOUBLE); several dimensions give an n-D array;
- array of strings: ``list[str]``;
- a nested template (e.g. ``ColorRGBA faceColor``): a ``dict`` member name -> value;
- an array of a nested template whose members are all numeric and of fixed size
  (Vector, Coords2d, ColorRGBA, Matrix4x4, IndexedColor, ...): a 2-D float64/int64 array,
  one row per element, the leaves in declaration order (``Matrix4x4`` rows have 16 values);
- an array of a nested numeric template of varying size (``MeshFace``): a :class:`Ragged`;
- an array of a "record" template, numeric scalars then ``DWORD n; array v[n]`` with nesting
  flattened (``TimedFloatKeys``: time, nValues, values): a 2-D array ``[time, n, v...]`` per
  row when every record has the same n, else a :class:`Ragged` of such records
  (``records.record_dicts`` gives the dicts back);
- any other array of templates: ``list[dict]``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

import numpy as np

from .scan.tokens import place_text


@dataclass(eq=False)
class Ragged:
    """Records of varying length stored flat: record ``i`` is ``flat[starts[i]:ends[i]]``.

    For ``MeshFace`` a record is ``[n, i0, ..., i(n-1)]``. Kept flat so a million faces cost
    two arrays, not a million Python objects.
    """

    flat: np.ndarray
    starts: np.ndarray

    def __len__(self) -> int:
        return len(self.starts)

    @property
    def ends(self) -> np.ndarray:
        return np.append(self.starts[1:], len(self.flat)).astype(np.int64)

    def record(self, i: int) -> np.ndarray:
        return self.flat[int(self.starts[i]) : int(self.ends[i])]


@dataclass(slots=True, eq=False)
class XReference:
    """A child written as ``{ Name }``, ``{ <GUID> }`` or ``{ Name <GUID> }``.

    ``target`` is the referenced object once resolved, ``None`` if nothing matched.
    """

    name: str | None
    guid: UUID | None
    place: int | str = ""  # where it was written, as ``TokenSource.place`` keeps it
    target: XObject | None = None

    @property
    def where(self) -> str:
        """ "line:column" (text) or "byte N" (binary); "" when not read from a file."""
        return place_text(self.place)


@dataclass(slots=True, eq=False)
class XObject:
    """One data object: ``Template [name] { [<guid>] members... children... }``."""

    template: str
    name: str | None = None
    guid: UUID | None = None
    members: dict[str, Any] = field(default_factory=dict)
    children: list[XObject | XReference] = field(default_factory=list)
    # where it was written, as ``TokenSource.place`` keeps it: a packed int, smaller than its
    # "line:column" text (files hold thousands of small objects)
    place: int | str = ""

    @property
    def where(self) -> str:
        """ "line:column" (text) or "byte N" (binary); "" when not read from a file."""
        return place_text(self.place)

    def __getitem__(self, member: str) -> Any:
        return self.members[member]

    def get(self, member: str, default: Any = None) -> Any:
        return self.members.get(member, default)

    def objects(self, template: str | None = None, follow_refs: bool = True) -> Iterator[XObject]:
        """Direct children (references followed to their targets), optionally of one template."""
        for child in self.children:
            obj = child.target if isinstance(child, XReference) else child
            if obj is None or (isinstance(child, XReference) and not follow_refs):
                continue
            if template is None or obj.template == template:
                yield obj

    def walk(self) -> Iterator[XObject]:
        """This object and every object nested in it, depth first (references not followed)."""
        yield self
        yield from _walk(self.children)


@dataclass(eq=False)
class XDocument:
    """A whole file: header facts, the templates in force, the top-level objects."""

    path: str | None
    format: str  # "txt", "bin", "tzip" or "bzip"
    version: str  # "0302" or "0303"
    float_bits: int  # 32 or 64
    templates: dict[str, Any]  # name -> templates.Template (built-ins overridden by the file's)
    declared: list[str]  # names of templates the file itself declared, in file order
    objects: list[XObject | XReference] = field(default_factory=list)
    unresolved: list[XReference] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    names_encoding: str = "utf-8"  # of names and strings: utf-8, shift_jis or cp1252
    # what ``views.scene_of`` built of this document, kept with it (the views import this
    # module, never the other way)
    views_cache: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def top(self, template: str | None = None) -> Iterator[XObject]:
        """Top-level data objects (references followed), optionally of one template."""
        for item in self.objects:
            obj = item.target if isinstance(item, XReference) else item
            if obj is not None and (template is None or obj.template == template):
                yield obj

    def walk(self) -> Iterator[XObject]:
        """Every data object in the file, nested included, in file order."""
        return _walk(self.objects)

    def count_by_template(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for obj in self.walk():
            counts[obj.template] = counts.get(obj.template, 0) + 1
        return counts


def _walk(items: list[XObject | XReference]) -> Iterator[XObject]:
    """The objects among ``items`` and all nested in them, depth first, in file order.

    A stack of list iterators (~50 bytes a level), not a generator per level (~270 bytes):
    files nest objects thousands deep, and every read walks them.
    """
    stack = [iter(items)]
    while stack:
        for item in stack[-1]:
            if isinstance(item, XObject):
                yield item
                stack.append(iter(item.children))
                break
        else:
            stack.pop()
