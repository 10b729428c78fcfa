"""Where a file departs from what D3D's own parser (d3dxof) accepts, which ours tolerates.

The rules (as Wine's d3dxof tests record D3D's behaviour):

- the header's version is ``0302`` or ``0303``;
- every value (number or string) is followed by a separator: one or more ``;`` then at most
  one ``,``, or one ``,`` (``1;`` ``1;;,`` ``1,``); ``1,,`` ``1,;`` and a value with none
  (``0 1 2;``, ``5 }``) are refused;
- in binary files an INTEGER_LIST or FLOAT_LIST separates itself: a ``;`` or ``,`` token
  after one is refused;
- a template's member types are primitives or templates known by their exact name
  (Microsoft's standard ones, declared earlier, or D3D's alias ``indexColor``: ``IndexColor``
  is unknown);
- objects of this project's templates (``ClothMasses``...) come with a declaration;
- a data object's template is known (in any case: ``TextureFileName`` objects load), and the
  object holds no values beyond it.

:func:`check` reads like ``read()`` (same document, same errors) while a watcher on the
tokenizer records these departures; ``read()`` itself never pays for them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .document import XDocument
from .errors import printable
from .names import fold
from .parser import Parser
from .scan.binary_tokens import T_INTEGER, BinaryTokens
from .scan.codepages import NameDecoder
from .scan.text_tokens import TextTokens
from .scan.tokens import NUMBERS, PUNCT, STRING, TEMPLATE, Token, TokenSource
from .standard_templates import standard_templates
from .templates import PRIMITIVES
from .writer.declarations import microsoft_standard

VERSIONS = ("0302", "0303")
D3D_ALIASES = frozenset({"indexColor"})  # a type name D3D knows besides the templates

# lexical states: nothing pending, a value, a ';' run, a ',', a binary list
_NONE, _VALUE, _SEMI, _COMMA, _LIST = range(5)
_RUN_STEP = 1 << 20  # bytes of a numeric run classified per numpy step
_BYTE_CLASS = np.full(256, _VALUE, dtype=np.int8)
_BYTE_CLASS[list(b" \t\r\n\v\f")] = _NONE
_BYTE_CLASS[ord(",")] = _COMMA
_BYTE_CLASS[ord(";")] = _SEMI


@dataclass(frozen=True)
class Departure:
    """One place where D3D would stop: ``where`` as in errors, ``key`` to sort by."""

    key: tuple[int, int]
    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


@dataclass
class CheckResult:
    document: XDocument
    departures: list[Departure] = field(default_factory=list)  # sorted by place

    @property
    def first(self) -> Departure | None:
        return self.departures[0] if self.departures else None


def _key_of(where: str) -> tuple[int, int]:
    if where.startswith("byte "):
        return (0, int(where.split()[1]))
    line, _, column = where.partition(":")
    return (int(line), int(column or 0))


def _separator_problem(state: int, new: int) -> str | None:
    """The departure of token class ``new`` after ``state``, if any."""
    if state == _VALUE and new in (_VALUE, _LIST, _NONE):
        return "no ';' or ',' between a value and this (D3D wants one after every value)"
    if state == _COMMA and new == _COMMA:
        return "two ',' in a row (D3D refuses ',,')"
    if state == _COMMA and new == _SEMI:
        return "';' after ',' (D3D refuses ',;')"
    if state == _LIST and new in (_SEMI, _COMMA):
        return "a separator after a binary list (D3D refuses it)"
    return None


class Watcher:
    """Wraps a tokenizer's ``_read`` to follow values and separators token by token."""

    def __init__(self, tokens: TokenSource, limit: int) -> None:
        self.tokens = tokens
        self.text = isinstance(tokens, TextTokens)
        self.found: list[Departure] = []
        self.limit = limit
        self.state = _NONE
        self.template_depth = -1  # >= 0 inside a template declaration
        self._inner = tokens._read
        tokens._read = self._read  # type: ignore[method-assign]
        if isinstance(tokens, BinaryTokens):  # the bulk key path would skip the watch
            tokens.fixed_records = lambda *args: None  # type: ignore[method-assign]

    def add(self, offset: int, message: str) -> None:
        if len(self.found) < self.limit:
            where = self.tokens.where(offset)
            self.found.append(Departure(_key_of(where), where, printable(message)))

    def _read(self) -> Token:
        tok = self._inner()
        kind = tok[0]
        if self.template_depth >= 0 or kind == TEMPLATE:
            self._in_template(tok)
            return tok
        if kind == NUMBERS:
            if self.text:
                self._text_run(tok[2], self.tokens.pos)
            else:
                tid = int.from_bytes(self.tokens.data[tok[2] : tok[2] + 2], "little")
                self._step(_VALUE if tid == T_INTEGER else _LIST, tok[2])
        elif kind == STRING:
            self._step(_VALUE, tok[2])
        elif kind == PUNCT and tok[1] in ";,":
            self._step(_SEMI if tok[1] == ";" else _COMMA, tok[2])
        else:
            self._step(_NONE, tok[2])
        return tok

    def _step(self, new: int, offset: int) -> None:
        problem = _separator_problem(self.state, new)
        if problem:
            self.add(offset, problem)
        self.state = new

    def _in_template(self, tok: Token) -> None:
        if tok[0] == TEMPLATE:
            self.template_depth = 0
        elif tok[0] == PUNCT and tok[1] == "{":
            self.template_depth += 1
        elif tok[0] == PUNCT and tok[1] == "}":
            self.template_depth -= 1
            if self.template_depth == 0:
                self.template_depth = -1
                self.state = _NONE

    def _text_run(self, start: int, end: int) -> None:
        """A text numeric run, classified byte by byte with numpy, a step at a time."""
        data = self.tokens.data
        after_value = False  # the byte before the step was a value byte
        for a in range(start, end, _RUN_STEP):
            b = min(a + _RUN_STEP, end)
            classes = _BYTE_CLASS[np.frombuffer(data, np.uint8, b - a, a)]
            marks = np.flatnonzero(classes)
            seq = classes[marks]
            before = np.empty(len(classes), dtype=bool)  # byte i-1 is a value byte
            before[0] = after_value
            before[1:] = classes[:-1] == _VALUE
            keep = (seq != _VALUE) | ~before[marks]  # separators, and each value's first byte
            seq, marks = seq[keep], marks[keep]
            after_value = bool(classes[-1] == _VALUE)
            if not len(seq):
                continue
            prev = np.empty(len(seq), dtype=np.int8)
            prev[0] = self.state
            prev[1:] = seq[:-1]
            bad = (
                ((prev == _VALUE) & ((seq == _VALUE) | (seq == _LIST)))
                | ((prev == _COMMA) & ((seq == _COMMA) | (seq == _SEMI)))
                | ((prev == _LIST) & ((seq == _SEMI) | (seq == _COMMA)))
            )
            for i in np.flatnonzero(bad)[: max(0, self.limit - len(self.found))].tolist():
                problem = _separator_problem(int(prev[i]), int(seq[i]))
                self.add(a + int(marks[i]), problem or "separator")
            self.state = int(seq[-1])


