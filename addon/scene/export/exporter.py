"""The export orchestrator: Blender scene -> document -> file.

Objects become frames (meshes inside their object's frame, bones as frames under their
armature's), a plain root mesh at the identity becomes a top-level Mesh (as it was read),
an armature at the identity named like the file leaves its bones at top level (the importer
adds it, named after the file); of another name it is an identity frame of that name, which
the importer takes for the armature. Then animation, morph and cloth data, each named in a
warning when .X cannot hold it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Generator
from dataclasses import dataclass, field

import bpy
import numpy as np

from ...xfile.document import Ragged, XDocument, XObject
from ...xfile.writer import objects as xo
from ...xfile.writer import writable_target, write_file
from ..cloth import override as cloth_override
from ..imp.progress import Progress
from ..rig.armature import read_matrix
from ..rig.rig_math import safe_inverse4
from .animation_export import (
    Track,
    action_slots,
    animation_sets,
    armature_tracks,
    fcurves_of,
    keyed_bones,
    object_track,
)
from .bake_export import is_bake_modifier, pc2_bake, pc2_morph
from .cloth_export import cloth_objects, springs_marked
from .legacy import MAX_WEIGHTS, triangulate
from .materials_export import MaterialTable
from .mesh_arrays import helper_thread, read_mesh
from .mesh_export import build_mesh_object
from .morph_export import mesh_has_morphs, morph_data
from .plan.key_grid import FINE_TICKS
from .plan.names import NameTable
from .plan.options import ExportOptions, ExportResult
from .rig_export import bone_locals, bone_world, skin_objects
from .space import FileSpace
from .texture_files import TextureFiles

_SUPPORTED = ("MESH", "EMPTY", "ARMATURE")


@dataclass(eq=False)
class _State:
    options: ExportOptions
    space: FileSpace
    result: ExportResult
    materials: MaterialTable
    names: NameTable = field(default_factory=NameTable)
    chosen: set[int] = field(default_factory=set)
    frame_names: dict[int, str] = field(default_factory=dict)  # object pointer -> frame
    bone_names: dict[int, dict[str, str]] = field(default_factory=dict)  # armature -> bones
    targets: list[XObject] = field(default_factory=list)
    morph_sets: list[tuple[str, list[tuple[int, str]], bool]] = field(default_factory=list)
    progress: Progress | None = None
    stem: str = ""  # the file's name without its extension
    # chosen objects by the pointer of their exported parent (0: a root), in scene order
    children: dict[int, list[bpy.types.Object]] = field(default_factory=dict)

    def warn(self, text: str) -> None:
        self.result.warnings.append(text)


def _chosen_objects(context: bpy.types.Context, options: ExportOptions) -> list[bpy.types.Object]:
    scene = context.scene
    assert scene is not None
    out = []
    for obj in scene.objects:
        if options.use_selection and not obj.select_get():
            continue
        if options.use_visible and not obj.visible_get():
            continue
        out.append(obj)
    return out


def _exported_parent(obj: bpy.types.Object, st: _State) -> bpy.types.Object | None:
    parent = obj.parent
    while parent is not None and parent.as_pointer() not in st.chosen:
        parent = parent.parent
    return parent


def _parent_world(obj: bpy.types.Object, parent: bpy.types.Object | None) -> np.ndarray:
    if parent is None:
        return np.eye(4)
    if obj.parent is parent and obj.parent_type == "BONE" and obj.parent_bone:
        return bone_world(parent, obj.parent_bone)
    return read_matrix(parent.matrix_world)


def _local(obj: bpy.types.Object, st: _State) -> np.ndarray:
    parent = _exported_parent(obj, st)
    world = read_matrix(obj.matrix_world)
    # a parent scaled to zero has no inverse: the pseudo-inverse; values that overflow here
    # are written as D3DX writes them, and said (``non_finite_warnings``)
    with np.errstate(over="ignore", invalid="ignore"):
        return st.space.matrix(safe_inverse4(_parent_world(obj, parent)) @ world)


def _baked(obj: bpy.types.Object, st: _State) -> bool:
    """A .pc2 bake plays the mesh: it is written as a morph set, without its skin."""
    return st.options.use_morphs and obj.type == "MESH" and pc2_bake(obj) is not None


def _frame_name(obj: bpy.types.Object, st: _State) -> str:
    wanted = str(obj.get("xof_frame", obj.name))
    if _baked(obj, st) and obj.parent is not None and obj.parent.type == "ARMATURE":
        wanted = obj.name  # its file frame is a bone's; the bake gets a frame of its own
    name = st.names.get("frame", f"obj:{obj.name}", wanted)
    st.frame_names[obj.as_pointer()] = name
    return name


def _mesh_source(obj: bpy.types.Object, st: _State) -> tuple[bpy.types.Mesh, bool]:
    """The mesh to write and whether modifiers changed it (then per-vertex data cannot follow)."""
    mesh = obj.data
    assert isinstance(mesh, bpy.types.Mesh)
    others = [m for m in obj.modifiers if m.type != "ARMATURE" and m.show_viewport
              and not is_bake_modifier(m) and not cloth_override.is_ours(m)]  # fmt: skip
    if not others:
        return mesh, False
    if not st.options.apply_modifiers:
        st.warn(f"{obj.name}: modifiers not applied: {', '.join(m.name for m in others)}")
        return mesh, False
    armatures = [m for m in obj.modifiers if m.type == "ARMATURE" and m.show_viewport]
    for m in armatures:
        m.show_viewport = False
    try:
        depsgraph = bpy.context.evaluated_depsgraph_get()
        evaluated = obj.evaluated_get(depsgraph)
        baked = bpy.data.meshes.new_from_object(evaluated, preserve_all_data_layers=True,
                                                depsgraph=depsgraph)  # fmt: skip
    finally:
        for m in armatures:
            m.show_viewport = True
    return baked, len(baked.vertices) != len(mesh.vertices)


def _mesh(obj: bpy.types.Object, st: _State) -> XObject:
    opts = st.options
    mesh, changed = _mesh_source(obj, st)
    with contextlib.ExitStack() as stack:
        if mesh is not obj.data:  # after the helper thread is done with the arrays
            stack.callback(bpy.data.meshes.remove, mesh)
        pool = stack.enter_context(helper_thread(len(mesh.loops)))
        arrays = read_mesh(mesh, opts.use_normals, opts.use_uvs, opts.use_colors, pool)
        if opts.legacy:  # what Legacy means: no warning for it
            arrays, _ = triangulate(arrays)
        materials = None
        if opts.use_materials and len(mesh.materials):
            materials = [st.materials.entry(m) for m in mesh.materials]
        key = mesh.shape_keys
        wanted = key.reference_key.name if key is not None and opts.use_morphs else None
        wanted = wanted or str(mesh.get("xof_name", obj.data.name))  # type: ignore[union-attr]
        name = st.names.get("mesh", f"mesh:{obj.name}", wanted)
        built = build_mesh_object(name, arrays, st.space, materials, pool)
        loose = arrays.loose_edges()
        if opts.use_cloth and len(loose) and not changed:
            loose = loose[~springs_marked(mesh)[loose]]  # springs that are no face's edge
        if len(loose):
            st.warn(f"{obj.name}: {len(loose)} loose edge(s) cannot be written")
    st.result.warnings.extend(built.warnings)
    st.result.meshes += 1
    st.result.vertices += len(built.vmap.source)
    if changed:
        st.warn(f"{obj.name}: modifiers changed the vertex count: skin, cloth and morphs dropped")
        return built.obj
    arm = next((m.object for m in _armature_modifiers(obj) if m.object), None)
    baked = _baked(obj, st)
    if baked and opts.use_skin and arm is not None:
        st.warn(f"{obj.name}: baked: written as a morph set of the bake, without its skin")
    if opts.use_skin and arm is not None and arm.as_pointer() in st.chosen and not baked:
        bones = st.bone_names.setdefault(arm.as_pointer(), _bone_names(arm, st))
        skin = skin_objects(
            obj, arm, bones, built.vmap, built.file_corners, built.sizes, st.space,
            st.result.warnings, MAX_WEIGHTS if opts.legacy else 0, opts.legacy,
        )  # fmt: skip
        built.obj.children.extend(skin)
    if opts.use_cloth:
        cloth = cloth_objects(obj, built.vmap, st.result.warnings)
        if cloth and opts.legacy:
            st.warn(f"{obj.name}: Legacy: cloth data not written (no standard template)")
        elif cloth:
            built.obj.children.extend(cloth)
    if opts.use_morphs and opts.legacy:
        if mesh_has_morphs(obj):
            st.warn(f"{obj.name}: Legacy: morph sets not written (no standard template)")
    elif opts.use_morphs:
        scene = bpy.context.scene
        assert scene is not None
        fps = scene.render.fps / (scene.render.fps_base or 1.0)
        step = opts.bake_step
        if baked:
            targets, sets = pc2_morph(obj, built, st.names, st.space, fps, scene.frame_start,
                                      step, st.result.warnings)  # fmt: skip
        else:
            targets, sets = morph_data(obj, built, st.names, st.space, fps, scene.frame_start,
                                       st.result.warnings, step)  # fmt: skip
        st.targets += targets
        st.morph_sets += sets
    return built.obj


def _armature_modifiers(obj: bpy.types.Object) -> list[bpy.types.ArmatureModifier]:
    return [m for m in obj.modifiers if isinstance(m, bpy.types.ArmatureModifier)]


def _bone_names(arm: bpy.types.Object, st: _State) -> dict[str, str]:
    data = arm.data
    assert isinstance(data, bpy.types.Armature)
    return {b.name: st.names.get("frame", f"bone:{arm.name}:{b.name}", b.name) for b in data.bones}


def _children(obj: bpy.types.Object, st: _State) -> list[bpy.types.Object]:
    return st.children.get(obj.as_pointer(), [])


def _armature_frames(arm: bpy.types.Object, st: _State) -> _Steps:
    """The bones' frames, each child object's frames in its bone's (a generator of
    :func:`_emit_steps`: it yields a child object and is sent back its frames)."""
    data = arm.data
    assert isinstance(data, bpy.types.Armature)
    names = st.bone_names.setdefault(arm.as_pointer(), _bone_names(arm, st))
    keyed = keyed_bones(arm) if st.options.use_animation else set()
    locals_ = bone_locals(arm, st.space, keyed)
    frames: dict[str, XObject] = {}
    roots: list[XObject] = []
    for bone in data.bones:  # parents come before children
        frame = xo.frame(names[bone.name], locals_[bone.name])
        frames[bone.name] = frame
        if bone.parent is not None:
            frames[bone.parent.name].children.append(frame)
        else:
            roots.append(frame)
    st.result.bones += len(data.bones)
    by_file_name = {file: bone for bone, file in names.items()}
    for child in _children(arm, st):
        home = _bone_frame_of_skin(child, arm, by_file_name, st)
        if home is not None:  # the skin sat in a bone's frame: put it back there
            if st.progress is not None:
                st.progress.step(child.name)
            frames[home].children.append(_mesh(child, st))
            continue
        owner = child.parent_bone if child.parent is arm and child.parent_type == "BONE" else ""
        target = frames.get(owner) if owner else None
        emitted = yield child
        (target.children if target is not None else roots).extend(emitted)
    return roots


def _bone_frame_of_skin(
    obj: bpy.types.Object, arm: bpy.types.Object, bones: dict[str, str], st: _State
) -> str | None:
    """The bone whose frame held this skinned mesh in the file it came from, if any.

    The importer hangs a skin on the armature and remembers its frame (``xof_frame``); when
    that frame is one of the skeleton's bones, the Mesh goes back inside it (a skin's own
    frame matrix means nothing to D3D or to the importer, only its offsets do).
    """
    frame = obj.get("xof_frame")
    if obj.type != "MESH" or frame is None or obj.parent is not arm or obj.parent_type != "OBJECT":
        return None
    skinned = any(m.object is arm for m in _armature_modifiers(obj))
    if not skinned or not st.options.use_skin or _children(obj, st) or _baked(obj, st):
        return None
    return bones.get(str(frame))


#: a step of the export of one object: it yields a child object and is sent that child's frames
_Steps = Generator[bpy.types.Object, list[XObject], list[XObject]]


def _emit(obj: bpy.types.Object, st: _State) -> list[XObject]:
    """The frames (or top-level mesh) one object and its children become. A child is the
    same steps pushed on a list, not a recursive call: a chain of thousands of nested
    objects (a rope of empties) takes no Python stack per level."""
    open_steps = [_emit_steps(obj, st)]
    sent: list[XObject] | None = None
    while True:
        try:
            child = open_steps[-1].send(sent)  # type: ignore[arg-type]
        except StopIteration as done:
            open_steps.pop()
            if not open_steps:
                return done.value
            sent = done.value
            continue
        open_steps.append(_emit_steps(child, st))
        sent = None


def _emit_steps(obj: bpy.types.Object, st: _State) -> _Steps:
    """:func:`_emit` for one object, its children's frames asked for by ``yield child``."""
    if st.progress is not None:
        st.progress.step(obj.name)
    local = _local(obj, st)
    if obj.type == "ARMATURE":
        inner = yield from _armature_frames(obj, st)
        if obj.parent is None and np.allclose(local, np.eye(4), atol=1e-9):
            if obj.name == st.stem:  # the importer names the armature after the file
                return inner
            st.result.frames += 1  # an identity frame of its name: the importer's armature
            return [xo.frame(_frame_name(obj, st), np.eye(4), inner)]
        st.result.frames += 1
        return [xo.frame(_frame_name(obj, st), local, inner)]
    if obj.type not in _SUPPORTED:
        st.warn(f"{obj.name}: a {obj.type.lower()} cannot be written; kept as an empty frame")
    if obj.constraints:
        st.warn(f"{obj.name}: constraints are not written (the current transform is)")
    kids: list[XObject] = []
    for child in _children(obj, st):
        kids += yield child
    if obj.type == "MESH":
        plain = obj.get("xof_frame") is None and obj.parent is None and not kids
        if plain and np.allclose(local, np.eye(4), atol=1e-9):
            return [_mesh(obj, st)]
        name = _frame_name(obj, st)  # before its mesh's: the frame keeps the name if one must go
        st.result.frames += 1
        return [xo.frame(name, local, [_mesh(obj, st), *kids])]
    st.result.frames += 1
    return [xo.frame(_frame_name(obj, st), local, kids)]


