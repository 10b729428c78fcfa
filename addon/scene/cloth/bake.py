"""Bake a simulation where any Blender tool can read it: shape keys or a .pc2 point cache.

Shape keys: a Basis (the rest shape) plus one key per frame, each animated to 1 on its frame
and 0 on its neighbours, so any frame shows exactly the simulated positions. PC2: the
frames as float32 after the ``<12siiffi`` header, read by a Mesh Cache modifier whose
``frame_start`` is the first baked frame (the modifier ignores the header's start).
"""

from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import Any

import numpy as np

from . import override as cloth_override
from . import runtime as cloth_runtime

PC2_HEADER = struct.Struct("<12siiffi")
PC2_MAGIC = b"POINTCACHE2\0"
KEY_PREFIX = "xof_cloth_"
MODIFIER_NAME = cloth_override.BAKE_MODIFIER


# -- pc2 files ----------------------------------------------------------------------------------


def write_pc2(path: str | Path, frames: np.ndarray, start: float, rate: float = 1.0) -> None:
    """Write ``frames`` ``(F, N, 3)`` as a PC2 file (one sample per ``rate`` frames)."""
    data = np.ascontiguousarray(frames, dtype="<f4")
    if data.ndim != 3 or data.shape[2] != 3:
        raise ValueError(f"frames must be (F, N, 3), got {data.shape}")
    header = PC2_HEADER.pack(PC2_MAGIC, 1, data.shape[1], float(start), float(rate), data.shape[0])
    with open(path, "wb") as fh:
        fh.write(header)
        fh.write(data.tobytes())


def read_pc2(path: str | Path) -> tuple[float, float, np.ndarray]:
    """``(start, rate, frames (F, N, 3) float32)`` of a PC2 file."""
    blob = Path(path).read_bytes()
    if len(blob) < PC2_HEADER.size:
        raise ValueError("pc2 file too short")
    magic, version, count, start, rate, samples = PC2_HEADER.unpack_from(blob, 0)
    if magic != PC2_MAGIC or version != 1:
        raise ValueError("not a PC2 file")
    expected = PC2_HEADER.size + samples * count * 12
    if len(blob) != expected:
        raise ValueError(f"pc2 size {len(blob)} does not match its header ({expected})")
    data = np.frombuffer(blob, dtype="<f4", offset=PC2_HEADER.size).reshape(samples, count, 3)
    return start, rate, data.astype(np.float32)


# -- simulate the whole range -------------------------------------------------------------------


def simulate_range(scene: Any, obj: Any) -> tuple[int, np.ndarray]:
    """Play the object's frame range through the handler; ``(start, frames (F, N, 3))``.

    Frames already cached and valid are reused; the scene returns to its current frame.
    """
    props = obj.xof_physics
    start, end = int(props.frame_start), int(props.frame_end)
    if end < start:
        raise ValueError(f"frame range {start}..{end} is empty")
    current = scene.frame_current
    for f in range(start, end + 1):
        scene.frame_set(f)
    cache = cloth_runtime.playback_for(obj).cache
    missing = [f for f in range(start, end + 1) if f not in cache]
    if missing:
        raise RuntimeError(f"frames {missing[:5]} were not simulated")
    frames = np.stack([cache.frames[f].positions for f in range(start, end + 1)])
    scene.frame_set(current)
    return start, frames


# -- bake targets -------------------------------------------------------------------------------


def _key_curve(key: Any, data_path: str) -> Any:
    """An F-curve on the shape-key datablock's action (4.4+ slotted actions, or older)."""
    action = key.animation_data.action
    ensure = getattr(action, "fcurve_ensure_for_datablock", None)
    if ensure is not None:
        return ensure(key, data_path)
    return action.fcurves.new(data_path)  # pragma: no cover - Blender < 4.4


