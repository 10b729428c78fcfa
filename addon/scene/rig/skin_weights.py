"""A mesh's SkinWeights -> clean per-bone vertex weights, with what was wrong (no bpy).

Broken files exist (indices past the vertex count, NaN weights, SkinWeights naming a frame
the file lacks): the bad entries are dropped and reported, the rest imports. Weights that do
not sum to 1 per vertex are normalised (D3D renders them as given, but Blender's Armature
modifier divides by the sum anyway; normalising makes the stored data say what is shown).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...xfile.views.model import MeshData

#: a vertex whose weights sum differs from 1 by more than this is normalised and counted
SUM_TOLERANCE = 1e-3


@dataclass(eq=False)
class GroupWeights:
    frame_name: str  # as the file names it
    indices: np.ndarray  # (k,) unique vertex indices
    weights: np.ndarray  # (k,) float64, > 0


@dataclass(eq=False)
class SkinPlan:
    groups: list[GroupWeights] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    normalised: int = 0  # vertices whose sums were rescaled
    max_influences: int = 0  # largest number of bones on one vertex


def plan_skin(mesh: MeshData, n_vertices: int) -> SkinPlan:
    """Validated, merged, normalised weights of ``mesh``'s SkinWeights.

    Works on the (bone, vertex, weight) entries only, never on a bones x vertices table.
    """
    out = SkinPlan()
    skin = mesh.skin
    if skin is None:
        return out
    label = mesh.name or "<unnamed mesh>"
    names: dict[str, int] = {}  # frame name -> group number, in file order
    bones, vertices, values = [], [], []
    bad_index = bad_weight = mismatched = 0
    for sw in skin.weights:
        idx = np.asarray(sw.indices, dtype=np.int64).reshape(-1)
        w = np.asarray(sw.weights, dtype=np.float64).reshape(-1)
        if len(idx) != len(w):
            mismatched += 1
            n = min(len(idx), len(w))
            idx, w = idx[:n], w[:n]
        in_range = (idx >= 0) & (idx < n_vertices)
        finite = np.isfinite(w)
        bad_index += int(np.count_nonzero(~in_range))
        bad_weight += int(np.count_nonzero(in_range & (~finite | (w < 0.0))))
        keep = in_range & finite & (w > 0.0)
        number = names.setdefault(sw.frame_name, len(names))
        bones.append(np.full(int(np.count_nonzero(keep)), number, dtype=np.int64))
        vertices.append(idx[keep])
        values.append(w[keep])
    if bad_index:
        out.warnings.append(f"{label}: {bad_index} skin weight(s) with vertex index out of range")
    if bad_weight:
        out.warnings.append(f"{label}: {bad_weight} skin weight(s) not finite or negative")
    if mismatched:
        out.warnings.append(f"{label}: {mismatched} SkinWeights with index/weight count mismatch")
    if not names:
        return out
    # merge repeated (bone, vertex) entries; sorted by bone, then vertex
    keys, inverse = np.unique(
        np.concatenate(bones) * n_vertices + np.concatenate(vertices), return_inverse=True
    )
    weights = np.bincount(inverse.reshape(-1), np.concatenate(values), minlength=len(keys))
    bone, vertex = np.divmod(keys, n_vertices)
    sums = np.bincount(vertex, weights, minlength=n_vertices)
    out.normalised = int(np.count_nonzero((sums > 0.0) & (np.abs(sums - 1.0) > SUM_TOLERANCE)))
    if out.normalised:
        out.warnings.append(
            f"{label}: {out.normalised} vertices' skin weights did not sum to 1; normalised"
        )
    weights = weights / sums[vertex]
    influences = np.bincount(vertex, minlength=1)
    out.max_influences = int(influences.max())
    bounds = np.searchsorted(bone, np.arange(len(names) + 1))
    for name, number in names.items():
        part = slice(bounds[number], bounds[number + 1])
        out.groups.append(GroupWeights(name, vertex[part], weights[part]))
    out.warnings.extend(_header_warnings(label, skin, len(skin.weights), out.max_influences))
    return out


def weight_batches(indices: np.ndarray, weights: np.ndarray) -> list[tuple[np.ndarray, float, str]]:
    """``VertexGroup.add(indices, weight, "REPLACE")`` calls, one per distinct stored weight.

    Blender stores float32 weights and takes one weight per call, so weights equal in float32
    share a call (``add`` costs about as much per index as per call, so fewer, larger calls
    built from binary digits in ADD mode would not be cheaper).
    """
    indices = np.asarray(indices, dtype=np.int64)
    w32 = np.asarray(weights, dtype=np.float64).astype(np.float32)
    values, inverse = np.unique(w32, return_inverse=True)
    order = np.argsort(inverse, kind="stable")
    bounds = np.searchsorted(inverse[order], np.arange(len(values) + 1))
    return [
        (indices[order[bounds[k] : bounds[k + 1]]], float(value), "REPLACE")
        for k, value in enumerate(values)
    ]


def _header_warnings(label: str, skin: object, n_weights: int, max_influences: int) -> list[str]:
    """XSkinMeshHeader against the data (the header is advisory; the data wins)."""
    notes: list[str] = []
    per_vertex = getattr(skin, "max_weights_per_vertex", None)
    bones = getattr(skin, "bone_count", None)
    if per_vertex is not None and max_influences > per_vertex:
        notes.append(
            f"{label}: XSkinMeshHeader allows {per_vertex} weights per vertex, "
            f"the data has up to {max_influences}"
        )
    if bones is not None and bones != n_weights:
        notes.append(f"{label}: XSkinMeshHeader says {bones} bones, the mesh has {n_weights}")
    return notes