def _animation_sets(st: _State, objects: list[bpy.types.Object]) -> list[XObject]:
    scene = bpy.context.scene
    assert scene is not None
    fps = scene.render.fps / (scene.render.fps_base or 1.0)
    sets: dict[str, list[Track]] = {}
    for obj in objects:
        for action, slot in action_slots(obj):
            curves = fcurves_of(action, slot)
            if obj.type == "ARMATURE":
                names = st.bone_names.get(obj.as_pointer(), {})
                tracks = armature_tracks(obj, curves, names, st.space)
                sets.setdefault(action.name, []).extend(tracks)
            frame = st.frame_names.get(obj.as_pointer())
            if frame is not None:
                track = object_track(obj, curves, frame, st.space)
                if track is not None:
                    sets.setdefault(action.name, []).append(track)
    chosen = {name: tracks for name, tracks in sets.items() if tracks}
    written, tps = animation_sets(chosen, fps, st.options.ticks_per_second, st.options.legacy)
    st.result.ticks_per_second = tps
    return [xo.animation_set(st.names.get("set", name), anims) for name, anims in written]


def build_document(
    context: bpy.types.Context, options: ExportOptions, folder: str, stem: str = ""
) -> tuple[object, ExportResult]:
    """The document for the scene (and the result so far); ``stem``: the file's name
    without its extension (an armature of another name gets a frame of its own)."""
    result = ExportResult()
    view_layer = context.view_layer
    if view_layer is not None:
        view_layer.update()  # matrix_world is stale until the depsgraph runs (e.g. after import)
    st = _State(
        options,
        FileSpace(options.conversion(), options.float_bits),
        result,
        MaterialTable(NameTable(options.legacy), TextureFiles(folder, options.path_mode),
                      inline=options.legacy),
        NameTable(options.legacy),
    )  # fmt: skip
    st.materials.names = st.names
    st.stem = stem
    objects = _chosen_objects(context, options)
    st.chosen = {o.as_pointer() for o in objects}
    for obj in objects:
        parent = _exported_parent(obj, st)
        st.children.setdefault(parent.as_pointer() if parent is not None else 0, []).append(obj)
    st.progress = Progress(len(objects) + 2, "xof export")
    try:
        roots = st.children.get(0, [])
        body: list[XObject] = [f for o in roots for f in _emit(o, st)]
        sets = _animation_sets(st, objects) if options.use_animation else []
        st.progress.step("animation")
    finally:
        st.progress.end()
    top: list[XObject] = []
    if sets and (not options.legacy or result.ticks_per_second != FINE_TICKS):
        top.append(xo.ticks_per_second(result.ticks_per_second))  # 0302 readers assume 4800
    top += st.materials.objects + body + st.targets + sets
    loop = any(s[2] for s in st.morph_sets)
    top += [xo.morph_set(st.names.get("morphset", n), keys, loop if loop else None)
            for n, keys, _ in st.morph_sets]  # fmt: skip
    if not body and not sets:
        result.warnings.append(
            "nothing to export: no mesh, empty or armature "
            + ("is selected" if options.use_selection else "in the scene")
            + "; the file holds only the header"
        )
    doc = xo.document(top)
    result.warnings += non_finite_warnings(doc, options.float_bits)
    if options.legacy:
        doc.version = "0302"
    if loop:
        xo.use_morph_loop_variant(doc)
    result.animation_sets = len(sets)
    result.copied = st.materials.files.copied
    result.warnings += st.materials.files.warnings
    result.morph_sets = len(st.morph_sets)
    return doc, result