def check_shape_key_target(obj: Any) -> None:
    """Refuse a shape-key bake that could not show the simulation (before simulating)."""
    if obj.data.shape_keys is not None:
        raise RuntimeError(f"{obj.name} already has shape keys: free them or bake to PC2")
    if cloth_override.needs_override(obj):
        names = ", ".join(
            m.name
            for m in obj.modifiers
            if m.type in cloth_override.DEFORMING and not cloth_override.is_ours(m)
        )
        raise RuntimeError(
            f"{obj.name} is deformed by its modifiers ({names}), which would move shape keys "
            "again: bake to a PC2 file (its Mesh Cache modifier comes last)"
        )


def bake_shape_keys(obj: Any, start: int, frames: np.ndarray) -> list[str]:
    """One animated shape key per frame on top of a rest-shape Basis; returns key names."""
    check_shape_key_target(obj)
    cloth_runtime.restore_rest(obj)
    obj.shape_key_add(name="Basis", from_mix=False)
    key = obj.data.shape_keys
    assert key is not None
    key.use_relative = True
    anim = key.animation_data_create()
    anim.action = _new_action(f"{obj.name} cloth bake")
    names: list[str] = []
    for i, positions in enumerate(frames):
        frame = start + i
        block = obj.shape_key_add(name=f"{KEY_PREFIX}{frame:04d}", from_mix=False)
        block.data.foreach_set("co", np.ascontiguousarray(positions, dtype=np.float32).ravel())
        curve = _key_curve(key, f'key_blocks["{block.name}"].value')
        times = [frame - 1, frame, frame + 1]
        values = [0.0, 1.0, 0.0]
        if i == len(frames) - 1:
            times, values = times[:2], values[:2]  # the last frame holds afterwards
        curve.keyframe_points.add(len(times))
        co = np.column_stack([times, values]).astype(np.float32).ravel()
        curve.keyframe_points.foreach_set("co", co)
        for point in curve.keyframe_points:
            point.interpolation = "LINEAR"
        curve.update()
        names.append(block.name)
    return names


def _new_action(name: str) -> Any:
    import bpy

    return bpy.data.actions.new(name)


def bake_pc2(obj: Any, start: int, frames: np.ndarray, path: str | Path) -> Any:
    """Write ``path`` and add (or refresh) a Mesh Cache modifier that plays it; refused
    (``check_pc2_target``) when ``path`` is another object's cache or not a point cache."""
    check_pc2_target(obj, os.path.abspath(path))
    write_pc2(path, frames, start)
    cloth_runtime.restore_rest(obj)
    mod = obj.modifiers.get(MODIFIER_NAME)
    if mod is None:
        mod = obj.modifiers.new(MODIFIER_NAME, "MESH_CACHE")
    mod.cache_format = "PC2"
    mod.filepath = blend_relative(str(path))
    mod.frame_start = float(start)
    mod.play_mode = "SCENE"
    mod.time_mode = "FRAME"
    mod.deform_mode = "OVERWRITE"
    mod.interpolation = "LINEAR"
    # after the deformers (its frames hold their pins), before Subdivision or Solidify
    cloth_override.place_after_deformers(obj, mod)
    return mod


def blend_relative(path: str) -> str:
    """``path`` relative to the saved .blend (``//...``), as Blender's own caches keep theirs,
    so moving the project folder keeps the bake; absolute when that is impossible."""
    import bpy

    if not bpy.data.filepath:
        return path
    try:
        return str(bpy.path.relpath(path))
    except ValueError:  # another drive (Windows)
        return path


def baked_file(obj: Any) -> str | None:
    """The absolute path of the .pc2 file a bake of ``obj`` wrote and still reads, if it exists."""
    mod = obj.modifiers.get(MODIFIER_NAME) if obj is not None else None
    if mod is None or mod.type != "MESH_CACHE" or not mod.filepath:
        return None
    path = _modifier_path(obj, mod)
    return path if os.path.isfile(path) else None


