"""The template-driven parser: one grammar for text and binary tokens.

Templates say how many values each member takes; the :class:`ValueStream` hands them out
from whatever numeric tokens come, so ``,``/``;`` placement (sloppy in real files) and binary
lists spanning members do not matter. Objects of unknown templates are kept generically.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .document import XObject, XReference
from .errors import printable
from .scan.tokens import EOF, GUID, NAME, NUMBERS, PUNCT, STRING, TEMPLATE, TokenSource, describe
from .templates import FLOAT, INT, STR, Layout, MemberPlan, TemplateTable, parse_template
from .values import ValueStream

#: Levels of nesting a file may use: far past real rigs (a few dozen bones deep; a rope or
#: tail of a few hundred), and what the exporter refuses to write past.
MAX_DEPTH = 10_000
# Distinct template names a file may declare. Real files declare the few dozen they use; a
# declaration costs far more memory than its shortest spelling (``template a{}``), so the
# bound keeps a file of nothing else within the reader's memory limit.
MAX_TEMPLATES = 2048


class Parser:
    def __init__(self, tokens: TokenSource, table: TemplateTable) -> None:
        self.tokens = tokens
        self.table = table
        self.declared = table.declared  # names the file declared, in file order
        self.warnings: list[str] = []
        self.references: list[XReference] = []
        self._warned_unknown: set[str] = set()
        self._new_templates = 0

    def warn(self, message: str, offset: int) -> None:
        self.warnings.append(f"{self.tokens.where(offset)}: {printable(message)}")

    # -- top level -------------------------------------------------------------------------
    def parse(self) -> list[XObject | XReference]:
        tokens = self.tokens
        objects: list[XObject | XReference] = []
        while True:
            tok = tokens.next()
            kind = tok[0]
            if kind == EOF:
                return objects
            if kind == NAME:
                objects.append(self.parse_object(tok, 1))
            elif kind == TEMPLATE:
                template = parse_template(tokens, tok[2])
                if template.name not in self.table.templates:
                    self._new_templates += 1
                    if self._new_templates > MAX_TEMPLATES:
                        raise tokens.error(
                            f"more than {MAX_TEMPLATES} templates declared "
                            "(real files declare a few dozen)",
                            tok[2],
                        )
                self.table.declare(template)
            elif kind == PUNCT and tok[1] == "{":
                objects.append(self.parse_reference(tok))
            elif kind == PUNCT and tok[1] in ";,":
                continue
            else:
                raise tokens.error(
                    f"expected a template or a data object, found {describe(tok)}", tok[2]
                )

    # -- data objects ------------------------------------------------------------------------
    def parse_object(self, head: tuple, depth: int) -> XObject:
        """The object ``head`` opens (at nesting ``depth``, 1 for a top-level one) with all
        its children. Nested objects are kept on a list, not on Python's stack: a chain of
        ``MAX_DEPTH`` levels costs a list entry a level, never a recursion error."""
        tokens = self.tokens
        obj, extra_reported = self._open(head, depth)
        open_objects: list[tuple[XObject, bool]] = []  # the enclosing ones, outermost first
        while True:
            tok = tokens.next()
            kind = tok[0]
            if kind == PUNCT:
                c = tok[1]
                if c == "}":
                    if not open_objects:
                        return obj
                    parent, extra_reported = open_objects.pop()
                    parent.children.append(obj)
                    obj = parent
                    continue
                if c == "{":
                    obj.children.append(self.parse_reference(tok))
                    continue
                if c == ";" or c == ",":
                    continue
            elif kind == NAME:
                open_objects.append((obj, extra_reported))
                obj, extra_reported = self._open(tok, depth + len(open_objects))
                continue
            elif kind in (NUMBERS, STRING, GUID):
                if not extra_reported:
                    self.warn(f"{obj.template}: values beyond the template ignored", tok[2])
                    extra_reported = True
                continue
            elif kind == EOF:
                raise tokens.error(
                    f"end of file inside {obj.template} {obj.name or ''} opened at "
                    f"{obj.where}".replace("  ", " "),
                    tok[2],
                )
            raise tokens.error(
                f"expected a child object, a reference or '}}' in {obj.template}, found "
                f"{describe(tok)}",
                tok[2],
            )

    def _open(self, head: tuple, depth: int) -> tuple[XObject, bool]:
        """An object's header and members, up to its children; and whether values beyond
        its template were reported."""
        tokens = self.tokens
        tname = str(head[1])
        if depth > MAX_DEPTH:
            raise tokens.error(f"objects nested deeper than {MAX_DEPTH:,} levels", head[2])
        name = tokens.header_name()
        tokens.expect_punct("{", f"after {tname} {name or ''}".rstrip())
        place = tokens.place(head[2])
        guid = tokens.optional_guid()
        stream = ValueStream(tokens)
        layout = self.table.layout(tname)
        members: dict[str, Any]
        if layout is not None:
            members = self.read_members(layout, stream)
        else:
            self._unknown(tname, head[2])
            members = {"_values": self._raw_values()}
        obj = XObject(tname, name, guid, members, [], place)
        left = stream.drain()
        if left:
            self.warn(f"{tname}: {left} value(s) beyond the template ignored", head[2])
        return obj, bool(left)

    def _unknown(self, tname: str, offset: int) -> None:
        if tname in self._warned_unknown:
            return
        self._warned_unknown.add(tname)
        why = self.table.problems.get(tname, f"unknown template {tname!r}")
        self.warn(f"{why}: its objects are kept with their raw values", offset)

    def _raw_values(self) -> list[Any]:
        """Values of an object whose template is unknown: numeric chunks and strings.

        Adjacent numeric tokens (a long text run comes in parts) make one chunk."""
        tokens = self.tokens
        values: list[Any] = []
        run: list[np.ndarray] = []
        while True:
            tok = tokens.next()
            kind = tok[0]
            if kind == NUMBERS:
                with np.errstate(invalid="ignore"):  # signalling NaNs in binary floats stay NaN
                    run.append(np.asarray(tok[1], dtype=np.float64))
                continue
            if run:
                values.append(run[0] if len(run) == 1 else np.concatenate(run))
                run = []
            if kind == STRING:
                values.append(tok[1])
            elif kind == PUNCT and (tok[1] == ";" or tok[1] == ","):
                continue
            else:
                tokens.push(tok)
                return values

    def parse_reference(self, open_tok: tuple) -> XReference:
        """``{ Name }``, ``{ <GUID> }`` or ``{ Name <GUID> }`` (the ``{`` already read)."""
        tokens = self.tokens
        name = tokens.reference_name()  # type: ignore[attr-defined]
        guid = tokens.optional_guid()
        tok = tokens.next()
        if not (tok[0] == PUNCT and tok[1] == "}"):
            raise tokens.error(f"expected '}}' to close a reference, found {describe(tok)}", tok[2])
        if name is None and guid is None:
            raise tokens.error("empty reference '{ }'", open_tok[2])
        ref = XReference(name, guid, tokens.place(open_tok[2]))
        self.references.append(ref)
        return ref

    # -- members ---------------------------------------------------------------------------
    def read_members(self, layout: Layout, stream: ValueStream) -> dict[str, Any]:
        values: dict[str, Any] = {}
        for m in layout.members:
            if m.dims is None:
                if m.kind == INT:
                    values[m.name] = stream.take_int(m.label)
                elif m.kind == FLOAT:
                    values[m.name] = stream.take_float(m.label)
                elif m.kind == STR:
                    values[m.name] = stream.take_string(m.label)
                else:
                    values[m.name] = self.read_members(m.sub, stream)  # type: ignore[arg-type]
            else:
                values[m.name] = self._read_array(m, values, stream)
        return values

    def _dims(self, m: MemberPlan, values: dict[str, Any], stream: ValueStream) -> list[int]:
        shape = []
        for d in m.dims or ():
            if isinstance(d, int):
                shape.append(d)
                continue
            size = values.get(d)
            if not isinstance(size, int):
                raise stream._error(f"{m.label}: dimension {d!r} is not an earlier integer member")
            if size < 0:
                raise stream._error(f"{m.label}: negative count {size}")
            shape.append(size)
        return shape

    def _read_array(self, m: MemberPlan, values: dict[str, Any], stream: ValueStream) -> Any:
        shape = self._dims(m, values, stream)
        count = 1
        for s in shape:
            count *= s
        kind = m.kind
        if kind == INT:
            return stream.take_ints(count, m.label).reshape(shape)
        if kind == FLOAT:
            return stream.take_floats(count, m.label).reshape(shape)
        stream.check_possible(count, m.label)
        if kind == STR:
            return [stream.take_string(m.label) for _ in range(count)]
        sub = m.sub
        assert sub is not None
        leaves = sub.fixed_leaves
        if leaves:
            n = count * leaves
            if sub.all_int:
                flat = stream.take_ints(n, m.label)
            else:
                flat = stream.take_floats(n, m.label)
            return flat.reshape(*shape, leaves)
        if sub.ragged and len(shape) == 1:
            return stream.take_ragged(count, sub.ragged_int, m.label)
        if sub.record is not None and len(shape) == 1 and count > 0:
            return stream.take_records(count, sub.record, m.label)
        return [self.read_members(sub, stream) for _ in range(count)]
