"""Meshes of one vertex count and no morph set (facial targets) as one mesh's shape keys.

Files of facial targets (neutral, aaa, eee, blink...) hold one mesh per expression, all with
the same vertices, and no MorphAnimationSet saying so; the book's Chapter 10 keeps each in a
file of its own. With the option, the first mesh of each vertex count (face counts may
differ: a blink can close two faces) keeps its object and gets the others as shape keys (file
positions in the mesh's own space); a target equal to the Basis adds no key. Several files
imported together are grouped as one. The targets' objects go unless ``keep_targets``; the
report names every mesh that stayed an object, and why.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import bpy
import numpy as np

from ...xfile.views.model import MeshData
from .shape_keys import add_shape_key, ensure_basis, unique_block_name

if TYPE_CHECKING:
    from ..imp.context import BuildContext

Entry = tuple[MeshData, "BuildContext"]


def target_groups(meshes: list[MeshData]) -> list[list[MeshData]]:
    """Meshes sharing a vertex count (two or more), in file order; skins excluded."""
    groups: dict[int, list[MeshData]] = {}
    for mesh in meshes:
        if not _skinned(mesh) and len(mesh.positions):
            groups.setdefault(len(mesh.positions), []).append(mesh)
    return [g for g in groups.values() if len(g) > 1]


def _skinned(mesh: MeshData) -> bool:
    return mesh.skin is not None and bool(mesh.skin.weights)


def targets_as_shape_keys(ctx: BuildContext) -> None:
    """The build step for one file."""
    targets_across_files([ctx])


def targets_across_files(ctxs: list[BuildContext]) -> None:
    """Group the meshes of every file in ``ctxs`` (built, in import order) into shape keys."""
    entries: list[Entry] = [
        (mesh, ctx) for ctx in ctxs for mesh in ctx.scene.all_meshes() if mesh in ctx.mesh_objects
    ]
    stayed: list[str] = []
    for mesh, ctx in entries:
        if _skinned(mesh):
            stayed.append(f"{ctx.mesh_objects[mesh].name!r} (skinned)")
    by_id = {id(mesh): (mesh, ctx) for mesh, ctx in entries}
    for group in target_groups([mesh for mesh, _ in entries]):
        stayed += _one_group([by_id[id(m)] for m in group], len(ctxs) > 1)
    grouped = {id(m) for g in target_groups([mesh for mesh, _ in entries]) for m in g}
    for mesh, ctx in entries:
        if id(mesh) not in grouped and not _skinned(mesh) and mesh in ctx.mesh_objects:
            count = len(mesh.positions)
            stayed.append(
                f"{ctx.mesh_objects[mesh].name!r} (no other mesh has its {count} vertices)"
            )
    if stayed:
        ctxs[0].result.notes.append("stayed objects, not shape keys: " + ", ".join(stayed))


def _key_name(mesh: MeshData, ctx: BuildContext, basis_ctx: BuildContext, index: int) -> str:
    """A target of another file is named after its file (the book's files name every mesh
    alike); one of the basis's file after its mesh."""
    if ctx is not basis_ctx and ctx.filepath:
        stem = Path(ctx.filepath).stem
        alone = sum(len(m.positions) == len(mesh.positions) for m in ctx.scene.all_meshes()) == 1
        return stem if alone or not mesh.name else f"{stem} {mesh.name}"
    return mesh.name or f"Target{index}"


def _one_group(group: list[Entry], several_files: bool) -> list[str]:
    """Keys of the group's first mesh from the others; what stayed an object, with why."""
    basis_mesh, basis_ctx = group[0]
    obj = basis_ctx.mesh_objects[basis_mesh]
    if obj.type != "MESH" or len(obj.data.vertices) != len(basis_mesh.positions):  # type: ignore[union-attr]
        return [f"{obj.name!r} (its mesh no longer has the file's vertices)"]
    to_blender = basis_ctx.conversion.positions
    base = np.asarray(to_blender(basis_mesh.positions), dtype=np.float64)
    size = float(np.max(np.ptp(base, axis=0))) or 1.0
    ensure_basis(obj, basis_mesh.name or "Basis")
    blocks = obj.data.shape_keys  # type: ignore[union-attr]
    assert blocks is not None
    added: list[str] = []
    same: list[str] = []
    for index, (target, ctx) in enumerate(group[1:], start=1):
        positions = np.asarray(to_blender(target.positions), dtype=np.float64)
        name = _key_name(target, ctx, basis_ctx, index)
        if np.allclose(positions, base, rtol=0.0, atol=1e-6 * size):
            same.append(name)
            continue
        added.append(add_shape_key(obj, unique_block_name(blocks, name), positions).name)
    note = f"{len(added)} mesh(es) of {len(base)} vertices as shape keys of {obj.name!r}"
    if same:
        note += f"; equal to the Basis, no key: {', '.join(same)}"
    basis_ctx.result.notes.append(note)
    if basis_ctx.options.morphs.keep_targets:
        return []
    stayed: list[str] = []
    for target, ctx in group[1:]:
        other = ctx.mesh_objects.get(target)
        if other is None or other is obj:
            continue
        if other.children:
            stayed.append(f"{other.name!r} (has child objects)")
            continue
        ctx.forget(other)
        data = other.data
        bpy.data.objects.remove(other, do_unlink=True)
        if isinstance(data, bpy.types.Mesh) and data.users == 0:
            bpy.data.meshes.remove(data)
    return stayed
