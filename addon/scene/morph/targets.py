"""Meshes of one vertex count and no morph set (facial targets) as one mesh's shape keys.

Files of facial targets (neutral, aaa, eee, blink...) hold one mesh per expression, all with
the same vertices, and no MorphAnimationSet saying so. With the option, the first mesh of
each such group keeps its object and gets the others as shape keys (named after their
meshes, file positions in the mesh's own space); a target equal to the Basis adds no key.
The targets' objects go unless ``keep_targets``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import bpy
import numpy as np

from ...xfile.views.model import MeshData
from .shape_keys import add_shape_key, ensure_basis

if TYPE_CHECKING:
    from ..imp.context import BuildContext


def target_groups(meshes: list[MeshData]) -> list[list[MeshData]]:
    """Meshes sharing vertex and face counts (two or more), in file order; skins excluded."""
    groups: dict[tuple[int, int], list[MeshData]] = {}
    for mesh in meshes:
        if mesh.skin is not None and mesh.skin.weights:
            continue
        key = (len(mesh.positions), len(mesh.face_sizes))
        if key[0]:
            groups.setdefault(key, []).append(mesh)
    return [g for g in groups.values() if len(g) > 1]


def targets_as_shape_keys(ctx: BuildContext) -> None:
    to_blender = ctx.conversion.positions
    for group in target_groups([m for m in ctx.scene.all_meshes() if m in ctx.mesh_objects]):
        basis_mesh = group[0]
        obj = ctx.mesh_objects[basis_mesh]
        if obj.type != "MESH" or len(obj.data.vertices) != len(basis_mesh.positions):  # type: ignore[union-attr]
            continue
        base = np.asarray(to_blender(basis_mesh.positions), dtype=np.float64)
        size = float(np.max(np.ptp(base, axis=0))) or 1.0
        ensure_basis(obj, basis_mesh.name or "Basis")
        added: list[str] = []
        same: list[str] = []
        for target in group[1:]:
            positions = np.asarray(to_blender(target.positions), dtype=np.float64)
            name = target.name or f"Target{len(added) + 1}"
            if np.allclose(positions, base, rtol=0.0, atol=1e-6 * size):
                same.append(name)
                continue
            add_shape_key(obj, name, positions)
            added.append(name)
        note = f"{len(added)} mesh(es) of {len(base)} vertices as shape keys of {obj.name!r}"
        if same:
            note += f"; equal to the Basis, no key: {', '.join(same)}"
        ctx.result.notes.append(note)
        if ctx.options.morphs.keep_targets:
            continue
        doomed = [ctx.mesh_objects[t] for t in group[1:]]
        doomed = [o for o in doomed if o is not obj and not o.children]
        ctx.forget(*doomed)
        for other in doomed:
            data = other.data
            bpy.data.objects.remove(other, do_unlink=True)
            if isinstance(data, bpy.types.Mesh) and data.users == 0:
                bpy.data.meshes.remove(data)
