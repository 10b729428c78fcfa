"""Are two documents the same tree? For round-trip checks of the writer (tests, CLI).

Objects are compared by template, name, GUID, members and children in order; references by
name/GUID. Floats are compared at the precision of the file that stores them (a 32-bit file
holds float32 values, so both sides are rounded to float32 first); NaNs equal NaNs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..document import Ragged, XDocument, XObject, XReference


def _floats_equal(a: np.ndarray, b: np.ndarray, float_bits: int) -> bool:
    if a.shape != b.shape:
        return False
    if float_bits == 32:
        with np.errstate(over="ignore"):
            a, b = a.astype(np.float32), b.astype(np.float32)
    return bool(np.array_equal(a, b, equal_nan=True))


def value_differences(a: Any, b: Any, where: str, float_bits: int, out: list[str]) -> None:
    if isinstance(a, Ragged) or isinstance(b, Ragged):
        if not (isinstance(a, Ragged) and isinstance(b, Ragged)):
            out.append(f"{where}: ragged vs {type(b).__name__}")
            return
        if not np.array_equal(a.starts, b.starts):
            out.append(f"{where}: record starts differ")
        value_differences(a.flat, b.flat, where, float_bits, out)
        return
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        x, y = np.asarray(a), np.asarray(b)
        if x.dtype.kind in "iu" and y.dtype.kind in "iu":
            same = x.shape == y.shape and bool(np.array_equal(x, y))
        else:
            same = _floats_equal(x.astype(np.float64), y.astype(np.float64), float_bits)
        if not same:
            out.append(f"{where}: arrays differ (shapes {x.shape} / {y.shape})")
        return
    if isinstance(a, dict) and isinstance(b, dict):
        if list(a) != list(b):
            out.append(f"{where}: members {list(a)} / {list(b)}")
            return
        for key in a:
            value_differences(a[key], b[key], f"{where}.{key}", float_bits, out)
        return
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{where}: {len(a)} / {len(b)} items")
            return
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            value_differences(x, y, f"{where}[{i}]", float_bits, out)
        return
    if isinstance(a, float) or isinstance(b, float):
        if not _floats_equal(np.array([a], float), np.array([b], float), float_bits):
            out.append(f"{where}: {a!r} / {b!r}")
        return
    if a != b:
        out.append(f"{where}: {a!r} / {b!r}")


def _label(obj: XObject) -> str:
    return f"{obj.template}{'(' + obj.name + ')' if obj.name else ''}"


def object_differences(a: XObject, b: XObject, where: str, bits: int, out: list[str]) -> None:
    """Where two objects' subtrees differ. Pairs of children wait on a list, not on Python's
    stack, each with its parent's entry: a place is spelled out only for a difference (a chain
    of 5,000 levels would otherwise build a path per level)."""
    # (a, b, index of the parent pair's entry or -1); entries stay for their paths
    pairs: list[tuple[XObject | XReference, XObject | XReference, int]] = [(a, b, -1)]
    todo = [0]

    def place(index: int) -> str:
        parts = []
        while index >= 0:
            x, _, index = pairs[index]
            parts.append(_label(x) if isinstance(x, XObject) else "reference")
        return where + "".join("/" + p for p in reversed(parts))

    while todo:
        index = todo.pop()
        x, y, parent = pairs[index]
        if isinstance(x, XReference) or isinstance(y, XReference):
            if not (isinstance(x, XReference) and isinstance(y, XReference)):
                out.append(f"{place(parent)}: reference vs object")
            elif (x.name, x.guid) != (y.name, y.guid):
                out.append(f"{place(parent)}: reference {x.name} / {y.name}")
            continue
        if (x.template, x.name, x.guid) != (y.template, y.name, y.guid):
            out.append(f"{place(index)}: {y.template} {y.name} {y.guid} on the other side")
            continue
        found = len(out)
        value_differences(x.members, y.members, "\0", bits, out)  # the place filled in below
        if len(out) > found:
            here = place(index)
            out[found:] = [m.replace("\0", here, 1) for m in out[found:]]
        if len(x.children) != len(y.children):
            out.append(f"{place(index)}: {len(x.children)} / {len(y.children)} children")
            continue
        first = len(pairs)
        pairs.extend((c, d, index) for c, d in zip(x.children, y.children, strict=True))
        todo.extend(range(len(pairs) - 1, first - 1, -1))


def document_differences(a: XDocument, b: XDocument, float_bits: int = 64) -> list[str]:
    """Where two documents differ (empty when they are the same tree)."""
    out: list[str] = []
    if len(a.objects) != len(b.objects):
        out.append(f"{len(a.objects)} / {len(b.objects)} top-level objects")
        return out
    for x, y in zip(a.objects, b.objects, strict=True):
        if isinstance(x, XObject) and isinstance(y, XObject):
            object_differences(x, y, "", float_bits, out)
        elif not (isinstance(x, XReference) and isinstance(y, XReference)):
            out.append(": reference vs object")
        elif (x.name, x.guid) != (y.name, y.guid):
            out.append(f": reference {x.name} / {y.name}")
    return out