def _modifier_path(obj: Any, mod: Any) -> str:
    """The absolute path a Mesh Cache modifier of ``obj`` reads (``//`` resolved against the
    library the object comes from, if linked)."""
    import bpy

    return os.path.normpath(str(bpy.path.abspath(mod.filepath, library=obj.library)))


def same_file(a: str, b: str) -> bool:
    """Whether two absolute paths name one file (links and ``..`` resolved)."""
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet)
        return os.path.normcase(os.path.realpath(a)) == os.path.normcase(os.path.realpath(b))


def cache_readers(path: str, obj: Any = None) -> list[str]:
    """Names of the objects whose Mesh Cache modifiers read ``path``, every object in the
    file but ``obj``'s own bake modifier (a Shift+D copy of a baked object reads its file)."""
    import bpy

    names: list[str] = []
    for other in bpy.data.objects:
        mod: Any
        for mod in other.modifiers:
            if mod.type != "MESH_CACHE" or not mod.filepath:
                continue
            if obj is not None and other == obj and mod.name == MODIFIER_NAME:
                continue
            if same_file(_modifier_path(other, mod), path):
                names.append(other.name)
                break
    return names


def pc2_point_count(path: str | Path) -> int | None:
    """The point count a PC2 file's header declares, or None when ``path`` is not a point
    cache (no ``POINTCACHE2`` magic, another version, or a size its header does not give)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(PC2_HEADER.size)
            size = os.fstat(fh.fileno()).st_size
    except OSError:
        return None
    if len(head) < PC2_HEADER.size:
        return None
    magic, version, count, _start, _rate, samples = PC2_HEADER.unpack(head)
    if magic != PC2_MAGIC or version != 1 or count < 0 or samples < 0:
        return None
    if size != PC2_HEADER.size + samples * count * 12:
        return None
    return int(count)


def why_not_delete(obj: Any, path: str) -> str | None:
    """Why Free Bake of ``obj`` must keep ``path`` (None: it may delete it): another object
    still plays it, or it is not a point cache of this mesh's vertex count."""
    readers = cache_readers(path, obj)
    if readers:
        return f"still played by {_names(readers)}"
    count = pc2_point_count(path)
    if count is None:
        return "not a PC2 point cache"
    points = len(obj.data.vertices)
    if count != points:
        return f"a point cache of {count} points, this mesh has {points}"
    return None


def check_pc2_target(obj: Any, path: str) -> None:
    """Refuse a PC2 bake of ``obj`` to ``path`` that would replace a file another object
    plays, or a file that is not a point cache of this mesh's vertex count."""
    readers = cache_readers(path, obj)
    if readers:
        raise RuntimeError(
            f"{path} is played by {_names(readers)} (Mesh Cache): set another PC2 file path"
        )
    if not os.path.lexists(path):
        return
    count = pc2_point_count(path) if os.path.isfile(path) else None
    if count is None:
        raise RuntimeError(f"{path} exists and is not a PC2 point cache: not overwritten")
    points = len(obj.data.vertices)
    if count != points:
        raise RuntimeError(
            f"{path} is a point cache of {count} points, this mesh has {points}: "
            "not overwritten (delete it or set another PC2 file path)"
        )


def _names(names: list[str]) -> str:
    shown = ", ".join(f'"{n}"' for n in names[:3])
    return shown if len(names) <= 3 else f"{shown} and {len(names) - 3} more"


def free_bake(obj: Any) -> None:
    """Remove what a bake added (our shape keys and their action, our Mesh Cache modifier)."""
    key = obj.data.shape_keys
    if key is not None and any(b.name.startswith(KEY_PREFIX) for b in key.key_blocks):
        action = key.animation_data.action if key.animation_data else None
        obj.shape_key_clear()
        if action is not None and action.users == 0:
            _remove_action(action)
    mod = obj.modifiers.get(MODIFIER_NAME)
    if mod is not None:
        obj.modifiers.remove(mod)


def _remove_action(action: Any) -> None:
    import bpy

    bpy.data.actions.remove(action)
