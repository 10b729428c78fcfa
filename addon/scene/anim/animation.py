"""AnimationSets -> actions on the armature (pose bones) and on rigid objects.

Each set becomes one action named after it; the first plays, the others wait on muted NLA
tracks. Bones are keyed with the pose-bone basis that reproduces the file's local transform
(see :func:`.armature.bone_basis`); rigid objects with their converted local matrix. Tick
times map to frames through AnimTicksPerSecond (4800 when absent) and the scene's rate; an
option sets the scene's rate (when the keys reveal one) and frame range from the file.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import bpy
import numpy as np

from ...xfile.views.model import AnimationData, SceneData
from ..rig.armature import basis_sides, read_matrix
from ..rig.rig_math import (
    compose,
    decompose,
    det3,
    inverse4,
    mat3_to_quat,
    multiply_parts,
    rotate_parts,
    safe_inverse4,
)
from ..rig.skeleton import SpaceConversion
from .actions import ActionBuilder, bone_path, clamp_to_float32, play, stash
from .batch_sampling import Segments, refine_all, sample_all, segment_continuous
from .key_sampling import (
    DEFAULT_MAX_STEP,
    Channels,
    LocalSamples,
    guess_frame_rate,
    refine_times,
    sample_parts,
    split_all,
    split_keys,
    ticks_are_frames,
)
from .timing import MAX_FRAME

DEFAULT_TICKS_PER_SECOND = 4800.0


@dataclass(eq=False)
class BoneTarget:
    """What keying one bone needs (Blender space, armature-relative)."""

    bone: str
    rest: np.ndarray  # Bone.matrix_local
    bind: np.ndarray
    parent_bind: np.ndarray
    rest_local: np.ndarray  # file row-vector local matrix for parts without keys


@dataclass(eq=False)
class AnimationTargets:
    armature: bpy.types.Object | None = None
    bones: dict[str, BoneTarget] = field(default_factory=dict)  # by file frame name
    objects: dict[str, bpy.types.Object] = field(default_factory=dict)  # rigid, by frame name
    rest_locals: dict[str, np.ndarray] = field(default_factory=dict)  # objects' file locals
    skipped: set[str] = field(default_factory=set)  # frames deliberately not animated


def to_file_matrix(conversion: SpaceConversion, m: np.ndarray) -> np.ndarray:
    """Inverse of :func:`.skeleton.convert_matrices` for one matrix."""
    c = np.asarray(conversion.basis, dtype=np.float64)
    return np.asarray((inverse4(c) @ m @ c).T)


def targets_from_armature(
    armature: bpy.types.Object, conversion: SpaceConversion, file_locals: dict[str, np.ndarray]
) -> AnimationTargets:
    """Targets for an existing armature, matched by bone name.

    Bones built by this importer carry their bind (``xof_bind``); for others the rest matrix
    stands in for it. Parts a file does not key keep the file's frame matrix when the file
    has that frame, else the bone's rest relation to its parent.
    """
    data = armature.data
    assert isinstance(data, bpy.types.Armature)

    def bind_of(bone: bpy.types.Bone) -> np.ndarray:
        stored = bone.get("xof_bind")
        if stored is not None and len(stored) == 16:
            return np.array(list(stored), dtype=np.float64).reshape(4, 4)
        return read_matrix(bone.matrix_local)

    out = AnimationTargets(armature)
    for bone in data.bones:
        bind = bind_of(bone)
        parent_bind = bind_of(bone.parent) if bone.parent else np.eye(4)
        rest_local = file_locals.get(bone.name)
        if rest_local is None:
            rest_local = to_file_matrix(conversion, safe_inverse4(parent_bind) @ bind)
        out.bones[bone.name] = BoneTarget(
            bone.name, read_matrix(bone.matrix_local), bind, parent_bind, rest_local
        )
    return out


def _frames_per_second(scene: bpy.types.Scene) -> float:
    return float(scene.render.fps) / float(scene.render.fps_base or 1.0)


def apply_scene_timing(
    data: SceneData, blender_scene: bpy.types.Scene, ticks_per_second: float | None = None
) -> None:
    """Scene rate from the keys' spacing (when whole), before ticks are turned into frames."""
    tps = ticks_per_second or data.ticks_per_second or DEFAULT_TICKS_PER_SECOND
    times = [t.times for s in data.animation_sets for a in s.animations for t in a.tracks]
    rate = ticks_are_frames(times, tps) or guess_frame_rate(times, tps)
    if rate is not None:
        blender_scene.render.fps = round(rate)
        blender_scene.render.fps_base = 1.0


