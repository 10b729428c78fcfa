"""What the morph sets of a file become, decided without bpy: objects, shape keys, key curves.

A MorphAnimationSet blends mesh ``i`` into mesh ``i+1`` between key times. With shape keys
relative to a Basis ``B`` the evaluated mesh is ``B + sum_k v_k (M_k - B)``. Giving every key
block ``k`` the curve ``v_k(t_j) = 1 if key j names k else 0`` and interpolating linearly
reproduces ``(1-s) M_i + s M_(i+1)`` exactly, including when ``M_i`` is the Basis (its own
block contributes nothing) and when one mesh appears at several keys. Planning this in plain
Python keeps the rule testable without Blender.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ...xfile.views.model import MeshData, MorphSetData, SceneData, depth_first
from ..anim.timing import MAX_FRAME

# Frames between two keys written at the same millisecond: the file's blend steps there.
STEP_EPSILON_FRAMES = 1e-3


@dataclass(eq=False)
class SetCurves:
    """One set's keyframes: the same frames on every key block of its group."""

    name: str
    loop: bool
    frames: np.ndarray  # (k,) float64 scene frames, ascending
    values: dict[str, np.ndarray] = field(default_factory=dict)  # key block -> (k,) values

    @property
    def end_frame(self) -> float:
        return float(self.frames[-1]) if len(self.frames) else 0.0


@dataclass(eq=False)
class MorphGroup:
    """Sets that share meshes: one object, one Basis, one key block per distinct mesh."""

    basis: str  # mesh name of the Basis (first key of the group's first set)
    targets: list[str]  # other distinct mesh names, in order of first use
    sets: list[MorphSetData] = field(default_factory=list)

    @property
    def block_names(self) -> list[str]:
        return [self.basis, *self.targets]


@dataclass(eq=False)
class MorphPlan:
    groups: list[MorphGroup] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def set_label(morph_set: MorphSetData, index: int) -> str:
    """A set's name, or a stable stand-in for unnamed ones."""
    return morph_set.name or f"MorphAnimationSet.{index:03d}"


def meshes_by_name(scene: SceneData) -> dict[str, MeshData]:
    """Meshes a morph key can name: by the mesh's name, else by its frame's (one mesh per frame).

    Exporters put morph targets either as named top-level meshes or as unnamed meshes inside
    named frames; both spellings resolve. The first mesh of a name wins, as in the file.
    """
    found: dict[str, MeshData] = {}
    for mesh in scene.all_meshes():
        if mesh.name and mesh.name not in found:
            found[mesh.name] = mesh

    for frame in depth_first(scene.frames):
        meshes, name = frame.meshes, frame.name
        if name and len(meshes) == 1 and name not in found:
            found[name] = meshes[0]
    return found


def plan_morphs(morph_sets: Sequence[MorphSetData], meshes: Mapping[str, MeshData]) -> MorphPlan:
    """Group the sets by shared meshes and drop keys that cannot become shape keys.

    A key naming a missing mesh, or a mesh whose vertex count differs from its group's Basis,
    is dropped from its set (with a warning naming both); the rest of the set still plays.
    """
    plan = MorphPlan()
    usable: list[MorphSetData] = []
    for index, morph_set in enumerate(morph_sets):
        label = set_label(morph_set, index)
        keys = [k for k in morph_set.keys if k.mesh_name in meshes]
        for key in morph_set.keys:
            if key.mesh_name not in meshes:
                plan.warnings.append(
                    f"morph set '{label}': no mesh named '{key.mesh_name}', key skipped"
                )
        if not keys:
            plan.warnings.append(f"morph set '{label}' has no usable keys, skipped")
            continue
        usable.append(
            MorphSetData(name=label, loop=morph_set.loop, keys=_sorted_keys(keys, label, plan))
        )

    for members in _connected_sets(usable):
        basis = members[0].keys[0].mesh_name
        basis_count = len(meshes[basis].positions)
        group = MorphGroup(basis=basis, targets=[])
        rejected: set[str] = set()
        for name in _distinct_meshes(members):
            if name == basis:
                continue
            count = len(meshes[name].positions)
            if count != basis_count:
                if name not in rejected:
                    plan.warnings.append(
                        f"morph target '{name}' has {count} vertices but basis '{basis}' has "
                        f"{basis_count}: shape key skipped"
                    )
                rejected.add(name)
                continue
            group.targets.append(name)
        for morph_set in members:
            keys = [k for k in morph_set.keys if k.mesh_name not in rejected]
            if keys:
                group.sets.append(MorphSetData(name=morph_set.name, loop=morph_set.loop, keys=keys))
        plan.groups.append(group)
    return plan


