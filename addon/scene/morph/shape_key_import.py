"""Meshes of other files as shape keys of an existing object (Adams keeps each target in its
own file, so a morph rig is assembled from several files)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import bpy
import numpy as np

from ...xfile.views.model import MeshData, SceneData, depth_first
from .shape_keys import add_shape_key, ensure_basis, file_to_blender_positions, unique_block_name


@dataclass(eq=False)
class ShapeKeyImport:
    added: list[str] = field(default_factory=list)  # key block names, in order
    warnings: list[str] = field(default_factory=list)


def named_meshes(data: SceneData, fallback: str) -> list[tuple[str, MeshData]]:
    """Every mesh with the name its key gets: the mesh's, else its frame's, else ``fallback``.

    Several unnamed meshes under the fallback get ``fallback``, ``fallback.1``...
    """
    frame_of: dict[int, str] = {}
    for frame in depth_first(data.frames):
        for mesh in frame.meshes:
            if frame.name:
                frame_of[id(mesh)] = frame.name
    out: list[tuple[str, MeshData]] = []
    unnamed = 0
    for mesh in data.all_meshes():
        name = mesh.name or frame_of.get(id(mesh))
        if not name:
            name = fallback if unnamed == 0 else f"{fallback}.{unnamed}"
            unnamed += 1
        out.append((name, mesh))
    return out


def add_meshes_as_shape_keys(
    obj: bpy.types.Object,
    data: SceneData,
    source: str,
    to_blender: Callable[[np.ndarray], np.ndarray] = file_to_blender_positions,
) -> ShapeKeyImport:
    """One key block per mesh of ``data`` whose vertex count is the object's; others warned.

    ``source`` names the file (for messages and unnamed meshes). A file with one such mesh
    names its key (the book's target files name every mesh alike: keys would be
    ``JimMesh``, ``JimMesh.001``...); a file with several names each key after its mesh.
    """
    report = ShapeKeyImport()
    count = len(obj.data.vertices)  # type: ignore[union-attr]
    named = named_meshes(data, source)
    if sum(len(mesh.positions) == count for _, mesh in named) == 1:
        named = [(source if len(m.positions) == count else n, m) for n, m in named]
    for name, mesh in named:
        if len(mesh.positions) != count:
            report.warnings.append(
                f"{source}: mesh '{name}' has {len(mesh.positions)} vertices but "
                f"'{obj.name}' has {count}: skipped"
            )
            continue
        ensure_basis(obj, "Basis")
        key = obj.data.shape_keys  # type: ignore[union-attr]
        assert key is not None
        block = add_shape_key(obj, unique_block_name(key, name), to_blender(mesh.positions))
        report.added.append(block.name)
    return report
