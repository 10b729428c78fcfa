"""Typed views of a document: plain data the importer, the solvers and the writer use.

Everything is in the file's own space and conventions (D3D, left-handed, Y up, row-vector
matrices, UV v down); converting to Blender's space is the scene layer's job. Vertex order is
the file's: cloth masses, springs, skin weights and morph targets index it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import numpy as np

from ..document import XObject


@dataclass(eq=False)
class MaterialData:
    name: str | None
    face_color: np.ndarray  # (4,) RGBA
    power: float
    specular: np.ndarray  # (3,) RGB
    emissive: np.ndarray  # (3,) RGB
    texture: str | None  # TextureFilename as written (may be a relative or Windows path)
    source: XObject | None = None  # the Material object (shared when referenced)


@dataclass(eq=False)
class SkinWeightsData:
    frame_name: str
    indices: np.ndarray  # (k,) int64 file vertex indices
    weights: np.ndarray  # (k,) float64
    offset: np.ndarray  # (4, 4) matrixOffset, D3D row-vector convention


@dataclass(eq=False)
class SkinData:
    max_weights_per_vertex: int | None  # from XSkinMeshHeader, None when absent
    max_weights_per_face: int | None
    bone_count: int | None
    weights: list[SkinWeightsData] = field(default_factory=list)


@dataclass(eq=False)
class ClothData:
    masses: np.ndarray | None  # (n,) float64, one per file vertex; 0 = pinned
    springs: np.ndarray | None  # (k, 2) int64 vertex index pairs


@dataclass(eq=False)
class MeshData:
    name: str | None
    positions: np.ndarray  # (n, 3) float64
    face_sizes: np.ndarray  # (f,) int64 corners per face
    corners: np.ndarray  # (sum(face_sizes),) int64 vertex index per corner
    normals: np.ndarray | None = None  # (m, 3) MeshNormals' normal array
    normal_corners: np.ndarray | None = None  # (corners,) index into normals per corner
    uv_sets: list[np.ndarray] = field(default_factory=list)  # each (n, 2) per vertex
    colors: np.ndarray | None = None  # (n, 4) RGBA per vertex (white where the file gave none)
    material_indices: np.ndarray | None = None  # (f,) int64, expanded when nFaceIndexes == 1
    materials: list[MaterialData] = field(default_factory=list)
    skin: SkinData | None = None
    cloth: ClothData | None = None
    decl: dict[str, np.ndarray] = field(default_factory=dict)  # DeclData/FVFData by usage
    source: XObject | None = None
    warnings: list[str] = field(default_factory=list)


@dataclass(slots=True, eq=False)
class FrameData:
    name: str | None
    matrix: np.ndarray  # (4, 4) FrameTransformMatrix (identity when absent), row-vector
    children: list[FrameData] = field(default_factory=list)
    meshes: list[MeshData] = field(default_factory=list)
    source: XObject | None = None
    extras: list[XObject] = field(default_factory=list)  # children we do not interpret


@dataclass(eq=False)
class KeyTrack:
    key_type: int  # 0 rotation (w,x,y,z), 1 scale, 2 position, 3/4 matrix (16)
    times: np.ndarray  # (k,) float64 ticks
    values: np.ndarray  # (k, 4|3|16) float64


@dataclass(eq=False)
class AnimationData:
    frame_name: str | None  # the frame it animates (from the {reference} or its name)
    tracks: list[KeyTrack] = field(default_factory=list)
    open: bool = True  # AnimationOptions openclosed: 1 open, 0 closed (loops)
    linear: bool = True  # AnimationOptions positionquality: 1 linear, 0 spline


@dataclass(eq=False)
class AnimationSetData:
    name: str | None
    animations: list[AnimationData] = field(default_factory=list)


@dataclass(eq=False)
class MorphKeyData:
    time_ms: float
    mesh_name: str


@dataclass(eq=False)
class MorphSetData:
    name: str | None
    loop: bool
    keys: list[MorphKeyData] = field(default_factory=list)


@dataclass(eq=False)
class SceneData:
    """All a file holds, as the importer walks it."""

    frames: list[FrameData] = field(default_factory=list)  # top-level frames
    meshes: list[MeshData] = field(default_factory=list)  # top-level meshes (outside frames)
    animation_sets: list[AnimationSetData] = field(default_factory=list)
    ticks_per_second: float | None = None  # AnimTicksPerSecond; None when absent (use 4800)
    morph_sets: list[MorphSetData] = field(default_factory=list)
    extras: list[XObject] = field(default_factory=list)  # top-level objects not interpreted
    warnings: list[str] = field(default_factory=list)

    def all_meshes(self) -> list[MeshData]:
        """Every mesh, inside frames or not, in file order of their frames."""
        out: list[MeshData] = list(self.meshes)
        for frame in depth_first(self.frames):
            out.extend(frame.meshes)
        return out


def depth_first(frames: Iterable[FrameData]) -> Iterator[FrameData]:
    """``frames`` and every frame under them, each parent before its children, in file order
    (a recursive walk's order). The open frames wait on a list, not on Python's stack: a
    chain as deep as the reader reads is walked as a flat one is."""
    todo = list(frames)[::-1]
    while todo:
        frame = todo.pop()
        yield frame
        todo.extend(reversed(frame.children))
