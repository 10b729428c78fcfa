"""What the import's steps share: the result, the build context and the step type.

The options are in :mod:`.options` (re-exported here).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import bpy

from ...xfile.views.model import FrameData, MeshData, SceneData
from ..rig.armature import Rig
from .convert import Conversion
from .options import ImportOptions

__all__ = ["BuildContext", "BuildStep", "ImportOptions", "ImportResult"]


@dataclass(eq=False)
class ImportResult:
    files: list[str] = field(default_factory=list)
    objects: list[bpy.types.Object] = field(default_factory=list)
    meshes: list[bpy.types.Mesh] = field(default_factory=list)
    materials: list[bpy.types.Material] = field(default_factory=list)
    images: list[bpy.types.Image] = field(default_factory=list)
    roots: list[bpy.types.Object] = field(default_factory=list)
    vertex_count: int = 0
    face_count: int = 0
    warnings: list[str] = field(default_factory=list)
    # uninterpreted templates and where kept, counted over every file: "Name xN (where)"
    kept_extras: dict[tuple[str, str], int] = field(default_factory=dict)
    # facts for the report (names' encoding, the tick rate chosen, sets played together...)
    notes: list[str] = field(default_factory=list)
    created: list[bpy.types.ID] = field(default_factory=list)  # anything else steps made

    @property
    def extras(self) -> list[str]:
        """Each uninterpreted template once, however many files held it."""
        return [f"{name} x{count} ({where})" for (name, where), count in self.kept_extras.items()]

    def keep_extra(self, template: str, count: int, where: str) -> None:
        key = (template, where)
        self.kept_extras[key] = self.kept_extras.get(key, 0) + count

    def summary(self) -> str:
        """The one report line."""
        files = f"{len(self.files)} files: " if len(self.files) > 1 else ""
        text = (
            f"Imported {files}{len(self.objects)} objects, {len(self.meshes)} meshes, "
            f"{self.vertex_count} vertices, {len(self.materials)} materials"
        )
        if self.notes:
            text += "; " + "; ".join(self.notes)
        if self.extras:
            text += f"; kept uninterpreted: {', '.join(self.extras)}"
        if self.warnings:
            text += f"; {len(self.warnings)} warnings (first: {self.warnings[0]})"
        return text


@dataclass(eq=False)
class BuildContext:
    """What a build step gets: the data, the options and what has been built so far."""

    scene: SceneData
    options: ImportOptions
    conversion: Conversion
    collection: bpy.types.Collection
    result: ImportResult
    filepath: str | None = None
    frame_objects: dict[FrameData, bpy.types.Object] = field(default_factory=dict)
    mesh_objects: dict[MeshData, bpy.types.Object] = field(default_factory=dict)
    roots: list[bpy.types.Object] = field(default_factory=list)  # this file's, in the result too
    blender_scene: bpy.types.Scene | None = None
    rig: Rig | None = None  # set by the rig step; None before it or without bones
    # with several files: where the morph step leaves this file's facial targets, to be
    # grouped with the other files' once all are built (None: group them now)
    targets_later: list[BuildContext] | None = None

    def add_root(self, obj: bpy.types.Object) -> None:
        """A new top-level object of this file: in the result's objects and roots."""
        self.result.objects.append(obj)
        self.result.roots.append(obj)
        self.roots.append(obj)

    def forget(self, *objects: bpy.types.Object) -> None:
        """Drop ``objects`` (and their meshes) from every list and map of the build; a step
        calls this before it removes them from ``bpy.data``."""
        gone = {obj.as_pointer() for obj in objects}
        meshes = {obj.data.as_pointer() for obj in objects if obj.data is not None}
        for items in (self.result.objects, self.result.roots, self.roots):
            items[:] = [obj for obj in items if obj.as_pointer() not in gone]
        for mesh in [m for m in self.result.meshes if m.as_pointer() in meshes]:
            self.result.vertex_count -= len(mesh.vertices)  # the summary counts what stays
            self.result.face_count -= len(mesh.polygons)
        self.result.meshes[:] = [m for m in self.result.meshes if m.as_pointer() not in meshes]
        for data in [m for m, o in self.mesh_objects.items() if o.as_pointer() in gone]:
            del self.mesh_objects[data]
        for frame in [f for f, o in self.frame_objects.items() if o.as_pointer() in gone]:
            del self.frame_objects[frame]

    def warn(self, message: str) -> None:
        self.result.warnings.append(message)

    def track(self, idb: bpy.types.ID) -> None:
        """Record a datablock a step created (for the report; rollback finds it anyway)."""
        self.result.created.append(idb)


@dataclass(frozen=True)
class BuildStep:
    """One stage of the import after meshes, materials and frames exist (``importer.STEPS``
    lists them in the order they run)."""

    name: str  # what the progress line shows
    run: Callable[[BuildContext], None]
