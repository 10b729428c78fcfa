"""Frames -> a hierarchy of objects whose world matrices equal the file's (converted).

A frame becomes an empty, or the mesh object itself when the frame holds exactly one mesh
(its child frames then become the mesh object's children; a skinned mesh with child frames
keeps an empty, since the rig step moves the skin onto the armature). Meshes inside a frame
with more meshes become child objects with an identity local transform. Parenting keeps
``matrix_parent_inverse`` at identity, so ``world = parent_world @ local`` mirrors the
file's ``local * parent``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import bpy
import numpy as np
from mathutils import Matrix

from ...xfile.views.model import FrameData, MeshData, SceneData, depth_first
from .convert import Conversion

#: relative tolerance for "the matrix survived loc/rot/scale decomposition"
_DECOMPOSE_TOLERANCE = 1e-5


@dataclass(eq=False)
class Hierarchy:
    """What the frame walk created, for the orchestrator and later build steps."""

    objects: list[bpy.types.Object] = field(default_factory=list)  # creation order
    roots: list[bpy.types.Object] = field(default_factory=list)
    frame_objects: dict[FrameData, bpy.types.Object] = field(default_factory=dict)
    mesh_objects: dict[MeshData, bpy.types.Object] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def frames_with_meshes(frames: list[FrameData]) -> set[FrameData]:
    """The frames under ``frames`` that hold a mesh or have one below them: one walk, not one
    per frame (a chain of 5,000 would cost 12.5 million visits)."""
    order = list(depth_first(frames))
    found: set[FrameData] = set()
    for frame in reversed(order):  # children before their parents
        if frame.meshes or any(child in found for child in frame.children):
            found.add(frame)
    return found


def _skinned(mesh: MeshData) -> bool:
    return mesh.skin is not None and bool(mesh.skin.weights)


def _matrix_rows(m: np.ndarray) -> Matrix:
    return Matrix([[float(v) for v in row] for row in m])


class HierarchyBuilder:
    """Creates the objects for frames and meshes and links them to ``collection``."""

    def __init__(
        self,
        conv: Conversion,
        collection: bpy.types.Collection,
        mesh_datablock: Callable[[MeshData, str], bpy.types.Mesh],
        keep_empty_frames: bool = True,
        empty_size: float = 1.0,
    ) -> None:
        self.conv = conv
        self.collection = collection
        self.mesh_datablock = mesh_datablock
        self.keep_empty_frames = keep_empty_frames
        self.empty_size = empty_size
        self.out = Hierarchy()
        self._with_meshes: set[FrameData] = set()

    def build(self, scene: SceneData) -> Hierarchy:
        if not self.keep_empty_frames:
            self._with_meshes = frames_with_meshes(scene.frames)
        for top in scene.frames:
            if not self._keep(top):
                continue
            # parents before children, as a recursive walk would; on a list, not on Python's
            # stack (chains as deep as the reader reads)
            todo: list[tuple[FrameData, bpy.types.Object | None]] = [(top, None)]
            while todo:
                frame, parent = todo.pop()
                obj = self._frame(frame, parent)
                if parent is None:
                    self.out.roots.append(obj)
                todo.extend((c, obj) for c in reversed(frame.children) if self._keep(c))
        for mesh in scene.meshes:
            self.out.roots.append(self._mesh_object(mesh, None, mesh.name or "Mesh"))
        return self.out

    def _new_object(self, name: str, data: bpy.types.ID | None) -> bpy.types.Object:
        obj = bpy.data.objects.new(name, data)
        self.collection.objects.link(obj)
        self.out.objects.append(obj)
        return obj

    def _keep(self, frame: FrameData) -> bool:
        return self.keep_empty_frames or frame in self._with_meshes or bool(frame.extras)

    def _frame(self, frame: FrameData, parent: bpy.types.Object | None) -> bpy.types.Object:
        """The object for ``frame`` (and its meshes), under ``parent``; not its children."""
        name = frame.name or "Frame"
        if len(frame.meshes) == 1 and (not frame.children or not _skinned(frame.meshes[0])):
            mesh = frame.meshes[0]
            obj = self._new_object(name, self.mesh_datablock(mesh, mesh.name or name))
            self.out.mesh_objects[mesh] = obj
        else:
            obj = self._new_object(name, None)
            obj.empty_display_type = "PLAIN_AXES"
            obj.empty_display_size = self.empty_size
        if frame.name is not None:
            obj["xof_frame"] = frame.name
        self.out.frame_objects[frame] = obj
        obj.parent = parent
        self._set_local_matrix(obj, frame.matrix, name)
        if obj.type == "EMPTY":
            for mesh in frame.meshes:
                self._mesh_object(mesh, obj, mesh.name or name)
        return obj

    def _mesh_object(
        self, mesh: MeshData, parent: bpy.types.Object | None, name: str
    ) -> bpy.types.Object:
        obj = self._new_object(name, self.mesh_datablock(mesh, name))
        obj.parent = parent
        self.out.mesh_objects[mesh] = obj
        return obj

    def _set_local_matrix(self, obj: bpy.types.Object, file_matrix: np.ndarray, label: str) -> None:
        m = np.asarray(file_matrix, dtype=np.float64).reshape(4, 4)
        if not np.isfinite(m).all():
            self.out.warnings.append(f"frame {label!r}: non-finite matrix replaced by identity")
            m = np.eye(4)
        target = self.conv.matrix(m)
        obj.matrix_basis = _matrix_rows(target)
        got = np.array(obj.matrix_basis)
        scale = max(1.0, float(np.abs(target).max()))
        if float(np.abs(got - target).max()) > _DECOMPOSE_TOLERANCE * scale:
            self.out.warnings.append(
                f"frame {label!r}: matrix has shear or is singular; imported as the nearest "
                "location/rotation/scale"
            )
