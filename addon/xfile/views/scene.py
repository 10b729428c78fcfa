"""``scene_data(doc)``: the whole file as the importer walks it (frames, meshes, animation)."""

from __future__ import annotations

import numpy as np

from ..document import XDocument, XObject, XReference
from ..names import fold
from .animation import animation_set, morph_set
from .cloth import attach_top_level
from .mesh import mesh_data
from .model import FrameData, MaterialData, MeshData, SceneData
from .values import DATA_ERRORS, matrix16, member


class _Builder:
    def __init__(self, doc: XDocument) -> None:
        self.doc = doc
        self.materials: dict[int, MaterialData] = {}
        self.meshes: dict[int, MeshData] = {}
        self.order: list[
            tuple[str, MeshData | XObject]
        ] = []  # meshes and top-level cloth, file order
        self.warnings: list[str] = []
        # the objects themselves (hashed by identity): no int per frame for its id
        self.frames_built: set[XObject] = set()
        self._kinds: dict[str, str] = {}

    def kind(self, template: str) -> str:
        """A template name folded to lower case, one string per name: not one per object
        (held through thousands of nested frames), nor a long name's scratch (``names``)."""
        kind = self._kinds.get(template)
        if kind is None:
            kind = self._kinds[template] = fold(template)
        return kind

    def mesh(self, obj: XObject) -> MeshData | None:
        found = self.meshes.get(id(obj))
        if found is not None:
            return found
        try:
            data = mesh_data(obj, self.materials)
        except DATA_ERRORS as exc:
            self.warnings.append(f"{obj.where}: Mesh {obj.name or ''} ignored: {exc}")
            return None
        self.meshes[id(obj)] = data
        self.order.append(("mesh", data))
        return data

    def frame(self, root: XObject) -> FrameData:
        """A frame and its subtree. A frame already built (reached again through a reference,
        or a reference cycle) is not built twice: that keeps the work linear in the file.
        Nested frames wait on a list, not on Python's stack (chains as deep as the reader
        reads)."""
        self.frames_built.add(root)
        top = FrameData(root.name, np.eye(4), source=root)
        # the open frames, outermost first, each with the rest of its children: the walk of
        # the recursive version, in the same order
        todo = [(root, top, iter(root.children))]
        while todo:
            obj, data, items = todo[-1]
            for item in items:  # obj.objects() inlined: no generator per level
                child = item.target if isinstance(item, XReference) else item
                if child is None:
                    continue
                kind = self.kind(child.template)
                if kind == "frame" and child in self.frames_built:
                    self.warnings.append(f"{obj.where}: Frame {child.name or ''} referenced "
                                         "again: ignored there")  # fmt: skip
                    continue
                if kind == "frametransformmatrix":
                    try:
                        data.matrix = matrix16(member(child, 0, "frameMatrix"))
                    except DATA_ERRORS as exc:
                        self.warnings.append(f"{child.where}: FrameTransformMatrix ignored: {exc}")
                elif kind == "frame":
                    self.frames_built.add(child)
                    sub = FrameData(child.name, np.eye(4), source=child)
                    data.children.append(sub)
                    todo.append((child, sub, iter(child.children)))
                    break
                elif kind == "mesh":
                    mesh = self.mesh(child)
                    if mesh is not None:
                        data.meshes.append(mesh)
                else:
                    data.extras.append(child)
            else:
                todo.pop()
        return top


def scene_data(doc: XDocument) -> SceneData:
    builder = _Builder(doc)
    scene = SceneData(warnings=builder.warnings)
    for obj in doc.top():
        kind = builder.kind(obj.template)
        if kind == "frame" and obj not in builder.frames_built:
            scene.frames.append(builder.frame(obj))
        elif kind == "mesh":
            mesh = builder.mesh(obj)
            if mesh is not None:
                scene.meshes.append(mesh)
        elif kind == "animationset":
            try:
                scene.animation_sets.append(animation_set(obj, builder.warnings))
            except DATA_ERRORS as exc:
                builder.warnings.append(f"{obj.where}: AnimationSet ignored: {exc}")
        elif kind == "animtickspersecond":
            try:
                scene.ticks_per_second = float(member(obj, 0, "AnimTicksPerSecond"))
            except DATA_ERRORS:
                builder.warnings.append(f"{obj.where}: AnimTicksPerSecond without a value")
        elif kind == "morphanimationset":
            try:
                scene.morph_sets.append(morph_set(obj))
            except DATA_ERRORS as exc:
                builder.warnings.append(f"{obj.where}: MorphAnimationSet ignored: {exc}")
        elif kind == "clothmasses":
            builder.order.append(("masses", obj))
        elif kind == "clothsprings":
            builder.order.append(("springs", obj))
        else:
            scene.extras.append(obj)
    attach_top_level(builder.order, builder.warnings)
    return scene
