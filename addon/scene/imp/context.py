"""What the import's steps share: options, the result, the build context and the step type."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import bpy

from ...xfile import XDocument
from ...xfile.views.model import FrameData, MeshData, SceneData
from .convert import Conversion
from .meshes import MeshBuild, MeshOptions


@dataclass
class ImportOptions:
    axis_forward: str = "Z"  # file axis that becomes Blender +Y (D3D: +Z, into the screen)
    axis_up: str = "Y"  # file axis that becomes Blender +Z
    global_scale: float = 1.0
    use_custom_normals: bool = True
    shading: str = "SMOOTH"  # without (or ignoring) MeshNormals: "SMOOTH" or "FLAT"
    use_uvs: bool = True
    use_colors: bool = True
    use_materials: bool = True
    keep_empty_frames: bool = True
    extra: dict[str, Any] = field(default_factory=dict)  # options of build steps, by their name

    def conversion(self) -> Conversion:
        return Conversion.from_options(self.axis_forward, self.axis_up, self.global_scale)

    def mesh_options(self) -> MeshOptions:
        return MeshOptions(
            use_custom_normals=self.use_custom_normals,
            shading=self.shading,
            use_uvs=self.use_uvs,
            use_colors=self.use_colors,
            use_materials=self.use_materials,
        )


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
    extras: list[str] = field(default_factory=list)  # uninterpreted templates and where kept
    created: list[bpy.types.ID] = field(default_factory=list)  # anything else steps made

    def summary(self) -> str:
        """The one report line."""
        files = f"{len(self.files)} files: " if len(self.files) > 1 else ""
        text = (
            f"Imported {files}{len(self.objects)} objects, {len(self.meshes)} meshes, "
            f"{self.vertex_count} vertices, {len(self.materials)} materials"
        )
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
    document: XDocument | None = None
    frame_objects: dict[FrameData, bpy.types.Object] = field(default_factory=dict)
    mesh_objects: dict[MeshData, bpy.types.Object] = field(default_factory=dict)
    mesh_builds: dict[MeshData, MeshBuild] = field(default_factory=dict)
    roots: list[bpy.types.Object] = field(default_factory=list)
    blender_scene: bpy.types.Scene | None = None

    def warn(self, message: str) -> None:
        self.result.warnings.append(message)

    def track(self, idb: bpy.types.ID) -> None:
        """Record a datablock a step created (for the report; rollback finds it anyway)."""
        self.result.created.append(idb)


def scene_data_of(doc: XDocument) -> SceneData:
    """The typed views of a document (the reader's ``scene_data``)."""
    from ...xfile.views import scene_data

    return scene_data(doc)



@dataclass(frozen=True)
class BuildStep:
    """One stage of the import after meshes, materials and frames exist."""

    name: str
    order: float
    run: Callable[[BuildContext], None]
