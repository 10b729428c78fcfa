"""Which frames become bones, and each bone's bind and rest matrix (numpy only, no bpy).

Everything here is in Blender's space (column vectors, after the file->Blender conversion)
and relative to the armature object, which sits at the identity.

- ``bind``: the bone's bind matrix, ``X @ inverse(matrixOffset)`` when a SkinWeights names
  the frame (real files store an animated pose in the frame matrices), with ``X`` the stretch
  of that mesh's frame (:mod:`.stretch`: the mesh carries it, so binds are rigid), else the
  parent's bind times the frame's own matrix.
- ``rest``: what Blender can store for a bone (head, tail, roll: no scale): the bind's
  rotation, turned by a signed axis permutation so that +Y (the bone's direction) is the
  bind axis pointing closest to the children. A permutation keeps animated scale exact
  (it stays diagonal), which an arbitrary "point exactly at the child" rotation would not.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from ...xfile.views.model import FrameData, MeshData, SceneData
from .rig_math import closest_rotation, inverse4, safe_inverse4
from .stretch import mesh_stretch


class SpaceConversion(Protocol):
    """What we need of ``convert.Conversion``: the 4x4 file->Blender basis ``C``."""

    @property
    def basis(self) -> np.ndarray: ...


def convert_matrices(conversion: SpaceConversion, m: np.ndarray) -> np.ndarray:
    """File row-vector matrices (..., 4, 4) -> Blender ``C @ M.T @ C^-1``, batched."""
    c = np.asarray(conversion.basis, dtype=np.float64)
    return c @ np.swapaxes(np.asarray(m, dtype=np.float64), -1, -2) @ inverse4(c)


@dataclass(eq=False)
class FrameNode:
    index: int
    name: str | None
    parent: int  # frame index, -1 at top level
    local: np.ndarray  # (4, 4) file row-vector FrameTransformMatrix
    data: FrameData
    children: list[int] = field(default_factory=list)


@dataclass(eq=False)
class BonePlan:
    name: str  # unique bone name (the frame's name when it has one)
    frame: int  # FrameNode index
    parent: int  # bone index, -1 for a root bone
    bind: np.ndarray  # (4, 4) Blender, may have scale
    rest: np.ndarray  # (4, 4) Blender, orthonormal; column 1 is the bone's direction
    length: float
    from_offset: bool  # bind taken from a SkinWeights matrixOffset


@dataclass(eq=False)
class SkeletonPlan:
    frames: list[FrameNode]
    bones: list[BonePlan]
    bone_of_frame: dict[int, int]  # frame index -> bone index
    frame_by_name: dict[str, int]  # first frame with that name
    warnings: list[str] = field(default_factory=list)
    #: the frame that is the armature itself (:func:`armature_frame`), -1 when none
    armature_frame: int = -1

    def bone_named_by_file(self, frame_name: str | None) -> BonePlan | None:
        """The bone for a name used by SkinWeights/Animation, or None."""
        if frame_name is None or frame_name not in self.frame_by_name:
            return None
        b = self.bone_of_frame.get(self.frame_by_name[frame_name])
        return None if b is None else self.bones[b]

    def bind_of_parent(self, bone: BonePlan) -> np.ndarray:
        return np.eye(4) if bone.parent < 0 else self.bones[bone.parent].bind


def flatten_frames(scene: SceneData) -> list[FrameNode]:
    """Every frame, parents before children, in file order."""
    nodes: list[FrameNode] = []
    todo = [(top, -1) for top in reversed(scene.frames)]  # on a list: chains of any depth
    while todo:
        frame, parent = todo.pop()
        local = np.asarray(frame.matrix, float)
        if not np.isfinite(local).all():  # as the hierarchy builder does (it warns)
            local = np.eye(4)
        node = FrameNode(len(nodes), frame.name, parent, local, frame)
        nodes.append(node)
        if parent >= 0:
            nodes[parent].children.append(node.index)
        todo.extend((child, node.index) for child in reversed(frame.children))
    return nodes


def skin_frame_names(scene: SceneData) -> list[str]:
    names: list[str] = []
    for mesh in scene.all_meshes():
        if mesh.skin is not None:
            names.extend(sw.frame_name for sw in mesh.skin.weights)
    return names


def animated_frame_names(scene: SceneData) -> list[str]:
    return [
        anim.frame_name
        for aset in scene.animation_sets
        for anim in aset.animations
        if anim.frame_name is not None
    ]


def _tree_root(nodes: list[FrameNode], i: int) -> int:
    while nodes[i].parent >= 0:
        i = nodes[i].parent
    return i


def choose_bone_frames(
    nodes: list[FrameNode], by_name: dict[str, int], scene: SceneData, every_frame: bool
) -> list[int]:
    """Frame indices that become bones, in frame order.

    Frames named by a SkinWeights, and animated frames in a tree that holds such a frame,
    plus all their ancestors. Animated frames in trees without skinning stay objects (rigid
    animation). With ``every_frame``, every frame of the file becomes a bone.
    """
    if every_frame:
        return [n.index for n in nodes]
    skin = {by_name[n] for n in skin_frame_names(scene) if n in by_name}
    skin_trees = {_tree_root(nodes, i) for i in skin}
    chosen = set(skin)
    for name in animated_frame_names(scene):
        i = by_name.get(name)
        if i is not None and _tree_root(nodes, i) in skin_trees:
            chosen.add(i)
    for i in list(chosen):
        p = nodes[i].parent
        while p >= 0 and p not in chosen:
            chosen.add(p)
            p = nodes[p].parent
    return sorted(chosen)


def armature_frame(nodes: list[FrameNode], frames: list[int], scene: SceneData) -> int:
    """The frame that stands for the armature, or -1: the one top-level frame above the
    bones when it is named, at the identity, holds no mesh, and no SkinWeights or animation
    names it (xof's exporter writes an armature so, to keep its name). Being the identity,
    it moves nothing: the bones below it keep their binds."""
    tops = [i for i in frames if nodes[i].parent < 0]
    if len(tops) != 1:
        return -1
    top = nodes[tops[0]]
    if top.name is None or top.data.meshes or not np.array_equal(top.local, np.eye(4)):
        return -1
    if top.name in set(skin_frame_names(scene)) | set(animated_frame_names(scene)):
        return -1
    if sum(1 for n in nodes if n.name == top.name) > 1:
        return -1
    return top.index


def _usable_offset(off: np.ndarray) -> bool:
    return (
        off.shape == (4, 4)
        and bool(np.all(np.isfinite(off)))
        and abs(np.linalg.det(off[:3, :3])) > 1e-12
    )


def first_offsets(scene: SceneData, by_name: dict[str, int]) -> dict[int, tuple[np.ndarray, int]]:
    """frame index -> (the matrixOffset of the first SkinWeights naming it (file space),
    the index of its mesh in ``scene.all_meshes()``)."""
    out: dict[int, tuple[np.ndarray, int]] = {}
    for m, mesh in enumerate(scene.all_meshes()):
        if mesh.skin is None:
            continue
        for sw in mesh.skin.weights:
            i = by_name.get(sw.frame_name)
            off = np.asarray(sw.offset, dtype=np.float64)
            if i is not None and i not in out and _usable_offset(off):
                out[i] = (off, m)
    return out


def frame_worlds(nodes: list[FrameNode]) -> list[np.ndarray]:
    """Every frame's combined file row matrix (``local @ parent's``), parents first."""
    out: list[np.ndarray] = []
    for n in nodes:
        out.append(n.local if n.parent < 0 else n.local @ out[n.parent])
    return out


def mesh_stretches(
    scene: SceneData, nodes: list[FrameNode], conversion: SpaceConversion
) -> tuple[list[np.ndarray], list[str]]:
    """Per mesh of ``scene.all_meshes()``: the matrix it carries (:func:`.stretch.mesh_stretch`,
    Blender space; identity for unskinned meshes), and notes."""
    holder = {id(mesh): n.index for n in nodes for mesh in n.data.meshes}
    worlds = frame_worlds(nodes)
    out: list[np.ndarray] = []
    notes: list[str] = []
    for mesh in scene.all_meshes():
        weights = mesh.skin.weights if mesh.skin is not None else []
        # bones that move no vertex (exporters write them so bones stay bones) do not count
        offs = [np.asarray(sw.offset, dtype=np.float64) for sw in weights if len(sw.indices)]
        offs = [o for o in offs if _usable_offset(o)]
        if not offs:
            out.append(np.eye(4))
            continue
        i = holder.get(id(mesh))
        world = convert_matrices(conversion, worlds[i]) if i is not None else np.eye(4)
        x, why = mesh_stretch(convert_matrices(conversion, np.stack(offs)), world)
        out.append(x)
        if why:
            notes.append(f"mesh {mesh.name!r}: {why}; its bones keep the scale")
    return out, notes


def _unique_names(nodes: list[FrameNode], frames: list[int]) -> list[str]:
    used: set[str] = set()
    names: list[str] = []
    for i in frames:
        base = (nodes[i].name or "Frame")[:60]
        name, k = base, 1
        while name in used:
            name = f"{base[:56]}.{k:03d}"
            k += 1
        used.add(name)
        names.append(name)
    return names


def _axis_turn(axis: int, sign: float) -> np.ndarray:
    """The smallest signed-permutation rotation taking +Y onto ``sign * e_axis``."""
    if axis == 1:
        return np.eye(3) if sign > 0 else np.diag([-1.0, -1.0, 1.0])
    target = np.zeros(3)
    target[axis] = sign
    k = np.cross([0.0, 1.0, 0.0], target)  # unit: e_y is perpendicular to target
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.rint(np.eye(3) + kx + kx @ kx)  # Rodrigues at 90 degrees


def _pick_axis(rot: np.ndarray, direction: np.ndarray) -> tuple[int, float]:
    proj = rot.T @ direction
    axis = int(np.argmax(np.abs(proj)))
    return axis, (1.0 if proj[axis] >= 0 else -1.0)


def plan_skeleton(
    scene: SceneData, conversion: SpaceConversion, every_frame: bool = False
) -> SkeletonPlan:
    """Bones, binds and rests for ``scene``; an empty plan when nothing needs an armature."""
    nodes = flatten_frames(scene)
    by_name: dict[str, int] = {}
    for n in nodes:
        if n.name is not None:
            by_name.setdefault(n.name, n.index)
    plan = SkeletonPlan(nodes, [], {}, by_name)
    for name in sorted(set(skin_frame_names(scene)) - set(by_name)):
        plan.warnings.append(f"SkinWeights names frame {name!r}, which the file does not have")
    frames = choose_bone_frames(nodes, by_name, scene, every_frame)
    if not frames:
        return plan
    if not every_frame:
        plan.armature_frame = armature_frame(nodes, frames, scene)
        frames = [i for i in frames if i != plan.armature_frame]
    offsets = first_offsets(scene, by_name)
    stretches, notes = mesh_stretches(scene, nodes, conversion)
    plan.warnings.extend(notes)
    names = _unique_names(nodes, frames)
    locals_b = convert_matrices(conversion, np.stack([nodes[i].local for i in frames]))
    for k, i in enumerate(frames):
        parent = plan.bone_of_frame.get(nodes[i].parent, -1)
        if i in offsets:
            off, m = offsets[i]
            bind = stretches[m] @ safe_inverse4(convert_matrices(conversion, off))
        else:
            parent_bind = np.eye(4) if parent < 0 else plan.bones[parent].bind
            bind = parent_bind @ locals_b[k]
        plan.bone_of_frame[i] = len(plan.bones)
        plan.bones.append(BonePlan(names[k], i, parent, bind, np.eye(4), 0.0, i in offsets))
    _place_rests(plan)
    return plan


def _place_rests(plan: SkeletonPlan) -> None:
    heads = np.stack([b.bind[:3, 3] for b in plan.bones])
    size = float(np.max(np.ptp(heads, axis=0))) if len(heads) > 1 else 0.0
    size = size if size > 1e-9 else 1.0
    min_len = 1e-3 * size
    children: dict[int, list[int]] = {}
    for k, b in enumerate(plan.bones):
        children.setdefault(b.parent, []).append(k)
    for k, bone in enumerate(plan.bones):  # parents first: frames are in depth-first order
        rot = closest_rotation(bone.bind[:3, :3])
        kids = children.get(k, [])
        direction = np.mean(heads[kids], axis=0) - heads[k] if kids else np.zeros(3)
        if np.linalg.norm(direction) > min_len:
            axis, sign = _pick_axis(rot, direction)
            length = max(float(abs(rot[:, axis] @ direction)), min_len)
        elif bone.parent >= 0:
            parent = plan.bones[bone.parent]
            axis, sign = _pick_axis(rot, parent.rest[:3, 1])
            length = parent.length
        else:
            axis, sign, length = 1, 1.0, 0.1 * size
        rest = np.eye(4)
        rest[:3, :3] = rot @ _axis_turn(axis, sign)
        rest[:3, 3] = heads[k]
        bone.rest, bone.length = rest, max(length, min_len)


def mesh_skin_space(
    plan: SkeletonPlan, mesh: MeshData, conversion: SpaceConversion
) -> tuple[np.ndarray, list[str]]:
    """The mesh object's matrix relative to the armature, and warnings.

    A SkinWeights' ``matrixOffset`` is relative to its own mesh; the bones take theirs from
    the first mesh naming them. For another mesh whose offsets differ by one fixed matrix
    ``X`` (``O_mesh = O_bone @ X``), placing that mesh's object at ``X`` skins it exactly.
    """
    found: list[np.ndarray] = []
    if mesh.skin is not None:
        for sw in mesh.skin.weights:
            bone = plan.bone_named_by_file(sw.frame_name)
            off = np.asarray(sw.offset, dtype=np.float64)
            if bone is None or not bone.from_offset or not np.all(np.isfinite(off)):
                continue
            if abs(np.linalg.det(off[:3, :3])) > 1e-12:
                found.append(bone.bind @ convert_matrices(conversion, off))
    if not found:
        return np.eye(4), []
    x = found[0]
    spread = max(float(np.max(np.abs(f - x))) for f in found)
    scale = max(1.0, float(np.max(np.abs(x[:3, 3]))))
    if spread > 1e-4 * scale:
        return x, [
            f"mesh {mesh.name!r}: its bone offsets disagree with the skeleton's "
            f"(by {spread:.3g}); it may deform wrongly"
        ]
    return x, []
