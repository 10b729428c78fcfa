"""Frame names of an animation file -> bone names of an armature (no bpy).

Exporters prefix names (``Frame1_Hips``, ``Armature_Hips``, ``mixamorig:Hips``): a name
matches its bone exactly, or after stripping a prefix the user gives, or -- when exactly one
bone fits and no other name takes that bone -- when one ends with the other after a
separator (``_ : | . - `` or a space). Every match that is not exact is reported.
"""

from __future__ import annotations

from dataclasses import dataclass, field

SEPARATORS = "_:|.- "


@dataclass
class NameMatch:
    bones: dict[str, str] = field(default_factory=dict)  # file frame name -> bone name
    by_prefix: list[str] = field(default_factory=list)  # file names matched after the prefix
    by_suffix: list[str] = field(default_factory=list)  # file names matched by suffix
    ambiguous: list[str] = field(default_factory=list)  # file names several bones fit

    def notes(self) -> list[str]:
        out = []
        for label, names in (("after the prefix", self.by_prefix), ("by suffix", self.by_suffix)):
            if names:
                pairs = ", ".join(f"{n} -> {self.bones[n]}" for n in names[:10])
                more = f" and {len(names) - 10} more" if len(names) > 10 else ""
                out.append(f"{len(names)} frame name(s) matched to bones {label}: {pairs}{more}")
        if self.ambiguous:
            out.append(
                f"{len(self.ambiguous)} frame name(s) fit several bones and stay unmatched: "
                + ", ".join(self.ambiguous[:10])
            )
        return out


def _ends_with(long: str, short: str) -> bool:
    """``long`` is ``<prefix><separator><short>`` (case as written)."""
    return (
        len(long) > len(short) + 1 and long.endswith(short) and long[-len(short) - 1] in SEPARATORS
    )


def match_names(file_names: list[str], bones: list[str], strip_prefix: str = "") -> NameMatch:
    """Match every file name to at most one bone, and no bone to two names."""
    out = NameMatch()
    bone_set = set(bones)
    taken: set[str] = set()
    for name in file_names:
        if name in bone_set:
            out.bones[name] = name
            taken.add(name)
    rest = [n for n in file_names if n not in out.bones]
    if strip_prefix:
        for name in rest:
            bare = name.removeprefix(strip_prefix)
            if bare != name and bare in bone_set and bare not in taken:
                out.bones[name] = bare
                out.by_prefix.append(name)
                taken.add(bare)
        rest = [n for n in rest if n not in out.bones]
    free = [b for b in bones if b not in taken]
    fits = {n: [b for b in free if _ends_with(n, b) or _ends_with(b, n)] for n in rest}
    claims: dict[str, int] = {}
    for candidates in fits.values():
        for b in candidates:
            claims[b] = claims.get(b, 0) + 1
    for name in rest:
        candidates = fits[name]
        if len(candidates) == 1 and claims[candidates[0]] == 1:
            out.bones[name] = candidates[0]
            out.by_suffix.append(name)
        elif len(candidates) > 1 or any(claims[b] > 1 for b in candidates):
            out.ambiguous.append(name)
    return out
