"""How many ticks a second a file's key times count, when the file may not say (no bpy).

``AnimTicksPerSecond`` is optional: D3DX then uses 4,800. Many exporters (and the samples
of several engines) write key times in frames and no tick rate; at 4,800 their whole
animation lasts a fraction of a frame. The "Auto" choice takes the file's value when it has
one, else 4,800 unless that makes the longest set shorter than about one second, in which
case a tick is a frame at the scene's rate. Every choice says in a note what it used.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...xfile.views.model import SceneData

DEFAULT_TICKS_PER_SECOND = 4800.0
#: under Auto, a file without a tick rate whose longest set lasts less than this at 4,800
#: ticks/s counts its ticks in frames
FRAMES_BELOW_SECONDS = 1.0
MAX_FRAME = 1048574  # Blender's last frame (MAXFRAME): a scene's range ends by it

AUTO = "AUTO"  # the file's value, else 4,800 or frames (see the module docstring)
FILE = "FILE"  # the file's value, else 4,800 (D3DX)


@dataclass(frozen=True)
class TickRate:
    ticks_per_second: float
    source: str  # "file", "default" (4,800), "frames" (ticks are frames), "option"
    note: str | None  # for the report; None when the file's own value is used as is


def longest_span(data: SceneData) -> float:
    """Ticks from the first to the last key of the longest AnimationSet (0 without keys)."""
    longest = 0.0
    for aset in data.animation_sets:
        times = [
            np.asarray(t.times, dtype=np.float64).ravel() for a in aset.animations for t in a.tracks
        ]
        times = [t[np.isfinite(t)] for t in times if len(t)]
        times = [t for t in times if len(t)]
        if times:
            both = np.concatenate(times)
            longest = max(longest, float(both.max() - both.min()))
    return longest


def resolve_ticks_per_second(
    data: SceneData, scene_fps: float, choice: str | float = AUTO
) -> TickRate:
    """The tick rate for ``data``'s keys: ``choice`` is AUTO, FILE or a positive number."""
    file_tps = data.ticks_per_second
    usable = file_tps is not None and np.isfinite(file_tps) and file_tps > 0
    if not isinstance(choice, str):
        value = float(choice)
        if np.isfinite(value) and value > 0:
            return TickRate(value, "option", f"key times read at {value:g} ticks per second")
        choice = AUTO
    if usable:
        return TickRate(float(file_tps), "file", None)  # type: ignore[arg-type]
    bad = "" if file_tps is None else f"AnimTicksPerSecond {file_tps:g} is not positive; "
    default = f"{bad or 'no AnimTicksPerSecond: '}4800 ticks per second (D3DX's)"
    if choice == FILE:
        return TickRate(DEFAULT_TICKS_PER_SECOND, "default", default)
    span = longest_span(data)
    seconds = span / DEFAULT_TICKS_PER_SECOND
    if span > 0 and seconds < FRAMES_BELOW_SECONDS and scene_fps > 0:
        return TickRate(
            float(scene_fps),
            "frames",
            f"{bad or 'no AnimTicksPerSecond: '}key times read as frames at {scene_fps:g} fps "
            f"(at 4800 ticks per second the longest set would last {seconds:.2g} s)",
        )
    return TickRate(DEFAULT_TICKS_PER_SECOND, "default", default)
