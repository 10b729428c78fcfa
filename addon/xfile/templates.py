"""Templates: the model, the declaration parser, and how a template's data is laid out.

``template Name { <GUID> members... [restriction] }`` is parsed by the same tokenizers as data,
so a file's own declarations (text or binary) and our built-in set go through one path.
A :class:`Layout` is a template resolved against the templates in force: what each member
reads, precomputed once per document so the per-object cost stays small.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain
from uuid import UUID

import numpy as np

from .errors import XFileError
from .names import fold, is_word
from .scan.tokens import NAME, NUMBERS, PUNCT, TokenSource, describe, place_text

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


# the names of unnamed members ("_0", "_1", ...): one string each, not one per declaration
_UNNAMED = tuple(f"_{i}" for i in range(32))


class Template:
    """A declared template; ``members``, ``guid``, ``restriction`` and ``allowed`` read as
    plain fields.

    Hostile files declare thousands of one-member templates, so a declaration is kept in four
    slots (64 bytes where a dataclass of six fields took 80): a single member bare, not in a
    tuple (48 bytes less), and the GUID and restriction in one ``_extra`` slot that is None
    for a closed template without GUID.
    """

    __slots__ = ("_extra", "_members", "name", "place")

    def __init__(
        self,
        name: str,
        guid: UUID | None = None,
        members: Sequence[Member] = (),
        restriction: str = CLOSED,
        allowed: Sequence[tuple[str, UUID | None]] = (),
        place: int | str = "",  # where it was declared, as ``TokenSource.place`` keeps it
    ) -> None:
        self.name = name
        self.members = tuple(members)
        self._extra: tuple[UUID | None, str, Sequence[tuple[str, UUID | None]]] | None = None
        self._set_extra(guid, restriction, allowed)
        self.place = place

    def _set_extra(
        self, guid: UUID | None, restriction: str, allowed: Sequence[tuple[str, UUID | None]]
    ) -> None:
        plain = guid is None and restriction == CLOSED and not allowed
        self._extra = None if plain else (guid, restriction, allowed)

    @property
    def members(self) -> tuple[Member, ...]:
        kept = self._members
        return (kept,) if isinstance(kept, Member) else kept

    @members.setter
    def members(self, members: tuple[Member, ...]) -> None:
        self._members: Member | tuple[Member, ...] = members[0] if len(members) == 1 else members

    @property
    def guid(self) -> UUID | None:
        return None if self._extra is None else self._extra[0]

    @guid.setter
    def guid(self, guid: UUID | None) -> None:
        self._set_extra(guid, self.restriction, self.allowed)

    @property
    def restriction(self) -> str:
        """CLOSED, OPEN (``[...]``) or RESTRICTED (``[Name <GUID>, ...]``)."""
        return CLOSED if self._extra is None else self._extra[1]

    @restriction.setter
    def restriction(self, restriction: str) -> None:
        self._set_extra(self.guid, restriction, self.allowed)

    @property
    def allowed(self) -> Sequence[tuple[str, UUID | None]]:
        """(name, GUID) of each template a restricted one allows."""
        return () if self._extra is None else self._extra[2]

    @allowed.setter
    def allowed(self, allowed: Sequence[tuple[str, UUID | None]]) -> None:
        self._set_extra(self.guid, self.restriction, allowed)

    @property
    def where(self) -> str:
        """Where it was declared: "line:column" (text) or "byte N" (binary)."""
        return place_text(self.place)

    def _fields(self) -> tuple[object, ...]:
        return (self.name, self.guid, self.members, self.restriction, self.allowed, self.place)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Template):
            return NotImplemented
        return self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value (as a dataclass)

    def __repr__(self) -> str:
        return (
            f"Template(name={self.name!r}, guid={self.guid!r}, members={self.members!r}, "
            f"restriction={self.restriction!r}, allowed={self.allowed!r}, place={self.place!r})"
        )


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
    place = tokens.place(start)
    members: list[Member] = []
    while True:
        tok = tokens.next()
        kind, value = tok[0], tok[1]
        if kind == PUNCT and value == "}":
            return Template(name, guid, members, place=place)
        if kind == PUNCT and value == ";":
            continue
        if kind == PUNCT and value == "[":
            restriction, allowed = _parse_restriction(tokens, name)
            tokens.expect_punct("}", f"to close template {name}")
            return Template(name, guid, members, restriction, allowed, place)
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
    unnamed = _UNNAMED[index] if index < len(_UNNAMED) else f"_{index}"
    member = Member(unnamed, _primitive(first))
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


def _parse_restriction(
    tokens: TokenSource, name: str
) -> tuple[str, Sequence[tuple[str, UUID | None]]]:
    """``[...]`` (open) or ``[Name <GUID>, ...]`` (restricted), the ``[`` already read."""
    tok = tokens.next()
    if tok[0] == PUNCT and tok[1] == ".":
        for _ in range(2):
            tokens.expect_punct(".", f"in '[...]' of template {name}")
        tokens.expect_punct("]", f"after '[...' of template {name}")
        return OPEN, ()
    allowed: list[tuple[str, UUID | None]] = []
    while True:
        if tok[0] == PUNCT and tok[1] == "]":
            return RESTRICTED, allowed
        if tok[0] == PUNCT and tok[1] == ",":
            tok = tokens.next()
            continue
        if tok[0] != NAME:
            raise tokens.error(
                f"expected a template name in the restriction of {name}, found {describe(tok)}",
                tok[2],
            )
        allowed_name = str(tok[1])
        guid = tokens.optional_guid()
        tok = tokens.next()
        allowed.append((allowed_name, guid))


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


class _FoldIndex:
    """Case-insensitive lookup for a :class:`TemplateTable`: the latest name folding to a key.

    Names are positions in the table's own lists (built-ins, then the file's declarations in
    order; a later one wins). The index is one sorted int64 array, each entry the top bits of
    the hash of a folded name over its position: 8 bytes a name where a folded copy kept as a
    dict key costs ~100 (hostile files declare thousands of templates); a hash shared by
    other names only costs a comparison. Names declared since the last sort wait in a small
    dict, sorted in once they outnumber an eighth of the others: ~N log N work over a file.
    """

    _BITS = 36  # position bits: 2**36 declarations is far more than any file holds
    _MASK = (1 << _BITS) - 1

    def __init__(self, builtin: list[str], declared: list[str]) -> None:
        self._builtin = builtin
        self._declared = declared
        self._keys = np.zeros(0, np.int64)  # sorted: by hash, equal hashes by position
        self._recent: dict[str, int] = {}  # folded name -> latest position, after the array
        self._seen = 0  # positions below this are in the array or in ``_recent``

    def _name(self, position: int) -> str:
        n = len(self._builtin)
        return self._builtin[position] if position < n else self._declared[position - n]

    def _key(self, position: int) -> int:
        return hash(fold(self._name(position))) >> self._BITS << self._BITS | position

    def _catch_up(self) -> None:
        total = len(self._builtin) + len(self._declared)
        if total >> self._BITS:
            raise XFileError(f"more than {self._MASK} template declarations")
        new = len(self._recent) + total - self._seen
        if new <= 64 + len(self._keys) // 8:
            for position in range(self._seen, total):
                self._recent[fold(self._name(position))] = position
        else:  # sort them all in (keys computed again: no list of Python ints on the way)
            positions = chain(sorted(self._recent.values()), range(self._seen, total))
            self._recent.clear()
            keys = np.fromiter(map(self._key, positions), np.int64, count=new)
            keys = np.concatenate((self._keys, keys))
            keys.sort()
            self._keys = keys
        self._seen = total

    def find(self, key: str) -> str | None:
        """The latest name whose ``fold`` is ``key``, or None."""
        self._catch_up()
        position = self._recent.get(key)
        if position is not None:
            return self._name(position)
        top = hash(key) >> self._BITS << self._BITS
        lo = int(np.searchsorted(self._keys, top, side="left"))
        hi = int(np.searchsorted(self._keys, top | self._MASK, side="right"))
        for i in range(hi - 1, lo - 1, -1):  # the latest position first
            name = self._name(int(self._keys[i]) & self._MASK)
            if fold(name) == key:
                return name
        return None


class TemplateTable:
    """The templates in force for one document (built-ins overridden by the file's own)."""

    def __init__(self, templates: dict[str, Template]) -> None:
        self.templates = dict(templates)
        self._builtin = templates
        self.declared: list[str] = []  # names the file declared, in order (the parser's list)
        # case-insensitive index, built on the first lookup that needs it (most files never do)
        self._folded: _FoldIndex | None = None
        self._layouts: dict[str, Layout | None] = {}
        self.problems: dict[str, str] = {}

    def declare(self, template: Template) -> None:
        self.templates[template.name] = template
        self.declared.append(template.name)
        self._layouts.clear()
        self.problems.clear()

    def find(self, name: str) -> Template | None:
        """Exact name first, then any case (``TextureFileName``): the latest declared."""
        found = self.templates.get(name)
        if found is not None:
            return found
        if self._folded is None:
            self._folded = _FoldIndex(list(self._builtin), self.declared)
        key = self._folded.find(fold(name))
        return None if key is None else self.templates[key]

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