def non_finite_warnings(doc: XDocument, float_bits: int) -> list[str]:
    """One warning per object holding NaN or infinite values (or, in a 32-bit file, values
    past float32's range, which become infinite): the writer spells them as D3DX does
    (``1.#QNAN0``, ``1.#INF00``), and many readers refuse them or draw nothing."""
    limit = float(np.finfo(np.float32).max) if float_bits == 32 else np.inf
    out: list[str] = []
    for obj in doc.walk():
        count = 0
        values: list[object] = [obj.members]
        while values:
            value = values.pop()
            if isinstance(value, dict):
                values.extend(value.values())
            elif isinstance(value, (list, tuple)):
                values.extend(value)
            elif isinstance(value, Ragged):
                values.append(value.flat)
            elif isinstance(value, (np.ndarray, float, np.floating)):
                arr = np.asarray(value)
                if arr.dtype.kind == "f":
                    with np.errstate(invalid="ignore"):
                        count += int(np.count_nonzero(~(np.abs(arr) <= limit)))
        if count:
            name = f" {obj.name!r}" if obj.name else ""
            out.append(
                f"{obj.template}{name}: {count} value(s) not finite (NaN or infinite"
                f"{', or past 32-bit floats' if float_bits == 32 else ''}), written as "
                "1.#QNAN0 / 1.#INF00 as D3DX does: many readers refuse them"
            )
    return out


def export_scene(
    filepath: str, options: ExportOptions | None = None, context: bpy.types.Context | None = None
) -> ExportResult:
    """Write the scene (as the options choose) to ``filepath``."""
    options = options or ExportOptions()
    context = context or bpy.context
    folder = os.path.dirname(os.path.abspath(filepath))
    writable_target(filepath)  # a read-only file is refused before the scene is read
    stem = os.path.splitext(os.path.basename(filepath))[0]
    doc, result = build_document(context, options, folder, stem)
    result.filepath = filepath
    result.size = write_file(filepath, doc, options.format, options.float_bits,  # type: ignore[arg-type]
                             level=options.compress_level)  # fmt: skip
    return result