def _declaration_departures(doc: XDocument) -> list[Departure]:
    """Member types D3D does not know by that exact name, in declaration order."""
    known = set(microsoft_standard()) | D3D_ALIASES
    found = []
    for name in doc.declared:
        template = doc.templates.get(name)
        if template is None:
            continue
        for member in template.members:
            if member.type.upper() not in PRIMITIVES and member.type not in known:
                near = next((k for k in known if fold(k) == fold(member.type)), None)
                hint = f" (D3D's names are case-sensitive: {near!r})" if near else ""
                where = template.where or "1:1"
                message = f"template {name}: member type {member.type!r} is not a known template"
                found.append(Departure(_key_of(where), where, printable(message + hint)))
        known.add(name)
    return found


def _undeclared_departures(doc: XDocument) -> list[Departure]:
    """Objects of templates our reader knows but D3D does not (this project's own ones),
    when the file does not declare them: one departure per template, at its first object."""
    known = {fold(n) for n in microsoft_standard()} | {fold(n) for n in doc.declared}
    ours = {fold(n) for n in standard_templates()}
    found, seen = [], set()
    for obj in doc.walk():
        key = fold(obj.template)
        if key in known or key not in ours or key in seen or not obj.where:
            continue
        seen.add(key)
        message = f"{obj.template} is not declared (D3D knows only Microsoft's standard templates)"
        found.append(Departure(_key_of(obj.where), obj.where, printable(message)))
    return found


def check(source: object, encoding: str = "auto", limit: int = 1000) -> CheckResult:
    """Read ``source`` as ``read()`` does (an unreadable file raises the same XFileError)
    and list up to ``limit`` departures from D3D's grammar, in file order."""
    from .reader import load, parse_into_document

    decoder = NameDecoder(encoding)
    raw, path = load(source)
    watchers: list[Watcher] = []

    def watch(tokens: TokenSource, parser: Parser) -> None:
        watcher = Watcher(tokens, limit)
        watchers.append(watcher)
        plain_warn = parser.warn

        def warn(message: str, offset: int) -> None:
            plain_warn(message, offset)
            watcher.add(offset, message)

        parser.warn = warn  # type: ignore[method-assign]

    doc = parse_into_document(raw, path, decoder, watch)
    found = list(watchers[0].found) if watchers else []
    if doc.version not in VERSIONS:
        where = "byte 4" if doc.format in ("bin", "bzip") else "1:5"
        found.append(Departure((0, 4), where, f"version {doc.version}: D3D reads 0302 and 0303"))
    found += _declaration_departures(doc) + _undeclared_departures(doc)
    found.sort(key=lambda d: d.key)
    return CheckResult(doc, found[:limit])
