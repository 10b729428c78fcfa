"""The import orchestrator: file -> document -> SceneData -> Blender data, all or nothing.

``import_files`` reads each file and calls ``build_scene``; ``build_scene`` builds materials,
meshes and the frame hierarchy, then runs the build steps (see :mod:`.steps`) that other
modules contribute (skinning, animation, morphs, cloth, extras). Any exception removes every
datablock created since the call started, so ``bpy.data`` is left as it was.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import bpy

from ..xfile import XDocument, read
from ..xfile.views.model import FrameData, MeshData, SceneData
from . import rollback
from .convert import Conversion
from .frames import HierarchyBuilder
from .materials import MaterialCache
from .meshes import MeshBuild, MeshOptions, build_mesh
from .progress import Progress
from .steps import BuildStep, discover_steps
from .textures import TextureLoader


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
    from ..xfile.views import scene_data

    return scene_data(doc)


def build_scene(
    scene: SceneData,
    options: ImportOptions | None = None,
    collection: bpy.types.Collection | None = None,
    *,
    filepath: str | None = None,
    document: XDocument | None = None,
    result: ImportResult | None = None,
    steps: list[BuildStep] | None = None,
    progress: Progress | None = None,
) -> BuildContext:
    """Build ``scene`` into ``collection`` (default: the context's). Not transactional alone:
    callers wanting rollback use :func:`import_files` or wrap it in :func:`transaction`."""
    options = options or ImportOptions()
    result = result if result is not None else ImportResult()
    if collection is None:
        scene_now = bpy.context.scene
        collection = bpy.context.collection or (scene_now.collection if scene_now else None)
        if collection is None:
            raise RuntimeError("no collection to import into")
    conv = options.conversion()
    ctx = BuildContext(
        scene, options, conv, collection, result, filepath, document,
        blender_scene=bpy.context.scene,
    )  # fmt: skip
    result.warnings.extend(scene.warnings)
    folder = os.path.dirname(os.path.abspath(filepath)) if filepath else None
    textures = TextureLoader(folder)
    materials = MaterialCache(textures)
    mesh_options = options.mesh_options()

    def mesh_datablock(mesh: MeshData, name: str) -> bpy.types.Mesh:
        build = build_mesh(mesh, conv, name, mesh_options, materials.get)
        ctx.mesh_builds[mesh] = build
        result.meshes.append(build.mesh)
        result.vertex_count += len(build.mesh.vertices)
        result.face_count += len(build.mesh.polygons)
        result.warnings.extend(mesh.warnings)
        result.warnings.extend(build.warnings)
        if progress is not None:
            progress.step(f"mesh {name}")
        return build.mesh

    builder = HierarchyBuilder(
        conv, collection, mesh_datablock, options.keep_empty_frames, empty_size=conv.scale
    )
    hierarchy = builder.build(scene)
    ctx.frame_objects = hierarchy.frame_objects
    ctx.mesh_objects = hierarchy.mesh_objects
    ctx.roots = hierarchy.roots
    result.objects.extend(hierarchy.objects)
    result.roots.extend(hierarchy.roots)
    result.warnings.extend(hierarchy.warnings)
    result.materials.extend(materials.created)
    result.images.extend(textures.created)
    result.warnings.extend(textures.warnings)
    if bpy.context.view_layer is not None:
        bpy.context.view_layer.update()  # world matrices valid for the steps

    for step in steps if steps is not None else discover_steps():
        step.run(ctx)
        if progress is not None:
            progress.step(step.name)
    return ctx


def import_files(
    paths: Sequence[str | Path],
    options: ImportOptions | None = None,
    collection: bpy.types.Collection | None = None,
) -> ImportResult:
    """Import several files; on any exception everything created is removed and it re-raises.

    Reader errors arrive as :class:`~..xfile.XFileError` (file and place in the message).
    """
    result = ImportResult()
    progress: Progress | None = None
    try:
        with rollback.transaction():
            for path in paths:
                document = read(str(path))
                scene = scene_data_of(document)
                steps = discover_steps()
                total = len(scene.all_meshes()) + len(steps) + 1
                progress = Progress(total, f"xof {Path(path).name}")
                result.files.append(str(path))
                build_scene(
                    scene, options, collection,
                    filepath=str(path), document=document, result=result, steps=steps,
                    progress=progress,
                )  # fmt: skip
                progress.end()
                progress = None
    finally:
        if progress is not None:
            progress.end()
    return result
