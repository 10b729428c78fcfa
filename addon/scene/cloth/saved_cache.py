"""The frame cache saved with the .blend: two ID properties on the object, the cache's bytes
and a checksum of the rest shape they were simulated from (an edited mesh outdates them)."""

from __future__ import annotations

import zlib
from typing import TYPE_CHECKING

import numpy as np

from .cache import FrameCache
from .data import mesh_of, mesh_positions
from .object_solver import physics

if TYPE_CHECKING:
    import bpy

CACHE_PROPERTY = "xof_cloth_cache"  # ID property on the object: FrameCache.to_bytes()
REST_PROPERTY = "xof_cloth_rest_crc"  # ID property: checksum of the rest the cache is of


def rest_checksum(rest: np.ndarray) -> int:
    """A checksum of an object-space rest shape ``(N, 3)`` float32 (as a positive int)."""
    return zlib.crc32(np.ascontiguousarray(rest, dtype=np.float32).tobytes()) & 0x7FFFFFFF


def load(obj: bpy.types.Object) -> FrameCache | None:
    """The cache saved in the object's ID property, or None (absent or unreadable); frames
    holding NaN or inf are dropped, with a warning."""
    blob = obj.get(CACHE_PROPERTY)
    if not blob:
        return None
    try:
        cache = FrameCache.from_bytes(bytes(blob))
    except ValueError as exc:
        print(f"xof: {obj.name}: saved cloth cache ignored ({exc})")
        return None
    if cache.dropped:
        note = f"saved cache frames {_frame_list(cache.dropped)} held NaN or inf: dropped"
        print(f"xof: {obj.name}: {note}")
        physics(obj).last_warning = note
    return cache


def _frame_list(frames: list[int]) -> str:
    """``1, 2, 5`` (the first few, then how many more)."""
    shown = ", ".join(str(f) for f in frames[:5])
    return shown if len(frames) <= 5 else f"{shown} and {len(frames) - 5} more"


def rest_edited(obj: bpy.types.Object) -> bool:
    """Whether the mesh's rest shape is not the one the saved cache was simulated from."""
    saved = obj.get(REST_PROPERTY)
    return saved is not None and int(saved) != rest_checksum(mesh_positions(mesh_of(obj)))


def has_saved(obj: bpy.types.Object) -> bool:
    return obj.get(CACHE_PROPERTY) is not None


def save(obj: bpy.types.Object, cache: FrameCache | None) -> None:
    """Write ``cache`` and the rest's checksum into the object's ID properties; None or an
    empty cache (or mesh) clears them."""
    if cache is not None and len(cache) and len(mesh_of(obj).vertices):
        if obj.get(CACHE_PROPERTY) is not None:  # bytes over bytes read from a file: empty
            del obj[CACHE_PROPERTY]
        obj[CACHE_PROPERTY] = cache.to_bytes()
        obj[REST_PROPERTY] = rest_checksum(mesh_positions(mesh_of(obj)))
    else:
        for name in (CACHE_PROPERTY, REST_PROPERTY):
            if obj.get(name) is not None:
                del obj[name]
