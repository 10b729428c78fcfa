"""Which constraints the XPBD solver solves, in which colour groups and in which order.

The build is split by what a setting change touches. The *topology* (stretch limiters,
bend springs capped by the span-2 limiters, colour groups, every-other-substep turns,
tethers) depends on the model and on the settings named by ``topology_key``; the
*stiffness* of every constraint is applied afterwards (``apply_stiffness``) from each
group's ``GroupSource``, so changing stiffness, damping, gravity or wind rebuilds nothing.

Pass order, longest limiters first, then bend, shear and structural springs, so the springs
that define the cloth's size have the last word. Solving the limiters over 4+ springs every other
substep (with twice the step, so as stiff) and the bend springs on the other turns costs
much less than solving them every substep and stretches about as little (figures:
tests/bench/README.md): odd substeps solve span 4 (16 ...) and bend, even ones span 8; shear
and structural springs run on every substep. (Two-sided shear springs every other substep
feed each correction into a whole substep of velocity: a free sheet's in-plane shape then
grew 4.5x a frame from rounding noise until it folded.)
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..model import ClothModel, SpringKind, rows_of
from ..settings import SimSettings
from .coloring import colour_groups
from .constraint_pass import ConstraintGroup, Mode
from .limiters import limiter_levels
from .tethers import TetherSlot, build_tethers, share_work

LONG_LIMITER_LEVEL = 1  # limiter levels from here on (span 4, 8 ...) run every other substep
# The stretch limiter setting counts levels for a cloth this many springs across; finer cloth
# gets one more level per doubling, so the longest limiter spans as much of it.
REFERENCE_SPRINGS_ACROSS = 100.0
# Coarse cloth: a level whose limiters span more than this share of the cloth (in springs)
# measured no less stretch (a pull crosses it in a few passes already): such levels are left out.
COARSE_SPAN_SHARE = 0.2
MAX_LIMITER_LEVELS = 8
Report = Callable[[str], None]  # told the name of each build stage as it starts
BUILD_STAGES = 5  # how many times a build reports (for a progress bar's total)
STAGE_LIMITED_BEND = 1  # pass stages after the limiters (whose stage is minus their level)
STAGE_SPRINGS = 10  # bend, shear, structural springs: this, plus 1, plus 2


@dataclass
class GroupSource:
    """Where a group's stiffness comes from: model springs, or limiters along structural
    chains (stiff as structural springs, scaled by the pair's painted stiffness)."""

    spring_ids: np.ndarray | None = None  # (g,) indices into model.springs
    pair_scale: np.ndarray | None = None  # (g,) limiters: mean painted scale of the pair
    # the group's place in the pass: (stage, colour); stages ascend in pass order (limiter
    # levels longest first, then limited bend, bend, shear, structural springs)
    place: tuple[int, int] = (0, 0)


def topology_key(settings: SimSettings) -> tuple[object, ...]:
    """The settings the constraint topology depends on; others only change values."""
    return (
        settings.solver,
        settings.kind,
        settings.stiffness > 0,
        settings.shear_stiffness > 0,
        settings.bend_stiffness > 0,
        settings.tethers,
        settings.tether_pins,
        settings.stretch_limit_levels,
    )


def limiter_level_count(settings: SimSettings, model: ClothModel) -> int:
    """The setting's levels, plus one per doubling of the cloth's size in springs beyond
    ``REFERENCE_SPRINGS_ACROSS``, but no more than the first whose limiters span
    ``COARSE_SPAN_SHARE`` of it (a 20 x 20 sheet: 2). Cloth only: a soft body keeps its
    shape by the pull back, and must stay cheap."""
    levels = int(settings.stretch_limit_levels)
    if settings.kind != "CLOTH" or settings.stiffness <= 0 or levels <= 0:
        return 0
    structural = model.rest_lengths[model.kinds == SpringKind.STRUCTURAL]
    if not structural.size:
        return levels
    typical = float(np.median(structural))
    extent = float(np.ptp(model.rest_world, axis=0).max())
    if typical <= 0.0 or not np.isfinite(extent / typical):
        return levels
    across = extent / typical
    extra = round(np.log2(max(across, 1.0) / REFERENCE_SPRINGS_ACROSS))
    levels = min(levels + max(int(extra), 0), MAX_LIMITER_LEVELS)
    # level L spans 2^L springs: the fewest levels whose longest spans the share, at least 1
    enough = max(1, math.ceil(math.log2(max(across * COARSE_SPAN_SHARE, 1.0)) - 1e-6))
    return min(levels, enough)


def _pair_keys(pairs: np.ndarray, n: int) -> np.ndarray:
    return np.minimum(pairs[:, 0], pairs[:, 1]) * n + np.maximum(pairs[:, 0], pairs[:, 1])


CHUNK = 1 << 15  # springs or limiters looked at a time (their temporaries stay in cache)


def _chunks(size: int) -> range:
    return range(0, size, CHUNK)


def limiter_sets(
    model: ClothModel, settings: SimSettings, inv_mass: np.ndarray
) -> tuple[list[tuple[np.ndarray, np.ndarray]], np.ndarray]:
    """Per level, the limiters to solve as their own constraints (pairs ``(k, 2)``, limits
    ``(k,)``), and per model spring the span-2 limit of a bend spring on the same pair
    (NaN elsewhere): those limits ride on the bend spring instead."""
    springs, n = model.springs, model.point_count
    structural = _kind_rows(model.kinds, SpringKind.STRUCTURAL)
    levels = limiter_levels(
        springs[structural],
        model.rest_lengths[structural],
        model.rest_world,
        limiter_level_count(settings, model),
    )
    del structural
    # a limiter (a, b) can only be a spring of the same stride b - a: only those springs
    # are sorted, and only limiters of a spring's stride are looked up
    chain_stride = np.zeros(max(n, 1), dtype=bool)
    for pairs, _ in levels:
        for lo in _chunks(pairs.shape[0]):
            part = pairs[lo : lo + CHUNK]
            chain_stride[part[:, 1] - part[:, 0]] = True
    spring_has = np.zeros(max(n, 1), dtype=bool)
    candidates: list[np.ndarray] = []
    for lo in _chunks(springs.shape[0]):
        low, high = _ordered(springs[lo : lo + CHUNK])
        stride = high - low
        wanted = chain_stride[stride]
        if wanted.any():
            spring_has[stride[wanted]] = True
            candidates.append(low[wanted] * n + high[wanted])
    sorted_keys = np.concatenate(candidates) if candidates else np.empty(0, dtype=np.int64)
    del candidates, chain_stride
    if sorted_keys.size > 1 and not np.all(sorted_keys[1:] >= sorted_keys[:-1]):
        sorted_keys.sort()
    unique = not np.any(sorted_keys[1:] == sorted_keys[:-1])  # the same among the others
    bend_ids = np.flatnonzero(model.kinds == SpringKind.BEND)
    bend_limit = np.full(springs.shape[0], np.nan)
    pins = np.flatnonzero(inv_mass <= 0) if np.all(inv_mass >= 0) else None
    sets: list[tuple[np.ndarray, np.ndarray]] = []
    for level, (pairs, limits) in enumerate(levels):
        # limiter_levels gives a < b, ascending: sorted queries, a fast search (random
        # ones miss the cache at every step)
        maybe = _rows(pairs, lambda p: spring_has[p[:, 1] - p[:, 0]])
        hit = None
        if sorted_keys.size and maybe.size:
            keys = pairs[maybe, 0] * n
            keys += pairs[maybe, 1]
            if np.array_equal(sorted_keys, keys):  # on a grid: the span-2 ones, bend springs
                hit = maybe
            else:
                found = np.searchsorted(sorted_keys, keys).clip(max=sorted_keys.size - 1)
                hit = maybe[sorted_keys[found] == keys]
                del found
            if level == 0 and bend_ids.size:  # chains that are bend springs
                _limit_bend(bend_limit, bend_ids, springs, n, keys, limits[maybe], unique)
            del keys
        ends, ends_limits = pairs, limits
        if hit is not None and hit.size:
            kept = np.ones(pairs.shape[0], dtype=bool)
            kept[hit] = False
            ends, ends_limits = pairs[kept], limits[kept]
        fixed = _between_pins(ends, inv_mass, pins)
        if fixed.size:
            kept = np.ones(ends.shape[0], dtype=bool)
            kept[fixed] = False
            ends, ends_limits = ends[kept], ends_limits[kept]
        sets.append((ends, ends_limits))
    return sets, bend_limit


def _kind_rows(kinds: np.ndarray, kind: int) -> slice | np.ndarray:
    """The springs of one kind: a slice when they are all in one run (no copy)."""
    mask = kinds == kind
    count = int(np.count_nonzero(mask))
    first = int(np.argmax(mask)) if count else 0
    return slice(first, first + count) if mask[first : first + count].all() else mask


FEW_PINS = 64  # up to this many pinned points, limiters between two are found by bisection


def _between_pins(pairs: np.ndarray, inv_mass: np.ndarray, pins: np.ndarray | None) -> np.ndarray:
    """The rows of ``pairs`` (ascending, ``a < b``) with no mass free to move at either end.
    With few pins (``pins``: the points of inverse mass 0, all others positive), only the
    rows starting at a pin are looked at (bisection: the first ends ascend)."""
    if pins is None or pins.size > FEW_PINS:
        return _rows(pairs, lambda p: (inv_mass[p[:, 0]] + inv_mass[p[:, 1]]) <= 0)
    first = pairs[:, 0]
    found = []
    for pin in pins.tolist():
        lo, hi = bisect.bisect_left(first, pin), bisect.bisect_right(first, pin)
        if hi > lo:
            found.append(np.flatnonzero(inv_mass[pairs[lo:hi, 1]] <= 0) + lo)
    return np.concatenate(found) if found else np.empty(0, dtype=np.int64)


def _ordered(pairs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return np.minimum(pairs[:, 0], pairs[:, 1]), np.maximum(pairs[:, 0], pairs[:, 1])


def _rows(pairs: np.ndarray, test: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """The rows of ``pairs`` where ``test`` (of a chunk of rows) holds, ascending."""
    found = [np.flatnonzero(test(pairs[lo : lo + CHUNK])) + lo for lo in _chunks(pairs.shape[0])]
    return np.concatenate(found) if found else np.empty(0, dtype=np.int64)


def _limit_bend(
    bend_limit: np.ndarray,
    bend_ids: np.ndarray,
    springs: np.ndarray,
    n: int,
    keys: np.ndarray,
    limits: np.ndarray,
    unique: bool,
) -> None:
    """Give each bend spring on the pair of a span-2 limiter (``keys``, ascending and
    unique) that limit. A pair several springs share goes to the first of them only, and
    only when that one is a bend spring."""
    if not unique:
        spring_keys = _pair_keys(springs, n)
        order = np.argsort(spring_keys, kind="stable")
        found = np.searchsorted(spring_keys[order], keys).clip(max=order.size - 1)
        match = order[found[spring_keys[order][found] == keys]]
        limited = match[np.isin(match, bend_ids)]
        bend_limit[limited] = limits[np.searchsorted(keys, spring_keys[limited])]
        return
    low, high = _ordered(springs[bend_ids])
    wanted = low * n
    wanted += high
    del low, high
    if np.array_equal(wanted, keys):  # on a grid: every bend spring, in order
        bend_limit[bend_ids] = limits
        return
    at = np.searchsorted(keys, wanted).clip(max=max(keys.size - 1, 0))
    on = keys[at] == wanted
    bend_limit[bend_ids[on]] = limits[at[on]]


# Big sets of limiters (and of the bend springs carrying span-2 limits) are coloured by
# stride where they allow it (a few passes instead of matching rounds); the other springs,
# and smaller sets, keep the matching: how a cloth settles depends on the colouring in
# detail, as it does on any change of it (figures: tests/bench/README.md).
_BY_STRIDE = {Mode.LIMITER, Mode.LIMITED_SPRING}
STRIDE_MIN_CONSTRAINTS = 1 << 16


def coloured_groups(
    mode: Mode,
    pairs: np.ndarray,
    rest: np.ndarray,
    source: GroupSource,
    inv_mass: np.ndarray,
    limit: np.ndarray | None = None,
) -> list[tuple[ConstraintGroup, GroupSource]]:
    """The constraints on ``pairs`` split into colour groups, with zero stiffness until
    ``apply_stiffness``."""
    if not pairs.size:
        return []
    out: list[tuple[ConstraintGroup, GroupSource]] = []
    by_stride = mode in _BY_STRIDE and pairs.shape[0] >= STRIDE_MIN_CONSTRAINTS
    # contiguous columns: a take from a strided one copies the whole column on every call
    first = np.ascontiguousarray(pairs[:, 0], dtype=np.intp)
    second = np.ascontiguousarray(pairs[:, 1], dtype=np.intp)
    # converted once, taken per group (members are valid indices: "clip" takes no copy)
    rest32 = rest.astype(np.float32)
    limit32 = None if limit is None else limit.astype(np.float32)
    ids32 = None if source.spring_ids is None else source.spring_ids.astype(np.int32)
    for members in colour_groups(pairs, inv_mass.size, by_stride, (first, second)):
        ends = np.empty(2 * members.size, dtype=np.intp)
        np.take(first, members, out=ends[: members.size], mode="clip")
        np.take(second, members, out=ends[members.size :], mode="clip")
        zeros = _same(0.0, members.size)  # apply_stiffness sets the values
        group = ConstraintGroup(
            mode=mode,
            ends=ends,
            rest=np.take(rest32, members),
            stiffness=zeros,
            inv_mass=inv_mass,
            limit=None if limit32 is None else np.take(limit32, members),
            hard_stiffness=None if limit is None else zeros,
        )
        part = GroupSource(
            None if ids32 is None else np.take(ids32, members),
            None if source.pair_scale is None else _pick(source.pair_scale, members),
            (source.place[0], len(out)),
        )
        out.append((group, part))
    return out


def _pick(values: np.ndarray, members: np.ndarray) -> np.ndarray:
    """``values[members]``, kept a memory-free view when ``values`` is one repeated number."""
    if values.ndim == 1 and values.strides == (0,) and values.size:
        return np.broadcast_to(values[0], (members.size,))
    return values[members]


def _every_other(entries: list[tuple[ConstraintGroup, GroupSource]], phase: int) -> None:
    """Solve these groups every second substep (with twice the step, so as stiff)."""
    for group, _ in entries:
        group.period, group.phase = 2, phase


def _spring_groups(
    model: ClothModel,
    settings: SimSettings,
    inv_mass: np.ndarray,
    bend_limit: np.ndarray,
) -> list[tuple[ConstraintGroup, GroupSource]]:
    """Bend (those with a span-2 limit as limited springs), shear, then structural groups."""
    springs, kinds = model.springs, model.kinds
    movable = np.take(inv_mass, np.ascontiguousarray(springs[:, 0]))
    movable += np.take(inv_mass, np.ascontiguousarray(springs[:, 1]))
    movable = movable > 0
    per_kind = np.array([settings.stiffness, settings.shear_stiffness, settings.bend_stiffness])
    if np.all(model.stiffness_scale == 1.0):  # every spring's scale is 1: x * 1.0 is x
        wanted = np.take(per_kind > 0, kinds)
    else:
        wanted = (per_kind[kinds] * model.spring_stiffness_scale()) > 0
    wanted |= np.isfinite(bend_limit)  # limits work without bending
    out: list[tuple[ConstraintGroup, GroupSource]] = []
    for kind in (SpringKind.BEND, SpringKind.SHEAR, SpringKind.STRUCTURAL):
        ids = np.flatnonzero(movable & wanted & (kinds == kind))
        if kind == SpringKind.BEND:
            finite = np.isfinite(bend_limit[ids])
            limited = ids[finite]
            ids = ids[~finite]
            part = coloured_groups(
                Mode.LIMITED_SPRING,
                rows_of(springs, limited),
                rows_of(model.rest_lengths, limited),
                GroupSource(spring_ids=limited, place=(STAGE_LIMITED_BEND, 0)),
                inv_mass,
                rows_of(bend_limit, limited),
            )
            _every_other(part, phase=1)  # with the span-4 limiters
            out += part
        source = GroupSource(ids, place=(STAGE_SPRINGS + int(SpringKind.BEND - kind), 0))
        part = coloured_groups(
            Mode.SPRING, rows_of(springs, ids), rows_of(model.rest_lengths, ids), source, inv_mass
        )
        out += part  # shear every substep: every other, a free sheet's shear grew unstable
    return out


def build_groups(
    model: ClothModel, settings: SimSettings, inv_mass: np.ndarray, report: Report | None = None
) -> tuple[list[ConstraintGroup], list[GroupSource]]:
    """Every colour group of one pass, in pass order, and where its stiffness comes from.

    ``report`` hears three of the ``BUILD_STAGES`` (the solver reports the rest)."""
    tell = report or _quiet
    tell("stretch limiters")
    sets, bend_limit = limiter_sets(model, settings, inv_mass)
    tell("colouring the limiters")
    entries: list[tuple[ConstraintGroup, GroupSource]] = []
    for level in reversed(range(len(sets))):
        ends, limits = sets.pop()  # dropped once coloured: the groups hold what they need
        scale = pair_scale(model, ends) if np.any(model.stiffness_scale != 1.0) else None
        if scale is None:
            scale = np.broadcast_to(np.float64(1.0), (ends.shape[0],))
        source = GroupSource(pair_scale=scale, place=(-level, 0))
        part = coloured_groups(Mode.LIMITER, ends, limits, source, inv_mass)
        if level >= LONG_LIMITER_LEVEL:
            _every_other(part, phase=level % 2)
        entries += part
    tell("colouring the springs")
    entries += _spring_groups(model, settings, inv_mass, bend_limit)
    return [g for g, _ in entries], [s for _, s in entries]


def _quiet(stage: str) -> None:
    del stage


def apply_stiffness(
    groups: list[ConstraintGroup],
    sources: list[GroupSource],
    model: ClothModel,
    settings: SimSettings,
) -> None:
    """Set every group's spring constants from ``settings`` (N/m, scaled by the paint).

    Without paint (every scale 1) a group's constants are one number seen as an array
    (``np.broadcast_to``): the same values, no memory per constraint."""
    per_kind = np.array([settings.stiffness, settings.shear_stiffness, settings.bend_stiffness])
    uniform = bool(np.all(model.stiffness_scale == 1.0))
    scale: np.ndarray | None = None  # per spring, made when first needed (not without paint)
    for group, source in zip(groups, sources, strict=True):
        size = group.size
        if source.spring_ids is not None:
            ids = source.spring_ids
            if uniform and size:
                group.stiffness = _same(per_kind[model.kinds[ids[0]]], size)
                if group.hard_stiffness is not None:
                    group.hard_stiffness = _same(settings.stiffness, size)
                continue
            if scale is None:
                scale = model.spring_stiffness_scale()
            group.stiffness = per_kind[model.kinds[ids]] * scale[ids]
            if group.hard_stiffness is not None:
                group.hard_stiffness = settings.stiffness * scale[ids]
        elif source.pair_scale is not None:
            if uniform:
                group.stiffness = _same(settings.stiffness, size)
            else:
                group.stiffness = settings.stiffness * source.pair_scale


def _same(value: float, size: int) -> np.ndarray:
    """``size`` copies of ``value`` (float64) that take no memory."""
    return np.broadcast_to(np.float64(value) * np.float64(1.0), (size,))


def build_tether_slots(model: ClothModel, settings: SimSettings) -> list[TetherSlot]:
    """Tethers to the nearest pins, one slot per pin rank (none when switched off)."""
    if not settings.tethers:
        return []
    tethers = build_tethers(
        model.rest_world, model.pinned, _not_bend(model), k=settings.tether_pins
    )
    return share_work(
        [
            TetherSlot(p, q, lim)
            for p, q, lim in zip(tethers.points, tethers.pins, tethers.lengths, strict=True)
        ]
    )


def _not_bend(model: ClothModel) -> np.ndarray:
    """The model's springs other than bend ones, in order: a view when the bend springs
    come last (as ``merge_with_kinds`` lists them), else a copy."""
    bend = model.kinds == SpringKind.BEND
    first = model.kinds.size - int(np.count_nonzero(bend))
    if bend[first:].all():
        return model.springs[:first]
    return model.springs[~bend]


def pair_scale(model: ClothModel, pairs: np.ndarray) -> np.ndarray:
    """The mean painted stiffness scale of each pair's two points."""
    s = model.stiffness_scale
    return 0.5 * (s[pairs[:, 0]] + s[pairs[:, 1]])
