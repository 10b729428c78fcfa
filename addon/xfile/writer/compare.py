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


def _child_differences(
    a: XObject | XReference, b: XObject | XReference, where: str, bits: int, out: list[str]
) -> None:
    if isinstance(a, XReference) or isinstance(b, XReference):
        if not (isinstance(a, XReference) and isinstance(b, XReference)):
            out.append(f"{where}: reference vs object")
        elif (a.name, a.guid) != (b.name, b.guid):
            out.append(f"{where}: reference {a.name} / {b.name}")
        return
    object_differences(a, b, where, bits, out)


def object_differences(a: XObject, b: XObject, where: str, bits: int, out: list[str]) -> None:
    here = f"{where}/{a.template}{'(' + a.name + ')' if a.name else ''}"
    if (a.template, a.name, a.guid) != (b.template, b.name, b.guid):
        out.append(f"{here}: {b.template} {b.name} {b.guid} on the other side")
        return
    value_differences(a.members, b.members, here, bits, out)
    if len(a.children) != len(b.children):
        out.append(f"{here}: {len(a.children)} / {len(b.children)} children")
        return
    for x, y in zip(a.children, b.children, strict=True):
        _child_differences(x, y, here, bits, out)


def document_differences(a: XDocument, b: XDocument, float_bits: int = 64) -> list[str]:
    """Where two documents differ (empty when they are the same tree)."""
    out: list[str] = []
    if len(a.objects) != len(b.objects):
        out.append(f"{len(a.objects)} / {len(b.objects)} top-level objects")
        return out
    for x, y in zip(a.objects, b.objects, strict=True):
        _child_differences(x, y, "", float_bits, out)
    return out
