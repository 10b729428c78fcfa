"""ClothMasses / ClothSprings: inside a Mesh, or at top level after it.

A top-level ClothMasses belongs to the mesh with as many vertices, preferring the nearest
mesh before it in the file; a top-level ClothSprings to the nearest mesh before it whose
vertex count covers its indices (else any mesh that does).
"""

from __future__ import annotations

import numpy as np

from ..document import XObject
from .model import ClothData, MeshData
from .values import DATA_ERRORS, children_named, flat_floats, member


def masses_of(obj: XObject) -> np.ndarray:
    return flat_floats(member(obj, 1, "Mass"))


def springs_of(obj: XObject, warnings: list[str]) -> np.ndarray:
    flat = np.asarray(member(obj, 2, "Vertex"), dtype=np.int64).ravel()
    if flat.size % 2:
        warnings.append(f"ClothSprings: odd number of indices ({flat.size}); last one ignored")
        flat = flat[:-1]
    n_springs = int(member(obj, 0, "NumSprings"))
    if n_springs * 2 != flat.size:
        warnings.append(f"ClothSprings: NumSprings {n_springs} but {flat.size // 2} pairs")
    return flat.reshape(-1, 2)


def check_cloth(cloth: ClothData, n: int, warnings: list[str]) -> ClothData:
    if cloth.masses is not None and len(cloth.masses) != n:
        warnings.append(f"ClothMasses: {len(cloth.masses)} masses for {n} vertices: ignored")
        cloth.masses = None
    if cloth.springs is not None and cloth.springs.size:
        bad = (cloth.springs < 0).any(axis=1) | (cloth.springs >= n).any(axis=1)
        if bad.any():
            warnings.append(f"ClothSprings: {int(bad.sum())} spring(s) out of range dropped")
            cloth.springs = cloth.springs[~bad]
    return cloth


def cloth_from_children(obj: XObject, n: int, warnings: list[str]) -> ClothData | None:
    masses = children_named(obj, "ClothMasses")
    springs = children_named(obj, "ClothSprings")
    if not masses and not springs:
        return None
    cloth = ClothData(
        masses_of(masses[0]) if masses else None,
        springs_of(springs[0], warnings) if springs else None,
    )
    return check_cloth(cloth, n, warnings)


def attach_top_level(order: list[tuple[str, MeshData | XObject]], warnings: list[str]) -> None:
    """``order``: ("mesh", MeshData) / ("masses"|"springs", XObject) in file order."""
    meshes_before: list[MeshData] = []
    all_meshes = [m for _, m in order if isinstance(m, MeshData)]
    for kind, item in order:
        if isinstance(item, MeshData):
            meshes_before.append(item)
            continue
        try:
            if kind == "masses":
                masses = masses_of(item)
                exact, need = True, len(masses)
            else:
                springs = springs_of(item, warnings)
                exact, need = False, int(springs.max()) + 1 if springs.size else 0
        except DATA_ERRORS as exc:
            warnings.append(f"top-level {item.template} ignored: {exc}")
            continue

        def fits(mesh: MeshData, exact: bool = exact, need: int = need) -> bool:
            n = len(mesh.positions)
            return n == need if exact else n >= need

        target = next((m for m in reversed(meshes_before) if fits(m)), None)
        if target is None:
            target = next((m for m in all_meshes if fits(m)), None)
        if target is None:
            warnings.append(f"top-level {item.template} matches no mesh: ignored")
            continue
        cloth = target.cloth or ClothData(None, None)
        if kind == "masses":
            cloth.masses = masses
        else:
            cloth.springs = springs
        target.cloth = check_cloth(cloth, len(target.positions), target.warnings)
