"""Linear keys written straight into an F-curve's keyframe array (numpy + ctypes, no bpy).

``foreach_set("co")`` goes key by key through RNA (``Keyframe.co`` has its own setter):
~28 ns a key, 3M keys on a big character. Blender keeps an F-curve's keys as one C array
of ``BezTriple`` (DNA_curve_types.h): 72 bytes a key, ``co`` at ``vec[1]`` (bytes 12-19),
the interpolation a byte at 48. :func:`write_keys` writes those two fields of every
key with one strided numpy assignment, after checking once per process, on a real curve,
that Blender sees there exactly what was written (and writes there what it reads): any
other layout (another Blender build) leaves the array as it was and keeps RNA's route.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

KEY_BYTES = 72  # sizeof(BezTriple)
#: the fields written: co = vec[1][0:2] (two floats, moved as one 8-byte word: half the time
#: of a (k, 2) float copy), ipo (char)
RECORD = np.dtype(
    {"names": ["co", "ipo"], "formats": ["=u8", "u1"], "offsets": [12, 48],
     "itemsize": KEY_BYTES}
)  # fmt: skip
CONSTANT, LINEAR = 0, 1  # Keyframe.interpolation's enum values (ipo)


def _key_array(points: Any, count: int) -> np.ndarray | None:
    """The curve's keys as a numpy view of Blender's memory, or None when its keys are not
    72 bytes apart (then nothing is read or written)."""
    first = points[0].as_pointer()
    if points[1].as_pointer() - first != KEY_BYTES:
        return None
    if points[count - 1].as_pointer() - first != KEY_BYTES * (count - 1):
        return None
    block = (ctypes.c_char * (KEY_BYTES * count)).from_address(first)
    return np.frombuffer(memoryview(block), dtype=np.uint8)


def _rna_write(points: Any, co: np.ndarray, interpolation: np.ndarray) -> None:
    points.foreach_set("co", co)
    points.foreach_set("interpolation", interpolation)


#: None: not yet proven; True: the layout was proven on a curve of this process; False:
#: RNA's ``foreach_set`` for every curve (tests set it to pick a route)
direct: bool | None = None


def write_keys(points: Any, co: np.ndarray, interpolation: np.ndarray) -> None:
    """``co`` (flat float32 ``x0, y0, x1, ...``) and interpolation (uint8 a key) of the keys
    ``keyframe_points.add`` just made, as ``foreach_set`` of both would leave them."""
    global direct
    count = len(interpolation)
    if count < 2 or direct is False or len(points) != count:  # only a curve's whole array
        _rna_write(points, co, interpolation)
        return
    if direct is None:
        direct = _prove(points, co, interpolation)
        return
    raw = _key_array(points, count)
    if raw is None:  # pragma: no cover - the spacing was proven on this build
        _rna_write(points, co, interpolation)
        return
    keys = raw.view(RECORD)
    keys["co"] = _words(co)
    keys["ipo"] = interpolation


def _words(co: np.ndarray) -> np.ndarray:
    """Each key's two float32 as one 8-byte word (the same bytes)."""
    return np.ascontiguousarray(co, dtype=np.float32).view(np.dtype("=u8"))


_FIELD_BYTES = np.zeros(KEY_BYTES, bool)
_FIELD_BYTES[12:20] = True
_FIELD_BYTES[48] = True


def _prove(points: Any, co: np.ndarray, interpolation: np.ndarray) -> bool:
    """Write one curve's keys both ways and compare; True when the layout holds.

    A direct write of ``co`` and CONSTANT, read through RNA; then RNA's write of the real
    interpolation, read directly. On any difference the block's bytes are restored and RNA
    writes the keys: the curve ends as RNA's route leaves it either way.
    """
    count = len(interpolation)
    raw = _key_array(points, count)
    if raw is None:
        _rna_write(points, co, interpolation)
        return False
    before = raw.copy()
    keys = raw.view(RECORD)
    keys["co"] = _words(co)
    keys["ipo"] = CONSTANT
    seen_co = np.empty(2 * count, np.float32)
    points.foreach_get("co", seen_co)
    seen_ipo = np.empty(count, np.uint8)
    points.foreach_get("interpolation", seen_ipo)
    # bits compared; the frames are distinct, so a wrong offset cannot read them all back
    same = np.array_equal(seen_co.view(np.uint32), co.view(np.uint32)) and not seen_ipo.any()
    touched = (raw != before).reshape(count, KEY_BYTES)
    same = same and not (touched & ~_FIELD_BYTES).any()
    if same:
        points.foreach_set("interpolation", interpolation)
        same = np.array_equal(keys["ipo"], interpolation)
    if not same:
        raw[:] = before
        _rna_write(points, co, interpolation)
    return bool(same)
