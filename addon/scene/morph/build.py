"""MorphAnimationSets as shape keys: one object per group of sets, one action per set.

Called by the importer after the meshes are built (``build_morphs``); it can also build its
own objects when given none, which is how it runs on its own and in tests.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import bpy
import numpy as np

from ...xfile.views.model import MeshData, SceneData
from ..anim.timing import MAX_FRAME
from . import actions as morph_actions
from .plan import MorphGroup, meshes_by_name, plan_morphs, set_curves
from .shape_keys import add_shape_key, ensure_basis, file_to_blender_positions


@dataclass
class MorphOptions:
    keep_targets: bool = False  # keep target meshes as objects too (they are consumed otherwise)
    loop_all: bool = False  # cycle every set, not only those whose file says Loop = 1
    frame_start: float | None = None  # frame of 0 ms; None: the scene's start frame
    # File positions -> Blender positions; the importer passes its own (axes, scale) so shape
    # keys match the meshes it built. Default: the plain Y/Z swap.
    to_blender: Callable[[np.ndarray], np.ndarray] = file_to_blender_positions
    # the scene's frame range becomes the playing sets' (as skeletal sets set it); else the
    # end only grows to fit them
    set_scene_range: bool = False


@dataclass(eq=False)
class MorphResult:
    objects: list[bpy.types.Object] = field(default_factory=list)  # one per group of sets
    actions: list[bpy.types.Action] = field(default_factory=list)  # one per set, file order
    removed: list[str] = field(default_factory=list)  # names of consumed target objects
    warnings: list[str] = field(default_factory=list)


def scene_fps(scene: bpy.types.Scene) -> float:
    return float(scene.render.fps) / float(scene.render.fps_base)


def build_morphs(
    data: SceneData,
    scene: bpy.types.Scene,
    collection: bpy.types.Collection | None = None,
    built: Mapping[MeshData, bpy.types.Object] | None = None,
    options: MorphOptions | None = None,
    on_remove: Callable[[bpy.types.Object], None] | None = None,
) -> MorphResult:
    """Turn ``data.morph_sets`` into shape keys and actions.

    ``built`` maps the importer's meshes to the objects it made: the Basis mesh's object gets
    the shape keys (keeping its materials and placement) and target objects are removed unless
    ``options.keep_targets`` (``on_remove`` is called first, so a caller can forget them).
    Meshes without an object get a plain one in ``collection``.
    """
    options = options or MorphOptions()
    built = built or {}
    result = MorphResult()
    if not data.morph_sets:
        return result
    collection = collection or scene.collection
    meshes = meshes_by_name(data)
    plan = plan_morphs(data.morph_sets, meshes)
    result.warnings.extend(plan.warnings)
    fps = scene_fps(scene)
    start = float(scene.frame_start) if options.frame_start is None else options.frame_start
    consumed: list[bpy.types.Object] = []
    ends: list[float] = []  # last frames of the sets that play
    for group in plan.groups:
        obj = _basis_object(built, meshes[group.basis], group.basis, collection, result, options)
        _add_group_keys(obj, group, meshes, options.to_blender)
        key = obj.data.shape_keys  # type: ignore[union-attr]
        assert key is not None  # _add_group_keys made the Basis
        key.name = f"{obj.name} Morphs"
        for index, morph_set in enumerate(group.sets):
            curves = set_curves(morph_set, group.targets, fps, start, options.loop_all)
            action, slot = morph_actions.new_morph_action(key, curves)
            result.actions.append(action)
            if index == 0:
                morph_actions.make_active(key, action, slot)
                ends.append(curves.end_frame)
                if curves.end_frame > scene.frame_end:
                    scene.frame_end = int(np.ceil(min(curves.end_frame, MAX_FRAME)))
            else:
                until = float(scene.frame_end) if curves.loop else None
                morph_actions.push_to_nla(key, action, slot, curves.name, repeat_until=until)
        result.objects.append(obj)
        for target in group.targets:
            other = built.get(meshes[target])
            if other is not None and other is not obj and other not in consumed:
                consumed.append(other)
    if options.set_scene_range and ends:
        scene.frame_start = int(np.floor(start))
        last = int(np.ceil(min(max(ends), MAX_FRAME)))
        scene.frame_end = max(last, scene.frame_start + 1)
    if not options.keep_targets:
        for other in consumed:
            if other in result.objects:
                continue
            result.removed.append(other.name)
            if on_remove is not None:
                on_remove(other)
            _remove_object(other)
    return result


def plain_mesh_object(
    mesh: MeshData,
    name: str,
    collection: bpy.types.Collection,
    to_blender: Callable[[np.ndarray], np.ndarray] = file_to_blender_positions,
) -> bpy.types.Object:
    """A bare object for a mesh no importer built: positions mirrored, winding reversed."""
    positions = to_blender(mesh.positions)
    faces: list[list[int]] = []
    at = 0
    for size in mesh.face_sizes.tolist():
        faces.append([int(i) for i in reversed(mesh.corners[at : at + size].tolist())])
        at += size
    data = bpy.data.meshes.new(name)
    data.from_pydata(positions.tolist(), [], faces)
    data.update()
    obj = bpy.data.objects.new(name, data)
    collection.objects.link(obj)
    return obj


def _basis_object(
    built: Mapping[MeshData, bpy.types.Object],
    mesh: MeshData,
    name: str,
    collection: bpy.types.Collection,
    result: MorphResult,
    options: MorphOptions,
) -> bpy.types.Object:
    """The importer's object for the Basis mesh when its vertices are the file's, else a new one.

    Shape keys index file vertices; an object whose vertex count changed on import (split
    normals or UV seams) cannot carry them.
    """
    obj = built.get(mesh)
    if obj is None:
        return plain_mesh_object(mesh, name, collection, options.to_blender)
    count = len(obj.data.vertices)  # type: ignore[union-attr]
    if count == len(mesh.positions):
        return obj
    result.warnings.append(
        f"object '{obj.name}' has {count} vertices, mesh '{name}' has {len(mesh.positions)}: "
        "morphs built on a separate object"
    )
    return plain_mesh_object(mesh, name, collection, options.to_blender)


def _add_group_keys(
    obj: bpy.types.Object,
    group: MorphGroup,
    meshes: Mapping[str, MeshData],
    to_blender: Callable[[np.ndarray], np.ndarray],
) -> None:
    """The Basis named after the first mesh (its file positions), one block per target."""
    basis = ensure_basis(obj, group.basis)
    basis.name = group.basis
    basis_positions = np.asarray(to_blender(meshes[group.basis].positions), dtype=np.float32)
    basis.data.foreach_set("co", basis_positions.ravel())
    for target in group.targets:
        add_shape_key(obj, target, to_blender(meshes[target].positions))


def _remove_object(obj: bpy.types.Object) -> None:
    data = obj.data
    bpy.data.objects.remove(obj, do_unlink=True)
    if isinstance(data, bpy.types.Mesh) and data.users == 0:
        bpy.data.meshes.remove(data)