def _sides(conversion: SpaceConversion, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """``(..., 2, 4, 4)``: file row local ``M`` -> keyed basis ``left @ C @ M.T @ C^-1 @ right``."""
    c = np.asarray(conversion.basis, dtype=np.float64)
    return np.stack([left @ c, inverse4(c) @ right], axis=-3)


def bone_sides(conversion: SpaceConversion, bones: list[BoneTarget]) -> dict[str, np.ndarray]:
    """Sides of every bone, by bone name (one batched inverse, not a few per bone)."""
    if not bones:
        return {}
    stack = [
        np.stack([getattr(b, part) for b in bones]) for part in ("rest", "bind", "parent_bind")
    ]
    sides = _sides(conversion, *basis_sides(*stack))
    return {b.bone: s for b, s in zip(bones, sides, strict=True)}


def object_sides(conversion: SpaceConversion) -> np.ndarray:
    return _sides(conversion, np.eye(4), np.eye(4))


@dataclass(eq=False)
class SampledAnimation:
    """One Animation's keys at their sample times, before the map into Blender's space."""

    frames: np.ndarray  # (k,) scene frames
    samples: LocalSamples  # file-space local parts at those times
    sides: np.ndarray  # (2, 4, 4): basis = left @ M.T @ right
    slope: np.ndarray | None  # (k, 3) location slope per frame (spline sets), else None


def sample_animation(
    anim: AnimationData,
    rest_local: np.ndarray,
    sides: np.ndarray,
    frames_per_tick: float,
    warnings: list[str],
    max_step: float,
) -> SampledAnimation:
    """One Animation's keys sampled (extra samples in wide rotation spans, see ``max_step``).

    On spline sets the location slopes map through the linear part of ``left`` (positions
    enter the basis' translation only through it: the bone's rest head is its bind origin).
    """
    parts = split_keys(anim)
    warnings.extend(parts.warnings)
    ticks = refine_times(parts, max_step) if max_step > 0 else parts.times()
    if not len(ticks):
        empty = LocalSamples(np.zeros((0, 3)), np.zeros((0, 4)), np.zeros((0, 3)))
        return SampledAnimation(np.zeros(0), empty, sides, None)
    samples = sample_parts(parts, rest_local, ticks, spline=not anim.linear)
    slope = None
    if samples.pos_slope is not None:
        slope = samples.pos_slope @ sides[0][:3, :3].T / frames_per_tick
    return SampledAnimation(ticks * frames_per_tick, samples, sides, slope)


def sample_animations(
    anims: list[AnimationData],
    rest_locals: list[np.ndarray],
    sides: list[np.ndarray],
    frames_per_tick: float,
    warnings: list[str],
    max_step: float,
) -> list[SampledAnimation]:
    """:func:`sample_animation` of several animations in one batch (equal results; see
    :mod:`.batch_sampling`)."""
    if not anims:
        return []
    parts = split_all(anims)
    for p in parts:
        warnings.extend(p.warnings)
    ticks, rotations = refine_all(parts, max_step)
    rests = np.stack([np.asarray(r, dtype=np.float64) for r in rest_locals])
    samples = sample_all(parts, rests, ticks, [not anim.linear for anim in anims], rotations)
    out = []
    for t, s, side in zip(ticks.split(ticks.values), samples, sides, strict=True):
        slope = None
        if s.pos_slope is not None:
            slope = s.pos_slope @ side[0][:3, :3].T / frames_per_tick
        out.append(SampledAnimation(t * frames_per_tick, s, side, slope))
    return out


def _conformal_sides(sides: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(t, 2, 4, 4) sides -> (t,) bool: both linear parts a rotation times a uniform scale,
    and (t,) the product of those two scales."""
    m3 = sides[..., :3, :3]
    gram = np.swapaxes(m3, -1, -2) @ m3
    square = np.trace(gram, axis1=-2, axis2=-1) / 3.0
    off = np.max(np.abs(gram - square[..., None, None] * np.eye(3)), axis=(-1, -2))
    ok = np.all((off <= 1e-12 * square) & (square > 0.0), axis=-1)
    return ok, np.sqrt(square[:, 0] * square[:, 1])


def _rigid_sides(sides: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(t, 2, 4, 4) sides -> (t,) bool: both affine, their linear parts ``a Ua`` and ``b Ub``
    with ``Ua``, ``Ub`` orthogonal, ``a, b > 0`` and ``det Ua = det Ub`` (both mirror, as the
    space conversion does, or neither); (t, 2) ``a, b`` and (t, 2, 4) the rotations ``+-Ua``,
    ``+-Ub`` (a 3x3 ``-U`` is proper when ``U`` mirrors, and ``(-Ua) R (-Ub) = Ua R Ub``)."""
    m3 = sides[..., :3, :3]
    gram = np.swapaxes(m3, -1, -2) @ m3
    square = np.trace(gram, axis1=-2, axis2=-1) / 3.0
    off = np.max(np.abs(gram - square[..., None, None] * np.eye(3)), axis=(-1, -2))
    affine = np.all(sides[..., 3, :] == np.array([0.0, 0.0, 0.0, 1.0]), axis=-1)
    det = det3(m3)
    ok = (off <= 1e-12 * square) & (square > 0.0) & (det != 0.0) & affine
    size = np.sqrt(np.where(ok, square, 1.0))
    sign = np.where(det < 0.0, -1.0, 1.0)
    proper = m3 * (sign / size)[..., None, None]
    quats = mat3_to_quat(np.where(ok[..., None, None], proper, np.eye(3)))
    return np.all(ok, axis=-1) & (sign[:, 0] == sign[:, 1]), size, quats


def _rigid_channels(
    pos: np.ndarray,
    rot: np.ndarray,
    scale: np.ndarray,
    expand: Callable[[np.ndarray], np.ndarray],
    sides: np.ndarray,
    size: np.ndarray,
    quats: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Channels of ``left @ M.T @ right`` for file samples with a positive uniform scale ``s``
    through rigid sides (``left = T(l) a Ra``, ``right = T(r) b Rb``), in closed form per
    sample: rotation ``qa * conj(q) * qb``, scale ``a b s``, location ``left @ (s conj(q) r +
    pos)``. The values of :func:`decompose` of the product, to rounding. ``sides``, ``size``
    and ``quats`` are per track; ``expand`` gives a per-track array per sample. Components
    are separate arrays throughout (no strided passes over stacks)."""
    rw, rx, ry, rz = np.ascontiguousarray(np.moveaxis(rot, -1, 0))
    norm = np.sqrt(rw * rw + rx * rx + ry * ry + rz * rz)
    conj = (rw / norm, -rx / norm, -ry / norm, -rz / norm)
    s = np.ascontiguousarray(scale[..., 0])
    right = [expand(sides[:, 1, i, 3]) for i in range(3)]
    turned = rotate_parts(conj, right)
    moved = [turned[i] * s + pos[..., i] for i in range(3)]
    loc = np.empty_like(pos)
    for i in range(3):
        row = [expand(sides[:, 0, i, j]) for j in range(4)]
        loc[..., i] = row[0] * moved[0] + row[1] * moved[1] + row[2] * moved[2] + row[3]
    qa = [expand(quats[:, 0, c]) for c in range(4)]
    qb = [expand(quats[:, 1, c]) for c in range(4)]
    w, x, y, z = multiply_parts(multiply_parts(qa, conj), qb)
    norm = np.sqrt(w * w + x * x + y * y + z * z)
    norm = np.where(w < 0.0, -norm, norm)  # w >= 0, as decompose gives
    quat = np.stack([w / norm, x / norm, y / norm, z / norm], axis=-1)
    grown = expand(size[:, 0] * size[:, 1]) * s
    return loc, quat, np.repeat(grown[..., None], 3, axis=-1)


def channels_of(sampled: list[SampledAnimation]) -> list[Channels]:
    """Blender channels of several sampled animations, composed and decomposed in one batch
    (per-call numpy overhead, not arithmetic, dominates a few hundred short tracks).

    Samples with a positive uniform scale through rigid sides (what bones and objects
    usually have) take the closed form of :func:`_rigid_channels`, no matrices. The others
    are composed and decomposed; those with a uniform scale through sides that only rotate
    and scale uniformly give a basis without shear, whose decomposition skips that check.
    """
    if not sampled:
        return []
    counts = np.array([len(s.frames) for s in sampled])
    cat = [joined([getattr(s.samples, part) for s in sampled]) for part in ("pos", "rot", "scale")]
    all_sides = np.stack([s.sides for s in sampled])
    bounds = np.concatenate([[0], np.cumsum(counts)])
    sc = cat[2]
    uniform = (np.abs(sc[:, 1] - sc[:, 0]) <= 1e-12 * np.abs(sc[:, 0])) & (
        np.abs(sc[:, 2] - sc[:, 0]) <= 1e-12 * np.abs(sc[:, 0])
    )
    side_ok, side_scale = _conformal_sides(all_sides)
    sized = np.abs(sc[:, 0]) * np.repeat(side_scale, counts) > 1e-6
    rigid, size, quats = _rigid_sides(all_sides)
    fast = np.repeat(rigid, counts) & uniform & sized & (sc[:, 0] > 0.0)
    loc, quat, scale = np.empty_like(cat[0]), np.empty_like(cat[1]), np.empty_like(sc)
    if np.all(fast) and len(counts) and np.all(counts == counts[0]):
        # tracks of one length: per-track values broadcast over (tracks, samples) views,
        # the same element operations as repeating them per sample
        t, k = len(counts), int(counts[0])
        loc, quat, scale = _rigid_channels(
            cat[0].reshape(t, k, 3), cat[1].reshape(t, k, 4), sc.reshape(t, k, 3),
            lambda a: a[:, None], all_sides, size, quats,
        )  # fmt: skip
        loc, quat, scale = loc.reshape(-1, 3), quat.reshape(-1, 4), scale.reshape(-1, 3)
    elif np.all(fast):
        loc, quat, scale = _rigid_channels(
            cat[0], cat[1], sc, lambda a: np.repeat(a, counts), all_sides, size, quats
        )
    elif np.any(fast):
        track = np.repeat(np.arange(len(sampled)), counts)[fast]
        got = _rigid_channels(cat[0][fast], cat[1][fast], sc[fast], lambda a: a[track],
                              all_sides, size, quats)  # fmt: skip
        loc[fast], quat[fast], scale[fast] = got
    slow = np.flatnonzero(~fast)
    if len(slow):
        # the transpose of the file's row matrix is compose() of the conjugate rotation, bit
        # for bit, and contiguous (a faster product than through swapped axes)
        local_t = compose(cat[0][slow], cat[1][slow] * np.array([1.0, -1.0, -1.0, -1.0]),
                          sc[slow])  # fmt: skip
        basis = np.empty_like(local_t)
        cut = np.searchsorted(slow, bounds)
        for k, side in enumerate(all_sides):  # a track's two sides broadcast over its samples
            if cut[k + 1] > cut[k]:
                part = slice(cut[k], cut[k + 1])
                np.matmul(side[0] @ local_t[part], side[1], out=basis[part])
        known = (np.repeat(side_ok, counts) & uniform & sized)[slow]
        loc[slow], quat[slow], scale[slow] = decompose(basis, known)
    quat = segment_continuous(Segments(quat, bounds[:-1], counts), copy=False)
    out = []
    for k, s in enumerate(sampled):
        part = slice(bounds[k], bounds[k + 1])
        out.append(Channels(s.frames, loc[part], quat[part], scale[part], s.slope))
    return out


def joined(arrays: list[np.ndarray]) -> np.ndarray:
    """``np.concatenate(arrays)``; arrays that are consecutive rows of one C-contiguous array
    (what :func:`.batch_sampling.sample_all` cuts its samples from) give those rows as a view,
    with no copy. Read-only use."""
    base = arrays[0].base if arrays else None
    if (
        isinstance(base, np.ndarray)
        and base.flags.c_contiguous
        and base.ndim == arrays[0].ndim
        and all(
            a.base is base
            and a.flags.c_contiguous
            and a.shape[1:] == base.shape[1:]
            and a.dtype == base.dtype
            for a in arrays
        )
    ):
        row = base.strides[0] if base.ndim and base.size else 0
        at = base.__array_interface__["data"][0]
        rows = [a for a in arrays if a.size]  # an empty slice's address says nothing
        first = rows[0].__array_interface__["data"][0] if rows else at
        here = first
        for a in rows:
            if a.__array_interface__["data"][0] != here:
                break
            here += a.nbytes
        else:
            if row > 0 and (first - at) % row == 0:
                start = (first - at) // row
                return base[start : start + (here - first) // row]
    return np.concatenate(arrays)


def build_actions(
    data: SceneData,
    targets: AnimationTargets,
    conversion: SpaceConversion,
    blender_scene: bpy.types.Scene,
    set_scene_range: bool = False,
    max_step: float = DEFAULT_MAX_STEP,
    ticks_per_second: float | None = None,
    together: bool = False,
) -> tuple[list[bpy.types.Action], list[str]]:
    """One action per AnimationSet; the first plays, the others go to muted NLA tracks.

    ``max_step`` (radians): rotation spans wider than this get extra keys so that Blender's
    per-channel interpolation follows the file's slerp; 0 keeps exactly the file's key times.
    ``ticks_per_second`` overrides the file's; ``together``: every set plays, each on an
    unmuted NLA track (for sets that key disjoint bones), no action active.
    """
    warnings: list[str] = []
    tps = float(ticks_per_second or data.ticks_per_second or DEFAULT_TICKS_PER_SECOND)
    if tps <= 0:
        warnings.append(f"AnimTicksPerSecond {tps} is not positive; using 4800")
        tps = DEFAULT_TICKS_PER_SECOND
    fps = _frames_per_second(blender_scene)
    unknown: set[str] = set()
    built: list[tuple[ActionBuilder, list[bpy.types.Object]]] = []
    bone_sides_of = bone_sides(conversion, list(targets.bones.values()))
    plain_sides = object_sides(conversion)
    for number, aset in enumerate(data.animation_sets):
        builder = ActionBuilder(aset.name or f"Animation{number}")
        users: list[bpy.types.Object] = []
        # by frame name: a frame animated twice in a set keeps its last animation
        pending: dict[str, tuple[AnimationData, np.ndarray, np.ndarray, bpy.types.Object, str, str]]
        pending = {}
        seen: set[str] = set()
        for anim in aset.animations:
            name = anim.frame_name
            if name is None or name in targets.skipped:
                continue
            if name in seen:
                warnings.append(f"set {builder.action.name!r}: {name!r} animated twice; last wins")
            seen.add(name)
            bone = targets.bones.get(name)
            obj = targets.objects.get(name)
            if bone is not None and targets.armature is not None:
                sides, rest_local = bone_sides_of[bone.bone], bone.rest_local
                owner, prefix, group = targets.armature, bone_path(bone.bone), bone.bone
            elif obj is not None:
                sides, rest_local = plain_sides, targets.rest_locals.get(name, np.eye(4))
                owner, prefix, group = obj, "", obj.name
                obj.rotation_mode = "QUATERNION"
            else:
                unknown.add(name)
                continue
            pending.pop(name, None)
            pending[name] = (anim, rest_local, sides, owner, prefix, group)
            if owner not in users:
                users.append(owner)
        todo = list(pending.values())
        sampled = sample_animations(
            [p[0] for p in todo], [p[1] for p in todo], [p[2] for p in todo],
            fps / tps, warnings, max_step,
        )  # fmt: skip
        keyed = [(s, p) for s, p in zip(sampled, todo, strict=True) if len(s.frames)]
        for channels, (_, (anim, _, _, owner, prefix, group)) in zip(
            channels_of([k[0] for k in keyed]), keyed, strict=True
        ):
            if clamp_to_float32(channels):
                warnings.append(
                    f"set {builder.action.name!r}: {group!r} has key values that are not "
                    "numbers or beyond the 32-bit float range of F-curves; rest values and "
                    "the range's ends used"
                )
            builder.write(builder.slot_for(owner), prefix, channels, group, cyclic=not anim.open)
        builder.finish()
        built.append((builder, users))
    if unknown:
        warnings.append(
            f"animations of {len(unknown)} frame(s) with no bone or object: "
            + ", ".join(sorted(unknown)[:10])
        )
    if together:
        for owner in {o for _, users in built for o in users}:
            playing = owner.animation_data
            if playing is not None and playing.action is not None and playing.action_slot:
                stash(owner, playing.action, playing.action_slot)  # what played: kept, muted
                playing.action = None
    for number, (builder, users) in enumerate(built):
        for owner in users:
            slot = builder.slot_for(owner)
            if together:
                stash(owner, builder.action, slot, mute=False)
            else:
                (play if number == 0 else stash)(owner, builder.action, slot)
    ranges = [(b.first, b.last) for b, _ in (built if together else built[:1])]
    ranges = [r for r in ranges if np.isfinite(r[0])]
    if set_scene_range and ranges:
        first = min(r[0] for r in ranges)
        last = max(r[1] for r in ranges)
        # within Blender's frames (0 .. MAX_FRAME): a key time past them would not fit the
        # property's int and fail the import
        start = int(np.clip(np.floor(first), 0, MAX_FRAME - 1))
        end = int(np.clip(np.ceil(last), start + 1, MAX_FRAME))
        if (start, end) != (np.floor(first), max(np.ceil(last), np.floor(first) + 1)):
            warnings.append(
                f"the animation's frames {first:g} .. {last:g} run past Blender's "
                f"0 .. {MAX_FRAME}: the scene's range set to {start} .. {end}"
            )
        blender_scene.frame_start, blender_scene.frame_end = start, end
    return [b.action for b, _ in built], warnings