def set_curves(
    morph_set: MorphSetData,
    block_names: Sequence[str],
    fps: float,
    frame_start: float = 1.0,
    force_loop: bool = False,
) -> SetCurves:
    """Key-block values at the set's key times (milliseconds -> frames at ``fps``, a key
    within half a millisecond of a whole frame on it).

    Every block of the group gets a curve, zero where the set does not use it, so the active
    action alone decides the shape. Keys at the same millisecond become a step (the earlier one
    moved back by ``STEP_EPSILON_FRAMES``). A set starting after 0 ms holds its first mesh
    from 0 ms, so a loop's period is the last key's time, as the format says.
    """
    keys = list(morph_set.keys)
    times = [float(k.time_ms) for k in keys]
    names = [k.mesh_name for k in keys]
    if times and times[0] > 0.0:
        times.insert(0, 0.0)
        names.insert(0, names[0])
    with np.errstate(over="ignore"):  # a declared FLOAT time of 1e308 ms: past float64 here
        frames = np.array([frame_start + t * fps / 1000.0 for t in times], dtype=np.float64)
    # keys past Blender's frames could not play (and an infinite one breaks the sums below)
    np.clip(frames, -MAX_FRAME, MAX_FRAME, out=frames)
    # Whole milliseconds cannot hold most frame times (1000 / 24): a key within half a
    # millisecond of a frame is on that frame.
    whole = np.rint(frames - frame_start) + frame_start
    snap = np.abs(frames - whole) <= 0.5 * fps / 1000.0 + 1e-9
    frames[snap] = whole[snap]
    # Collapse runs of equal times to their first and last key, and make that a short step.
    keep = np.ones(len(frames), dtype=bool)
    for i in range(1, len(frames) - 1):
        if frames[i] == frames[i - 1] and frames[i] == frames[i + 1]:
            keep[i] = False
    frames = frames[keep]
    names = [n for n, k in zip(names, keep, strict=True) if k]
    for i in range(len(frames) - 1, 0, -1):
        if frames[i - 1] >= frames[i]:
            frames[i - 1] = frames[i] - STEP_EPSILON_FRAMES
    values = {
        block: np.array([1.0 if n == block else 0.0 for n in names], dtype=np.float64)
        for block in block_names
    }
    return SetCurves(
        name=morph_set.name or "MorphAnimationSet",
        loop=bool(morph_set.loop or force_loop),
        frames=frames,
        values=values,
    )


def _sorted_keys(keys: list, label: str, plan: MorphPlan) -> list:
    """Keys in time order; a file out of order is warned about and played sorted."""
    ordered = sorted(keys, key=lambda k: float(k.time_ms))
    if ordered != keys:
        plan.warnings.append(f"morph set '{label}': key times out of order, sorted")
    return ordered


def _distinct_meshes(sets: Sequence[MorphSetData]) -> list[str]:
    seen: dict[str, None] = {}
    for morph_set in sets:
        for key in morph_set.keys:
            seen.setdefault(key.mesh_name, None)
    return list(seen)


def _connected_sets(sets: Sequence[MorphSetData]) -> list[list[MorphSetData]]:
    """Sets joined whenever they name a common mesh (transitively), in file order."""
    parent = list(range(len(sets)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict[str, int] = {}
    for i, morph_set in enumerate(sets):
        for key in morph_set.keys:
            j = owner.setdefault(key.mesh_name, i)
            a, b = root(i), root(j)
            if a != b:
                parent[max(a, b)] = min(a, b)
    groups: dict[int, list[MorphSetData]] = {}
    for i, morph_set in enumerate(sets):
        groups.setdefault(root(i), []).append(morph_set)
    return list(groups.values())
