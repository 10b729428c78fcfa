"""Shape-key helpers shared by the morph importer and the "Add shape keys from .X" operator."""

from __future__ import annotations

import bpy
import numpy as np


def file_to_blender_positions(positions: np.ndarray) -> np.ndarray:
    """D3D positions to Blender's space: the Y/Z swap mirror, ``(x, y, z) -> (x, z, y)``."""
    return np.ascontiguousarray(np.asarray(positions, dtype=np.float64)[:, [0, 2, 1]])


def ensure_basis(obj: bpy.types.Object, name: str) -> bpy.types.ShapeKey:
    """The reference key, created from the mesh as it is (and named ``name``) when missing."""
    mesh = obj.data
    if mesh.shape_keys is None:  # type: ignore[union-attr]
        block = obj.shape_key_add(name=name, from_mix=False)
        return block
    return mesh.shape_keys.reference_key  # type: ignore[union-attr]


def add_shape_key(obj: bpy.types.Object, name: str, positions: np.ndarray) -> bpy.types.ShapeKey:
    """A new key block (relative to the Basis) holding ``positions`` (Blender space, (n, 3)).

    The caller has checked the vertex count: a mismatch here is a programming error.
    """
    mesh = obj.data
    count = len(mesh.vertices)  # type: ignore[union-attr]
    if len(positions) != count:
        raise ValueError(f"shape key '{name}': {len(positions)} positions for {count} vertices")
    block = obj.shape_key_add(name=name, from_mix=False)
    block.data.foreach_set("co", np.asarray(positions, dtype=np.float32).ravel())
    block.value = 0.0
    mesh.update()  # type: ignore[union-attr]
    return block


def unique_block_name(key: bpy.types.Key, wanted: str) -> str:
    """``wanted``, or ``wanted.001``... if the Key already has a block of that name."""
    if wanted not in key.key_blocks:
        return wanted
    n = 1
    while f"{wanted}.{n:03d}" in key.key_blocks:
        n += 1
    return f"{wanted}.{n:03d}"
