"""A document as text: ``Template name { <GUID> members; children }``, D3DX's punctuation.

Every member ends with ``;``, array elements are separated by ``,`` and a nested struct adds
its own ``;`` (so a Vector array ends in ``;;``). Big arrays (vertex, face, index, key lists)
go through :mod:`.text_numbers` in bulk; only arrays of variable-size structs (animation
keys) are rendered element by element.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..document import Ragged, XDocument, XObject, XReference
from ..errors import XFileError
from ..templates import FLOAT, INT, STR, STRUCT, Layout, TemplateTable
from .declarations import declarations, guid_text, template_text
from .pieces import Piece, join_pieces
from .record_form import record_items
from .text_numbers import FLOAT_SPEC, float_text, format_list, format_ragged, format_rows

#: ``,`` between floats is followed by a space: some readers take ``1,0`` for the decimal ``1.0``
FLOAT_COMMA = ", "
#: nesting levels indented (one space each); deeper objects stay at this indent
MAX_INDENT = 64


def quote(text: str) -> str:
    """A STRING value: the format has no escapes, so a double quote becomes a single one."""
    return '"' + str(text).replace('"', "'") + '"'


def leaf_pattern(layout: Layout) -> list[tuple[int, str]]:
    """(kind, separator after it) for every leaf of one element of a fixed-size struct."""
    out: list[tuple[int, str]] = []
    for m in layout.members:
        if m.kind == STRUCT:
            assert m.sub is not None
            one = leaf_pattern(m.sub)
        else:
            one = [(m.kind, ";")]
        if m.dims is None:
            if m.kind == STRUCT:
                one[-1] = (one[-1][0], one[-1][1] + ";")
            out += one
            continue
        count = 1
        for d in m.dims:
            count *= int(d)
        for i in range(count):
            element = list(one)
            sep = ";" if i == count - 1 else ","
            if m.kind == STRUCT:
                element[-1] = (element[-1][0], element[-1][1] + sep)
            else:
                element[-1] = (element[-1][0], sep)
            out += element
    return out


class TextEncoder:
    def __init__(self, doc: XDocument, float_bits: int) -> None:
        self.table = TemplateTable(doc.templates)
        self.float_bits = float_bits
        self.spec = FLOAT_SPEC[float_bits]
        self.ragged_text: dict[
            int, tuple[Ragged, list[Piece]]
        ] = {}  # one Ragged used twice: one format

    def floats(self, values: Any) -> np.ndarray:
        """Values as the file's float size holds them: a 32-bit file prints each float32 (9
        digits give it back exactly), so text and binary files read back alike (printing the
        float64 to 9 digits would round twice and could land one float32 step away)."""
        a = np.asarray(values)
        if a.dtype == np.float32 and self.float_bits == 32:
            return a  # the digit builder takes float32 as it is
        a = a.astype(np.float64, copy=False)
        if self.float_bits == 64:
            return a
        with np.errstate(over="ignore", invalid="ignore"):
            return a.astype(np.float32).astype(np.float64)

    # -- values --------------------------------------------------------------------------
    def members(self, layout: Layout, values: dict[str, Any], where: str) -> bytes:
        return join_pieces(self.member_parts(layout, values, where))

    def member_parts(self, layout: Layout, values: dict[str, Any], where: str) -> list[Piece]:
        """The members' text in pieces (an object's body can be 100 MB: it is joined once, in
        the file)."""
        parts: list[Piece] = []
        for m in layout.members:
            if m.name not in values:
                raise XFileError(f"{where}: member {m.label} has no value")
            value = values[m.name]
            if m.dims is None:
                parts.append(self.member(m.kind, m.dims, m.sub, value, m.label))
            else:
                parts += self.array(m.kind, m.sub, value, m.label)
        return parts

    def member(self, kind: int, dims: Any, sub: Layout | None, value: Any, label: str) -> bytes:
        if dims is not None:
            return join_pieces(self.array(kind, sub, value, label))
        if kind == INT:
            return b"%d;" % int(value)
        if kind == FLOAT:
            return (float_text(float(self.floats(value)), self.float_bits) + ";").encode()
        if kind == STR:
            return (quote(value) + ";").encode()
        assert sub is not None
        return self.members(sub, value, label) + b";"

    def array(self, kind: int, sub: Layout | None, value: Any, label: str) -> list[Piece]:
        if kind == INT:
            return format_list(np.asarray(value), "%d", True)
        if kind == FLOAT:
            return format_list(self.floats(value), self.spec, False, sep=FLOAT_COMMA)
        if kind == STR:
            return [(",".join(quote(v) for v in value) + ";").encode()]
        assert sub is not None
        value = record_items(value, sub) or value
        if isinstance(value, Ragged):
            cached = self.ragged_text.get(id(value))
            if cached is not None and cached[0] is value:  # shared records (faces and normals)
                return cached[1]
            spec = "%d" if sub.ragged_int else self.spec
            flat = value.flat if sub.ragged_int else self.floats(value.flat)
            text = format_ragged(flat, value.starts, spec, sub.ragged_int)
            self.ragged_text[id(value)] = (value, text)
            return text
        if isinstance(value, np.ndarray) and sub.fixed_leaves:
            pattern = leaf_pattern(sub)
            specs = ["%d" if k == INT else self.spec for k, _ in pattern]
            seps = [FLOAT_COMMA if s == "," and k != INT else s for k, s in pattern]
            rows = value.reshape(-1, len(pattern)) if value.size else value.reshape(0, 1)
            columns = [i for i, (k, _) in enumerate(pattern) if k != INT]
            if len(columns) == len(pattern) and value.size:  # all floats (Vector): no copy
                rows = self.floats(rows)
            elif columns and value.size:
                rows = np.array(rows, dtype=np.float64)
                rows[:, columns] = self.floats(rows[:, columns])
            return format_rows(rows, specs, seps, sub.all_int)
        items = [self.members(sub, v, label) for v in value]
        return [b",\n".join(items) + b";"]

    def raw_values(self, values: list[Any]) -> bytes:
        """Values of an object whose template is unknown, as they were read."""
        parts = []
        for v in values:
            if isinstance(v, str):
                parts.append((quote(v) + ";").encode())
            else:
                parts.append(
                    join_pieces(format_list(self.floats(v), self.spec, False, sep=FLOAT_COMMA))
                )
        return b"\n".join(parts)

    # -- objects -------------------------------------------------------------------------
    def obj(self, root: XObject, depth: int, out: list[Piece]) -> None:
        """``root`` and its subtree, indented one space a level up to ``MAX_INDENT`` (so a
        chain of 10,000 levels is not 50 million spaces); nested objects wait on a list, not
        on Python's stack."""
        todo: list[tuple[XObject | XReference | None, int]] = [(root, depth)]
        while todo:
            obj, depth = todo.pop()
            pad = " " * min(depth, MAX_INDENT)
            if obj is None:  # the close of an object opened at this depth
                out.append(f"{pad}}}\n".encode())
                continue
            if isinstance(obj, XReference):
                out.append(f"{pad}{reference_text(obj)}\n".encode())
                continue
            head = (
                f"{pad}{obj.template} {obj.name} {{\n" if obj.name else f"{pad}{obj.template} {{\n"
            )
            out.append(head.encode())
            if obj.guid is not None:
                out.append(f"{pad} {guid_text(obj.guid)}\n".encode())
            layout = self.table.layout(obj.template)
            if layout is not None:
                body = self.member_parts(layout, obj.members, obj.where or obj.template)
            else:
                body = [self.raw_values(list(obj.members.get("_values", [])))]
            if any(body):
                out.extend(body)
                out.append(b"\n")
            todo.append((None, depth))
            todo.extend((child, depth + 1) for child in reversed(obj.children))


def reference_text(ref: XReference) -> str:
    inner = " ".join(
        p for p in (ref.name, guid_text(ref.guid) if ref.guid is not None else None) if p
    )
    return f"{{ {inner} }}"


def encode_text(doc: XDocument, float_bits: int, head: bytes = b"") -> bytes:
    """The body of a text file (everything after the 16-byte header), after ``head`` (the
    header itself, so a big file is not copied once more to prepend it)."""
    return join_pieces(text_parts(doc, float_bits, head))


def text_parts(doc: XDocument, float_bits: int, head: bytes = b"") -> list[Piece]:
    """:func:`encode_text` in pieces, for writing to a file without joining them first."""
    encoder = TextEncoder(doc, float_bits)
    out: list[Piece] = [head, b"\n"]
    for template in declarations(doc):
        out.append(template_text(template).encode())
    for item in doc.objects:
        if isinstance(item, XReference):
            out.append((reference_text(item) + "\n").encode())
        else:
            encoder.obj(item, 0, out)
            out.append(b"\n")
    return out
