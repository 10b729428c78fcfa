"""Materials (inline in a MeshMaterialList or shared by reference) and per-face indices."""

from __future__ import annotations

import numpy as np

from ..document import XObject, XReference
from ..names import is_word
from .model import MaterialData
from .values import children_named, flat_floats, member


def material_data(obj: XObject, cache: dict[int, MaterialData]) -> MaterialData:
    """One MaterialData per Material object: references to it share the same instance."""
    found = cache.get(id(obj))
    if found is not None:
        return found
    face = flat_floats(member(obj, 0, "faceColor"))
    spec = flat_floats(member(obj, 2, "specularColor"))
    emis = flat_floats(member(obj, 3, "emissiveColor"))
    texture = None
    for tex in children_named(obj, "TextureFilename"):
        name = tex.members.get("filename")
        if name is None and tex.members:
            name = next(iter(tex.members.values()))
        if isinstance(name, str):
            texture = name
            break
    data = MaterialData(
        name=obj.name,
        face_color=_pad(face, 4, 1.0),
        power=float(member(obj, 1, "power")),
        specular=_pad(spec, 3, 0.0),
        emissive=_pad(emis, 3, 0.0),
        texture=texture,
        source=obj,
    )
    cache[id(obj)] = data
    return data


def _pad(values: np.ndarray, size: int, fill: float) -> np.ndarray:
    out = np.full(size, fill, dtype=np.float64)
    out[: min(size, values.size)] = values[:size]
    return out


def material_list(
    obj: XObject, n_faces: int, cache: dict[int, MaterialData], warnings: list[str]
) -> tuple[np.ndarray | None, list[MaterialData]]:
    """(per-face material index, materials) of a MeshMaterialList, expanded to every face."""
    materials = [material_data(m, cache) for m in children_named(obj, "Material")]
    for child in obj.children:
        target = child.target if isinstance(child, XReference) else None
        if target is not None and not is_word(target.template, "material"):
            warnings.append(f"MeshMaterialList: reference to a {target.template}, not a Material")
    n_materials = int(member(obj, 0, "nMaterials"))
    if n_materials != len(materials):
        warnings.append(f"MeshMaterialList says {n_materials} materials, {len(materials)} found")
    indices = np.asarray(member(obj, 2, "faceIndexes"), dtype=np.int64).ravel()
    if indices.size == 0:
        indices = np.zeros(n_faces, dtype=np.int64)
    elif indices.size < n_faces:  # nFaceIndexes == 1 (all faces) or short: repeat the last
        if indices.size != 1:
            warnings.append(
                f"MeshMaterialList has {indices.size} face indexes for {n_faces} faces: "
                "the last one is repeated"
            )
        indices = np.concatenate([indices, np.full(n_faces - indices.size, indices[-1])])
    elif indices.size > n_faces:
        warnings.append(f"MeshMaterialList has {indices.size} face indexes for {n_faces} faces")
        indices = indices[:n_faces]
    if not materials:
        warnings.append("MeshMaterialList without any material")
        return None, materials
    bad = (indices < 0) | (indices >= len(materials))
    if bad.any():
        warnings.append(
            f"{int(bad.sum())} face material index(es) out of range 0..{len(materials) - 1}: "
            "set to 0"
        )
        indices = np.where(bad, 0, indices)
    return indices, materials
