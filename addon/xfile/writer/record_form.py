"""The reader's compact record form (TimedFloatKeys as ``[time, n, v...]`` rows or a Ragged)
back to the per-record dicts the encoders walk member by member."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..document import Ragged
from ..templates import Layout


def record_items(value: Any, sub: Layout) -> list[dict[str, Any]] | None:
    """A record-form array (the reader's compact ``[time, n, v...]`` table or Ragged of
    TimedFloatKeys-like templates) as per-record dicts; None for any other value."""
    if getattr(sub, "record", None) is None or isinstance(value, list):
        return None
    if not isinstance(value, (np.ndarray, Ragged)):
        return None
    if isinstance(value, Ragged) and sub.ragged_int:
        return None  # all integers (MeshFace): the encoders write the flat values as they are
    from ..records import record_dicts  # the reader's own inverse of its compact form

    return record_dicts(value, sub)
