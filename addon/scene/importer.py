"""The import orchestrator: file -> document -> SceneData -> Blender data, all or nothing.

``import_files`` reads each file and calls ``build_scene``; ``build_scene`` builds materials,
meshes and the frame hierarchy, then runs ``STEPS`` in order: the rig (armature and skins),
animation, morphs, cloth, and last the extras (which see what the others consumed). Any
exception removes every datablock created since the call started, so ``bpy.data`` is left as
it was.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import bpy

from ..xfile import read, scene_of
from ..xfile.errors import printable
from ..xfile.views.materials import material_data
from ..xfile.views.model import MeshData, SceneData
from .anim.step import ANIMATION_STEP
from .cloth.step import CLOTH_STEP
from .imp import rollback
from .imp.context import (
    BuildContext,
    BuildStep,
    ImportOptions,
    ImportResult,
)
from .imp.extras import EXTRAS_STEP
from .imp.finite import finite_matrices
from .imp.frames import HierarchyBuilder
from .imp.materials import MaterialCache
from .imp.meshes import build_mesh, finite_positions
from .imp.progress import Progress
from .imp.textures import TextureLoader
from .morph.step import MORPH_STEP
from .morph.targets import targets_across_files
from .rig.step import RIG_STEP

#: The build steps after meshes, materials and frames, in the order they run.
STEPS: tuple[BuildStep, ...] = (RIG_STEP, ANIMATION_STEP, MORPH_STEP, CLOTH_STEP, EXTRAS_STEP)

__all__ = ["STEPS", "BuildContext", "ImportOptions", "ImportResult", "build_scene", "import_files"]


def build_scene(
    scene: SceneData,
    options: ImportOptions | None = None,
    collection: bpy.types.Collection | None = None,
    *,
    filepath: str | None = None,
    result: ImportResult | None = None,
    steps: Sequence[BuildStep] | None = None,
    progress: Progress | None = None,
    targets_later: list[BuildContext] | None = None,
    images: dict[str, bpy.types.Image] | None = None,
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
        scene, options, conv, collection, result, filepath, blender_scene=bpy.context.scene,
        targets_later=targets_later,
    )  # fmt: skip
    result.warnings.extend(scene.warnings)
    result.warnings.extend(finite_positions(scene, conv.scale))
    result.warnings.extend(finite_matrices(scene))
    folder = os.path.dirname(os.path.abspath(filepath)) if filepath else None
    textures = TextureLoader(folder, options.files.texture_folders, images)
    materials = MaterialCache(textures)
    mesh_options = options.mesh

    def mesh_datablock(mesh: MeshData, name: str) -> bpy.types.Mesh:
        build = build_mesh(mesh, conv, name, mesh_options, materials.get)
        result.meshes.append(build.mesh)
        result.vertex_count += len(build.mesh.vertices)
        result.face_count += len(build.mesh.polygons)
        result.warnings.extend(mesh.warnings)
        result.warnings.extend(build.warnings)
        if progress is not None:
            progress.step(f"mesh {name}")
        return build.mesh

    builder = HierarchyBuilder(
        conv, collection, mesh_datablock, options.mesh.keep_empty_frames, empty_size=conv.scale
    )
    meshes_before = len(result.meshes)
    hierarchy = builder.build(scene)
    ctx.frame_objects = hierarchy.frame_objects
    ctx.mesh_objects = hierarchy.mesh_objects
    ctx.roots = hierarchy.roots
    result.objects.extend(hierarchy.objects)
    result.roots.extend(hierarchy.roots)
    result.warnings.extend(hierarchy.warnings)
    if options.mesh.use_materials:
        first = result.meshes[meshes_before] if len(result.meshes) > meshes_before else None
        _unused_materials(scene, materials, first, result)
    result.materials.extend(materials.created)
    if materials.zero_alpha:
        names = ", ".join(repr(n) for n in materials.zero_alpha[:5])
        more = f" and {len(materials.zero_alpha) - 5} more" if len(materials.zero_alpha) > 5 else ""
        result.notes.append(
            f"{len(materials.zero_alpha)} material(s) with diffuse alpha 0 ({names}{more}) shown "
            "opaque, as D3D draws them without blending; the file's value is kept for export"
        )
    result.images.extend(textures.created)
    result.warnings.extend(textures.warnings)
    if bpy.context.view_layer is not None:
        bpy.context.view_layer.update()  # world matrices valid for the steps

    for step in steps if steps is not None else STEPS:
        step.run(ctx)
        if progress is not None:
            progress.step(step.name)
    return ctx


def _unused_materials(
    scene: SceneData,
    materials: MaterialCache,
    mesh: bpy.types.Mesh | None,
    result: ImportResult,
) -> None:
    """Top-level Materials no mesh uses: built too, as extra slots of the file's first mesh
    (a fake user keeps them when there is none), so nothing the file declares is dropped."""
    first = len(materials.created)
    for obj in (o for o in scene.extras if o.template == "Material"):
        if not materials.built(obj):
            materials.get(material_data(obj, {}))
    extra = materials.created[first:]
    if not extra:
        return
    for mat in extra:
        if mesh is not None:
            mesh.materials.append(mat)
        else:
            mat.use_fake_user = True
    where = f"slots of mesh {mesh.name!r}" if mesh is not None else "kept with a fake user"
    result.notes.append(
        f"{len(extra)} material(s) the file declares but no mesh uses imported ({where}): "
        + ", ".join(m.name for m in extra[:10])
    )


def import_files(
    paths: Sequence[str | bytes | Path],
    options: ImportOptions | None = None,
    collection: bpy.types.Collection | None = None,
) -> ImportResult:
    """Import several files; on any exception everything created is removed and it re-raises.

    Reader errors arrive as :class:`~..xfile.XFileError` (file and place in the message).
    """
    result = ImportResult()
    options = options or ImportOptions()
    progress: Progress | None = None
    # several files' facial targets are grouped together once all are built
    targets: list[BuildContext] | None = [] if len(paths) > 1 else None
    images: dict[str, bpy.types.Image] = {}  # one image for a texture several files use
    try:
        with rollback.transaction():
            for path in paths:
                shown = os.fsdecode(path)  # bytes paths as str (undecodable bytes escaped)
                files = options.files
                document = read(
                    shown, encoding=files.names_encoding, max_inflated=files.max_inflated,
                    max_ratio=files.max_inflate_ratio,
                )  # fmt: skip
                if document.names_encoding != "utf-8":
                    name, encoding = printable(Path(shown).name), document.names_encoding
                    result.notes.append(f"{name}: names read as {encoding}")
                scene = scene_of(document)
                total = len(scene.all_meshes()) + len(STEPS) + 1
                progress = Progress(total, f"xof {printable(Path(shown).name)}")
                result.files.append(shown)
                build_scene(
                    scene, options, collection,
                    filepath=shown, result=result,
                    progress=progress, targets_later=targets, images=images,
                )  # fmt: skip
                progress.end()
                progress = None
            if targets:
                targets_across_files(targets)
    finally:
        if progress is not None:
            progress.end()
    return result
