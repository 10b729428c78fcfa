"""Record-form arrays (``Layout.record``: TimedFloatKeys and the like) back to dicts.

The reader keeps such arrays as one 2-D table or a :class:`Ragged` (300k animation keys are
not 300k dicts); code that wants the per-record dicts ``read_members`` would have built (the
writer, generic dumps) converts here, one record at a time.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from .document import Ragged
from .templates import INT, STRUCT, Layout


def records(value: np.ndarray | Ragged) -> Iterator[np.ndarray]:
    """The records of a 2-D table (its rows) or of a Ragged, as 1-D arrays."""
    if isinstance(value, Ragged):
        for i in range(len(value)):
            yield value.record(i)
    else:
        yield from value.reshape(len(value), -1)


def record_dict(row: np.ndarray, layout: Layout) -> dict[str, Any]:
    """One record ``prefix..., k, v1..vk`` as the nested dict of its template."""
    out, used = _fill(row, 0, layout)
    if used != len(row):
        raise ValueError(f"{layout.name}: record of {len(row)} values, the template took {used}")
    return out


def record_dicts(value: np.ndarray | Ragged, layout: Layout) -> list[dict[str, Any]]:
    return [record_dict(row, layout) for row in records(value)]


def _fill(row: np.ndarray, at: int, layout: Layout) -> tuple[dict[str, Any], int]:
    out: dict[str, Any] = {}
    for plan in layout.members:
        if plan.kind == STRUCT:
            assert plan.sub is not None
            out[plan.name], at = _fill(row, at, plan.sub)
        elif plan.dims is None:
            out[plan.name] = int(row[at]) if plan.kind == INT else float(row[at])
            at += 1
        else:  # the last leaf: the array sized by the count just read
            k = int(row[at - 1])
            dtype = np.int64 if plan.kind == INT else np.float64
            out[plan.name] = row[at : at + k].astype(dtype)
            at += k
    return out, at
