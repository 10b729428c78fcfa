"""Small helpers to read member values whatever shape the template gave them.

Files may declare their own version of a standard template (other member names, DWORD where
we say WORD), so views read members by position when names can differ, and flatten nested
structs (``{"red": .., "green": ..}``) into plain arrays.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..document import Ragged, XObject
from ..names import fold

# what member values of an unexpected shape raise in the views (a file-declared template with
# other types, NaN or huge counts): caught per object and turned into a warning
DATA_ERRORS = (KeyError, ValueError, TypeError, IndexError, OverflowError)


def flat_floats(value: Any) -> np.ndarray:
    """Every numeric leaf of a member value, in declaration order, as float64."""
    if isinstance(value, np.ndarray):
        return value.astype(np.float64, copy=False).ravel()
    if isinstance(value, dict):
        parts = [flat_floats(v) for v in value.values()]
        return np.concatenate(parts) if parts else np.zeros(0)
    if isinstance(value, (list, tuple)):
        parts = [flat_floats(v) for v in value]
        return np.concatenate(parts) if parts else np.zeros(0)
    if isinstance(value, Ragged):
        return value.flat.astype(np.float64)
    if isinstance(value, (int, float)):
        return np.array([float(value)])
    return np.zeros(0)


def member(obj: XObject, index: int, name: str | None = None) -> Any:
    """A member by name when present, else by position (file-declared templates differ)."""
    if name is not None and name in obj.members:
        return obj.members[name]
    values = [v for k, v in obj.members.items() if k != "_values"]
    if index < len(values):
        return values[index]
    raw = obj.members.get("_values")
    if raw is not None:
        flat = [x for chunk in raw if isinstance(chunk, np.ndarray) for x in chunk.tolist()]
        if index < len(flat):
            return flat[index]
    raise KeyError(name or index)


def rows(value: Any, width: int) -> np.ndarray:
    """A fixed-size struct array as (n, width) float64 (``Vector`` arrays -> (n, 3))."""
    flat = flat_floats(value)
    if width <= 0 or flat.size % width:
        raise ValueError(f"{flat.size} values do not make rows of {width}")
    return flat.reshape(-1, width)


def matrix16(value: Any) -> np.ndarray:
    """A ``Matrix4x4`` member (or anything with 16 numbers) as a (4, 4) float64 array."""
    flat = flat_floats(value)
    if flat.size != 16:
        raise ValueError(f"a matrix needs 16 values, found {flat.size}")
    return flat.reshape(4, 4).copy()


def children_named(obj: XObject, *templates: str) -> list[XObject]:
    """Children (references followed) of any of the given templates, any letter case."""
    wanted = {fold(t) for t in templates}
    return [c for c in obj.objects() if fold(c.template) in wanted]


def ragged_parts(value: Any) -> tuple[np.ndarray, np.ndarray]:
    """(sizes, flat indices without the counts) of a MeshFace-like array."""
    if isinstance(value, Ragged):
        if len(value) == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        flat = value.flat.astype(np.int64, copy=False)
        n, width = len(value), len(flat) // len(value)
        if width * n == len(flat) and value.starts[0] == 0 and value.starts[-1] == (n - 1) * width:
            block = flat.reshape(n, width)  # records of one size (all quads): columns
            if bool((block[:, 0] == width - 1).all()):
                return block[:, 0].copy(), np.ascontiguousarray(block[:, 1:]).reshape(-1)
        sizes = flat[value.starts]
        keep = np.ones(len(flat), dtype=bool)
        keep[value.starts] = False
        return sizes, flat[keep]
    if isinstance(value, list):  # list of dicts from a file-declared face template
        sizes, corners = [], []
        for rec in value:
            parts = list(rec.values())
            idx = np.asarray(parts[1] if len(parts) > 1 else [], dtype=np.int64).ravel()
            sizes.append(len(idx))
            corners.append(idx)
        flat = np.concatenate(corners) if corners else np.zeros(0, np.int64)
        return np.asarray(sizes, dtype=np.int64), flat
    raise ValueError("not a face array")
