"""DeclData and FVFData: extra per-vertex data stored as raw DWORDs.

The DWORDs hold float *bit patterns* (1065353216 is 1.0f), so they are reinterpreted, not
converted. Results are keyed by usage: ``normal``, ``texcoord0``.., ``tangent``, ``binormal``,
``color0``.., others ``usage<U>_<index>``; each an (n_vertices, k) float64 array.
"""

from __future__ import annotations

import numpy as np

from ..document import XObject
from .values import member

# D3DDECLTYPE -> (DWORDs per vertex, decoder name)
_DECL_TYPES = {
    0: (1, "float"), 1: (2, "float"), 2: (3, "float"), 3: (4, "float"),
    4: (1, "color"), 5: (1, "ubyte4"), 6: (1, "short2"), 7: (2, "short4"),
    8: (1, "ubyte4n"), 9: (1, "short2n"), 10: (2, "short4n"), 11: (1, "ushort2n"),
    12: (2, "ushort4n"), 13: (1, "udec3"), 14: (1, "dec3n"), 15: (1, "half2"), 16: (2, "half4"),
}  # fmt: skip
_USAGE_NAMES = {3: "normal", 5: "texcoord", 6: "tangent", 7: "binormal", 10: "color"}


def _decode(words: np.ndarray, kind: str) -> np.ndarray:
    """(n, dwords) uint32 -> (n, components) float64."""
    raw = np.ascontiguousarray(words, dtype=np.uint32)
    if kind == "float":
        with np.errstate(invalid="ignore"):  # signalling NaN bit patterns stay NaN
            return raw.view(np.float32).astype(np.float64)
    if kind == "color":  # D3DCOLOR 0xAARRGGBB -> RGBA in 0..1
        b = raw[:, 0]
        argb = np.stack([(b >> 16) & 255, (b >> 8) & 255, b & 255, (b >> 24) & 255], axis=1)
        return argb.astype(np.float64) / 255.0
    if kind in ("ubyte4", "ubyte4n"):
        out = raw.view(np.uint8).astype(np.float64)
        return out / 255.0 if kind == "ubyte4n" else out
    if kind in ("short2", "short4", "short2n", "short4n"):
        out = raw.view(np.int16).astype(np.float64)
        return out / 32767.0 if kind.endswith("n") else out
    if kind in ("ushort2n", "ushort4n"):
        return raw.view(np.uint16).astype(np.float64) / 65535.0
    if kind in ("half2", "half4"):
        return raw.view(np.float16).astype(np.float64)
    if kind in ("udec3", "dec3n"):
        b = raw[:, 0].astype(np.int64)
        parts = np.stack([b & 1023, (b >> 10) & 1023, (b >> 20) & 1023], axis=1)
        if kind == "dec3n":
            parts = np.where(parts >= 512, parts - 1024, parts) / 511.0
        return parts.astype(np.float64)
    raise ValueError(kind)


def _key(usage: int, index: int, taken: dict[str, np.ndarray]) -> str:
    base = _USAGE_NAMES.get(usage)
    if base in ("texcoord", "color"):
        key = f"{base}{index}"
    elif base is not None:
        key = base if index == 0 else f"{base}{index}"
    else:
        key = f"usage{usage}_{index}"
    while key in taken:
        key += "_"
    return key


def decode_decl(obj: XObject, n_vertices: int, warnings: list[str]) -> dict[str, np.ndarray]:
    elements = np.asarray(member(obj, 1, "Elements"), dtype=np.int64).reshape(-1, 4)
    data = np.asarray(member(obj, 3, "data"), dtype=np.int64).ravel()
    layout = []
    stride = 0
    for type_, _method, usage, index in elements.tolist():
        size, kind = _DECL_TYPES.get(type_, (0, ""))
        if not size:
            warnings.append(f"DeclData: unknown vertex element type {type_}")
            return {}
        layout.append((stride, size, kind, usage, index))
        stride += size
    return _split(data, n_vertices, stride, layout, "DeclData", warnings)


def decode_fvf(obj: XObject, n_vertices: int, warnings: list[str]) -> dict[str, np.ndarray]:
    """FVFData holds what the standard templates do not: per vertex, in FVF order."""
    fvf = int(member(obj, 0, "dwFVF"))
    data = np.asarray(member(obj, 2, "data"), dtype=np.int64).ravel()
    layout = []
    stride = 0
    if fvf & 0x10:  # D3DFVF_NORMAL
        layout.append((stride, 3, "float", 3, 0))
        stride += 3
    if fvf & 0x20:  # D3DFVF_PSIZE
        layout.append((stride, 1, "float", 4, 0))
        stride += 1
    if fvf & 0x40:  # D3DFVF_DIFFUSE
        layout.append((stride, 1, "color", 10, 0))
        stride += 1
    if fvf & 0x80:  # D3DFVF_SPECULAR
        layout.append((stride, 1, "color", 10, 1))
        stride += 1
    for t in range((fvf >> 8) & 0xF):
        code = (fvf >> (16 + 2 * t)) & 3
        size = {0: 2, 1: 3, 2: 4, 3: 1}[code]
        layout.append((stride, size, "float", 5, t))
        stride += size
    return _split(data, n_vertices, stride, layout, "FVFData", warnings)


def _split(
    data: np.ndarray, n_vertices: int, stride: int, layout: list, what: str, warnings: list[str]
) -> dict[str, np.ndarray]:
    if stride == 0 or n_vertices == 0:
        return {}
    if data.size != stride * n_vertices:
        warnings.append(
            f"{what}: {data.size} DWORDs, expected {stride} per vertex x {n_vertices} vertices"
        )
        return {}
    if data.min(initial=0) < -(2**31) or data.max(initial=0) >= 2**32:
        warnings.append(f"{what}: values out of DWORD range")
        return {}
    words = (data & 0xFFFFFFFF).astype(np.uint32).reshape(n_vertices, stride)
    out: dict[str, np.ndarray] = {}
    for start, size, kind, usage, index in layout:
        out[_key(usage, index, out)] = _decode(words[:, start : start + size], kind)
    return out
