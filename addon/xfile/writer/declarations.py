"""Which template declarations a written file carries, and their text.

Readers know Microsoft's standard templates without a declaration; anything else a document
uses (this project's cloth and morph templates, or a file's own templates) must be declared
before use so other readers can parse it. Templates the source file declared itself are
declared again, so a file's overrides (``XSkinMeshHeader`` with DWORDs, the Loop variant of
``MorphAnimationSet``) survive a round trip.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..document import XDocument
from ..standard_templates import standard_templates
from ..templates import OPEN, PRIMITIVES, RESTRICTED, Template

#: the project's own templates: built into our reader, unknown to everybody else's
CUSTOM_TEMPLATES = ("ClothMasses", "ClothSprings", "MorphAnimationKey", "MorphAnimationSet")

_UNNAMED = re.compile(r"_\d+$")  # the parser's name for a member declared without one


def microsoft_standard() -> frozenset[str]:
    """Names every D3DX-era reader knows without a declaration."""
    return frozenset(set(standard_templates()) - set(CUSTOM_TEMPLATES))


def used_templates(doc: XDocument) -> list[str]:
    """Templates of the document's objects, in first-use order (nested member types too)."""
    seen: dict[str, None] = {}
    for obj in doc.walk():
        seen.setdefault(obj.template, None)
    return list(seen)


def declarations(doc: XDocument) -> list[Template]:
    """Templates to declare, each after the templates its members use."""
    table = doc.templates or standard_templates()
    folded = {k.lower(): v for k, v in table.items()}
    standard = {n.lower() for n in microsoft_standard()}
    wanted: list[str] = [n for n in doc.declared if n.lower() in folded]
    wanted += [n for n in used_templates(doc) if n.lower() not in standard]
    out: dict[str, Template] = {}

    def add(name: str, stack: tuple[str, ...]) -> None:
        template = folded.get(name.lower())
        if template is None or template.name in out or template.name in stack:
            return
        for member in template.members:
            if member.type not in PRIMITIVES and member.type.lower() not in standard:
                add(member.type, (*stack, template.name))
        out[template.name] = template

    for name in wanted:
        add(name, ())
    return list(out.values())


def guid_text(guid: object) -> str:
    return f"<{str(guid).upper()}>"


def _dims(dims: Iterable[int | str]) -> str:
    return "".join(f"[{d}]" for d in dims)


def template_text(template: Template) -> str:
    """``template Name { <GUID> members... restriction }`` as text."""
    lines = [f"template {template.name} {{"]
    if template.guid is not None:
        lines.append(f" {guid_text(template.guid)}")
    for m in template.members:
        name = "" if _UNNAMED.match(m.name) else f" {m.name}"
        if m.dims is None:
            lines.append(f" {m.type}{name};")
        else:
            lines.append(f" array {m.type}{name}{_dims(m.dims)};")
    if template.restriction == OPEN:
        lines.append(" [...]")
    elif template.restriction == RESTRICTED:
        allowed = ", ".join(
            f"{n} {guid_text(g)}" if g is not None else n for n, g in template.allowed
        )
        lines.append(f" [{allowed}]")
    lines.append("}")
    return "\n".join(lines) + "\n\n"
