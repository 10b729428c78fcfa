"""Resolve ``{Name}`` / ``{<GUID>}`` references once the whole file is read.

Names may be defined after their use. When several objects share a name (a Frame and its
Mesh are often both called ``Box01``), the template the reference's context expects wins.
"""

from __future__ import annotations

from uuid import UUID

from .document import XDocument, XObject, XReference
from .names import fold, is_word

# parent template (lower case) -> the template its references usually point at
_PREFERRED = {"meshmateriallist": "material", "animation": "frame", "frame": "mesh"}


def resolve_references(doc: XDocument, references: list[XReference]) -> None:
    by_name: dict[str, list[XObject]] = {}
    by_guid: dict[UUID, XObject] = {}
    parent_of: dict[XReference, str] = {}  # the parent's template, as written
    for obj in doc.walk():
        if obj.name is not None:
            by_name.setdefault(obj.name, []).append(obj)
        if obj.guid is not None:
            by_guid.setdefault(obj.guid, obj)
        for child in obj.children:
            if isinstance(child, XReference):
                parent_of[child] = obj.template
    for ref in references:
        target = by_guid.get(ref.guid) if ref.guid is not None else None
        if target is None and ref.name is not None:
            candidates = by_name.get(ref.name, [])
            if len(candidates) > 1:
                want = _PREFERRED.get(fold(parent_of.get(ref, "")))
                preferred = [c for c in candidates if want and is_word(c.template, want)]
                candidates = preferred or candidates
            target = candidates[0] if candidates else None
        ref.target = target
        if target is None:
            doc.unresolved.append(ref)
