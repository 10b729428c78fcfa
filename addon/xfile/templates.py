"""Templates: the model, the declaration parser, and how a template's data is laid out.

``template Name { <GUID> members... [restriction] }`` is parsed by the same tokenizers as data,
so a file's own declarations (text or binary) and our built-in set go through one path.
A :class:`Layout` is a template resolved against the templates in force: what each member
reads, precomputed once per document so the per-object cost stays small.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from uuid import UUID

from .errors import XFileError
from .names import fold, is_word
from .tokens import NAME, NUMBERS, PUNCT, TokenSource, describe, place_text

INT_TYPES = frozenset({"WORD", "DWORD", "CHAR", "UCHAR", "BYTE", "SWORD", "SDWORD", "ULONGLONG"})
FLOAT_TYPES = frozenset({"FLOAT", "DOUBLE"})
STRING_TYPES = frozenset({"STRING", "CSTRING", "UNICODE", "LPSTR"})
PRIMITIVES = INT_TYPES | FLOAT_TYPES | STRING_TYPES

CLOSED, OPEN, RESTRICTED = "closed", "open", "restricted"
# templates holding templates: real ones nest 3 deep (Mesh > MeshFace); the bound keeps the
# layout builder's recursion (and a hostile file's chain of 5,000) far from Python's limit
MAX_TEMPLATE_DEPTH = 64


@dataclass(slots=True)
class Member:
    name: str
    type: str  # a primitive (upper case) or a template name
    dims: list[int | str] | None = None  # None: scalar; else literal sizes or member names


@dataclass(slots=True)
class Template:
    name: str
    guid: UUID | None
    # a tuple once declared: 48 bytes for one member where a list costs ~90 (hostile files
    # declare thousands of one-member templates)
    members: Sequence[Member] = ()
    restriction: str = CLOSED
    # a shared empty tuple unless restricted (most templates): no list per declaration
    allowed: Sequence[tuple[str, UUID | None]] = ()
    place: int | str = ""  # where it was declared, as ``TokenSource.place`` keeps it

    @property
    def where(self) -> str:
        """Where it was declared: "line:column" (text) or "byte N" (binary)."""
        return place_text(self.place)


_LONGEST_PRIMITIVE = max(len(p) for p in PRIMITIVES)


def _primitive(type_name: str) -> str:
    # upper-casing never shortens a name: a longer one is no primitive and is not upper-cased
    # (a long non-ASCII name would cost 12 bytes a character of scratch, see ``names``)
    if len(type_name) > _LONGEST_PRIMITIVE:
        return type_name
    upper = type_name.upper()
    return upper if upper in PRIMITIVES else type_name


def parse_template(tokens: TokenSource, start: int) -> Template:
    """The declaration after the ``template`` keyword (already read, at offset ``start``)."""
    tok = tokens.next()
    if tok[0] != NAME:
        raise tokens.error(f"expected a template name, found {describe(tok)}", tok[2])
    name = str(tok[1])
    context = f"in template {name}"
    tokens.expect_punct("{", f"after template {name}")
    guid = tokens.optional_guid()
    template = Template(name, guid, place=tokens.place(start))
    members: list[Member] = []
    while True:
        tok = tokens.next()
        kind, value = tok[0], tok[1]
        if kind == PUNCT and value == "}":
            template.members = tuple(members)
            return template
        if kind == PUNCT and value == ";":
            continue
        if kind == PUNCT and value == "[":
            template.members = tuple(members)
            _parse_restriction(tokens, template)
            tokens.expect_punct("}", f"to close template {name}")
            return template
        if kind != NAME:
            raise tokens.error(f"expected a member {context}, found {describe(tok)}", tok[2])
        members.append(_parse_member(tokens, str(value), len(members), context))


def _parse_member(tokens: TokenSource, first: str, index: int, context: str) -> Member:
    is_array = is_word(first, "array")
    if is_array:
        tok = tokens.next()
        if tok[0] != NAME:
            raise tokens.error(f"expected a type after 'array' {context}", tok[2])
        first = str(tok[1])
    member = Member(f"_{index}", _primitive(first))
    tok = tokens.next()
    if tok[0] == NAME:
        member.name = str(tok[1])
        tok = tokens.next()
    if is_array:
        member.dims = []
        while tok[0] == PUNCT and tok[1] == "[":
            dim = tokens.next()
            if dim[0] == NUMBERS and len(dim[1]) == 1 and float(dim[1][0]).is_integer():
                member.dims.append(int(dim[1][0]))
            elif dim[0] == NAME:
                member.dims.append(str(dim[1]))
            else:
                raise tokens.error(f"bad array dimension {context}: {describe(dim)}", dim[2])
            tokens.expect_punct("]", f"after an array dimension {context}")
            tok = tokens.next()
        if not member.dims:
            raise tokens.error(f"array member {member.name} has no dimension {context}", tok[2])
    if not (tok[0] == PUNCT and tok[1] == ";"):
        raise tokens.error(f"expected ';' after member {member.name} {context}", tok[2])
    return member


def _parse_restriction(tokens: TokenSource, template: Template) -> None:
    tok = tokens.next()
    if tok[0] == PUNCT and tok[1] == ".":
        for _ in range(2):
            tokens.expect_punct(".", f"in '[...]' of template {template.name}")
        tokens.expect_punct("]", f"after '[...' of template {template.name}")
        template.restriction = OPEN
        return
    template.restriction = RESTRICTED
    allowed: list[tuple[str, UUID | None]] = []
    template.allowed = allowed
    while True:
        if tok[0] == PUNCT and tok[1] == "]":
            return
        if tok[0] == PUNCT and tok[1] == ",":
            tok = tokens.next()
            continue
        if tok[0] != NAME:
            raise tokens.error(
                f"expected a template name in the restriction of {template.name}, "
                f"found {describe(tok)}",
                tok[2],
            )
        name = str(tok[1])
        guid = tokens.optional_guid()
        tok = tokens.next()
        allowed.append((name, guid))


# -- layouts -------------------------------------------------------------------------------
INT, FLOAT, STR, STRUCT = range(4)


@dataclass(slots=True)
class MemberPlan:
    name: str
    kind: int  # INT, FLOAT, STR or STRUCT
    dims: list[int | str] | None
    label: str  # "Template.member", for messages
    sub: Layout | None = None


@dataclass(slots=True)
class Layout:
    """A template resolved for reading: member plans, plus shape facts for arrays of it."""

    name: str
    members: list[MemberPlan]
    fixed_leaves: int | None  # numeric values per element when all fixed-size, else None
    all_int: bool  # every leaf is an integer type
    ragged: bool  # ``DWORD n; array NUMERIC v[n];`` (MeshFace): arrays become Ragged
    ragged_int: bool = True
    # ``scalars..., DWORD n, array NUMERIC v[n]`` with nesting flattened (TimedFloatKeys:
    # time, then FloatKeys' nValues and values): (is-integer flag of each prefix scalar,
    # values are integers). Arrays of it read as one 2-D array / Ragged, not a dict per key.
    record: tuple[tuple[bool, ...], bool] | None = None


class TemplateTable:
    """The templates in force for one document (built-ins overridden by the file's own)."""

    def __init__(self, templates: dict[str, Template]) -> None:
        self.templates = dict(templates)
        self._builtin = templates
        # case-folded index, built on the first lookup that needs it (most files never do):
        # no lowered copy of every name a file declares (hostile files declare thousands)
        self.declared: list[str] = []  # names the file declared, in order (the parser's list)
        self._folded: dict[str, Template] | None = None
        self._layouts: dict[str, Layout | None] = {}
        self.problems: dict[str, str] = {}

    def declare(self, template: Template) -> None:
        self.templates[template.name] = template
        self.declared.append(template.name)
        if self._folded is not None:
            self._folded[fold(template.name)] = template
        self._layouts.clear()
        self.problems.clear()

    def find(self, name: str) -> Template | None:
        """Exact name first, then any case (``TextureFileName``)."""
        found = self.templates.get(name)
        if found is not None:
            return found
        if self._folded is None:  # as if kept up to date: built-ins, then declarations in order
            self._folded = {fold(k): v for k, v in self._builtin.items()}
            for declared in self.declared:  # each name's latest declaration, latest last
                self._folded[fold(declared)] = self.templates[declared]
        return self._folded.get(fold(name))

    def layout(self, name: str) -> Layout | None:
        """The layout of a template, or None when unknown or unusable (see ``problems``)."""
        if name in self._layouts:
            return self._layouts[name]
        try:
            result = self._build(name, ())
        except XFileError as exc:
            self.problems[name] = exc.reason
            result = None
        self._layouts[name] = result
        return result

    def _build(self, name: str, seen: tuple[str, ...]) -> Layout:
        if name in self._layouts and self._layouts[name] is not None:
            return self._layouts[name]  # type: ignore[return-value]
        template = self.find(name)
        if template is None:
            raise XFileError(f"unknown template {name!r}")
        if template.name in seen:
            raise XFileError(f"template {template.name} contains itself")
        if len(seen) >= MAX_TEMPLATE_DEPTH:
            raise XFileError(f"templates nested deeper than {MAX_TEMPLATE_DEPTH} levels")
        plans: list[MemberPlan] = []
        fixed: int | None = 0
        all_int = True
        for m in template.members:
            label = f"{template.name}.{m.name}"
            if m.type in INT_TYPES:
                plan = MemberPlan(m.name, INT, m.dims, label)
                leaves: int | None = 1
            elif m.type in FLOAT_TYPES:
                plan = MemberPlan(m.name, FLOAT, m.dims, label)
                leaves, all_int = 1, False
            elif m.type in STRING_TYPES:
                plan = MemberPlan(m.name, STR, m.dims, label)
                leaves, all_int = None, False
            else:
                sub = self._build(m.type, (*seen, template.name))
                plan = MemberPlan(m.name, STRUCT, m.dims, label, sub)
                leaves, all_int = sub.fixed_leaves, all_int and sub.all_int
            if leaves is not None and m.dims is not None:
                for d in m.dims:
                    leaves = leaves * d if isinstance(d, int) and leaves is not None else None
            fixed = fixed + leaves if fixed is not None and leaves is not None else None
            plans.append(plan)
        ragged = (
            len(plans) == 2
            and plans[0].kind == INT
            and plans[0].dims is None
            and plans[1].kind in (INT, FLOAT)
            and plans[1].dims == [plans[0].name]
        )
        layout = Layout(
            template.name, plans, fixed, all_int and bool(plans), ragged,
            ragged_int=bool(plans) and plans[-1].kind == INT, record=_record_form(plans),
        )  # fmt: skip
        self._layouts[name] = layout
        return layout


def _record_form(plans: list[MemberPlan]) -> tuple[tuple[bool, ...], bool] | None:
    """The ``Layout.record`` form of a template, or None when it is not one."""
    leaves: list[tuple[MemberPlan, int]] = []  # (numeric leaf, id of the struct holding it)

    def flatten(members: list[MemberPlan], owner: int) -> bool:
        for plan in members:
            if plan.kind == STRUCT:
                if plan.dims is not None or plan.sub is None:
                    return False
                if not flatten(plan.sub.members, id(plan.sub)):
                    return False
            elif plan.kind == STR:
                return False
            else:
                leaves.append((plan, owner))
        return True

    if not flatten(plans, 0) or len(leaves) < 2:
        return None
    *prefix, (count, count_owner), (array, array_owner) = leaves
    if count.kind != INT or count.dims is not None or array_owner != count_owner:
        return None
    if array.dims != [count.name] or any(p.dims is not None for p, _ in prefix):
        return None
    return tuple(p.kind == INT for p, _ in prefix), array.kind == INT
