"""Builders for the data objects an exporter writes, with the standard member names.

Plain functions from arrays to :class:`XObject`: the Blender side fills them in, the writer
encodes them. Arrays are taken as given (file space, file vertex order).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..document import Ragged, XDocument, XObject, XReference
from ..standard_templates import standard_templates


def document(objects: Sequence[XObject | XReference], declared: Sequence[str] = ()) -> XDocument:
    return XDocument(None, "txt", "0303", 32, standard_templates(), list(declared), list(objects))


def faces(sizes: np.ndarray, corners: np.ndarray) -> Ragged:
    """``MeshFace`` records ``[k, i0..ik-1]`` from face sizes and the flat corner indices
    (int32 corners stay int32: the binary encoder then writes them without a cast)."""
    sizes = np.asarray(sizes, dtype=np.int64)
    corners = np.asarray(corners)
    dtype = np.int32 if corners.dtype == np.int32 else np.int64
    count = len(sizes)
    if count and sizes[0] > 0 and len(corners) == count * int(sizes[0]):
        k = int(sizes[0])
        if np.all(sizes == k):  # one size (a grid of quads): a table, no masks
            table = np.empty((count, k + 1), dtype=dtype)
            table[:, 0] = k
            table[:, 1:] = corners.reshape(count, k)
            return Ragged(table.reshape(-1), np.arange(0, count * (k + 1), k + 1))
    starts = np.zeros(count, dtype=np.int64)
    if count > 1:
        np.cumsum(sizes[:-1] + 1, out=starts[1:])
    flat = np.empty(len(corners) + count, dtype=dtype)
    is_count = np.zeros(len(flat), dtype=bool)
    is_count[starts] = True
    flat[is_count] = sizes
    flat[~is_count] = corners
    return Ragged(flat, starts)


def _floats(values: object, width: int) -> np.ndarray:
    """Rows of floats as given (float32 stays float32: the encoders round to the file's size
    anyway, and a float64 copy of a million rows costs time); other inputs become float64."""
    a = np.asarray(values)
    if a.dtype not in (np.float32, np.float64):
        a = a.astype(np.float64)
    return a.reshape(-1, width)


def frame(name: str | None, matrix: np.ndarray, children: Sequence[XObject] = ()) -> XObject:
    ftm = XObject("FrameTransformMatrix", members={"frameMatrix": {"matrix": _m16(matrix)}})
    return XObject("Frame", name, children=[ftm, *children])


def _m16(matrix: np.ndarray) -> np.ndarray:
    return np.asarray(matrix, dtype=np.float64).reshape(16).copy()


def mesh(
    name: str | None,
    positions: np.ndarray,
    sizes: np.ndarray,
    corners: np.ndarray | None,
    records: Ragged | None = None,
) -> XObject:
    """``records``: the face records already made (then ``corners`` is not read)."""
    positions = _floats(positions, 3)
    if records is None:
        assert corners is not None
        records = faces(sizes, corners)
    members = {
        "nVertices": len(positions),
        "vertices": positions,
        "nFaces": len(sizes),
        "faces": records,
    }
    return XObject("Mesh", name, members=members)


def mesh_normals(normals: np.ndarray, sizes: np.ndarray, normal_corners: np.ndarray) -> XObject:
    normals = _floats(normals, 3)
    members = {
        "nNormals": len(normals),
        "normals": normals,
        "nFaceNormals": len(sizes),
        "faceNormals": faces(sizes, normal_corners),
    }
    return XObject("MeshNormals", members=members)


def texture_coords(uvs: np.ndarray) -> XObject:
    uvs = _floats(uvs, 2)
    return XObject("MeshTextureCoords", members={"nTextureCoords": len(uvs), "textureCoords": uvs})


def vertex_colors(rgba: np.ndarray) -> XObject:
    rgba = np.asarray(rgba, dtype=np.float64).reshape(-1, 4)
    table = np.column_stack([np.arange(len(rgba), dtype=np.float64), rgba])
    return XObject("MeshVertexColors", members={"nVertexColors": len(rgba), "vertexColors": table})


def duplication_indices(indices: np.ndarray, originals: int) -> XObject:
    indices = np.asarray(indices, dtype=np.int64)
    members = {"nIndices": len(indices), "nOriginalVertices": originals, "indices": indices}
    return XObject("VertexDuplicationIndices", members=members)


def material(
    name: str | None,
    face_color: Sequence[float],
    power: float,
    specular: Sequence[float],
    emissive: Sequence[float],
    texture: str | None = None,
) -> XObject:
    rgba = dict(zip(("red", "green", "blue", "alpha"), map(float, face_color), strict=True))
    members = {
        "faceColor": rgba,
        "power": float(power),
        "specularColor": dict(zip(("red", "green", "blue"), map(float, specular), strict=True)),
        "emissiveColor": dict(zip(("red", "green", "blue"), map(float, emissive), strict=True)),
    }
    obj = XObject("Material", name, members=members)
    if texture:
        obj.children.append(XObject("TextureFilename", members={"filename": texture}))
    return obj


def material_list(face_indexes: np.ndarray, materials: Sequence[XObject | XReference]) -> XObject:
    indexes = np.asarray(face_indexes, dtype=np.int64)
    members = {"nMaterials": len(materials), "nFaceIndexes": len(indexes), "faceIndexes": indexes}
    return XObject("MeshMaterialList", members=members, children=list(materials))


def skin_header(per_vertex: int, per_face: int, bones: int) -> XObject:
    members = {
        "nMaxSkinWeightsPerVertex": int(per_vertex),
        "nMaxSkinWeightsPerFace": int(per_face),
        "nBones": int(bones),
    }
    return XObject("XSkinMeshHeader", members=members)


def skin_weights(
    frame_name: str, indices: np.ndarray, weights: np.ndarray, offset: np.ndarray
) -> XObject:
    indices = np.asarray(indices, dtype=np.int64)
    members = {
        "transformNodeName": frame_name,
        "nWeights": len(indices),
        "vertexIndices": indices,
        "weights": np.asarray(weights, dtype=np.float64),
        "matrixOffset": {"matrix": _m16(offset)},
    }
    return XObject("SkinWeights", members=members)


def animation_key(key_type: int, ticks: np.ndarray, values: np.ndarray) -> XObject:
    values = np.asarray(values, dtype=np.float64).reshape(len(ticks), -1)
    width = values.shape[1]
    keys = [
        {"time": int(t), "tfkeys": {"nValues": width, "values": row}}
        for t, row in zip(np.asarray(ticks).tolist(), values, strict=True)
    ]
    return XObject("AnimationKey", members={"keyType": key_type, "nKeys": len(keys), "keys": keys})


def animation(frame_name: str, keys: Sequence[XObject], looping: bool, linear: bool) -> XObject:
    options = XObject(
        "AnimationOptions",
        members={"openclosed": 0 if looping else 1, "positionquality": 1 if linear else 0},
    )
    return XObject("Animation", children=[XReference(frame_name, None), *keys, options])


def animation_set(name: str, animations: Sequence[XObject]) -> XObject:
    return XObject("AnimationSet", name, children=list(animations))


def ticks_per_second(ticks: int) -> XObject:
    return XObject("AnimTicksPerSecond", members={"AnimTicksPerSecond": int(ticks)})


def cloth_masses(masses: np.ndarray) -> XObject:
    masses = np.asarray(masses, dtype=np.float64)
    return XObject("ClothMasses", members={"NumPoints": len(masses), "Mass": masses})


def cloth_springs(pairs: np.ndarray) -> XObject:
    flat = np.asarray(pairs, dtype=np.int64).reshape(-1)
    members = {"NumSprings": flat.size // 2, "NumVertices": flat.size, "Vertex": flat}
    return XObject("ClothSprings", members=members)


def morph_set(name: str, keys: Sequence[tuple[int, str]], loop: bool | None = None) -> XObject:
    """``loop`` None: the plain template; True/False: the variant with ``DWORD Loop``."""
    members: dict = {}
    if loop is not None:
        members["Loop"] = int(loop)
    members["NumKeys"] = len(keys)
    members["Keys"] = [{"Time": int(t), "MeshName": m} for t, m in keys]
    return XObject("MorphAnimationSet", name, members=members)


MORPH_LOOP_TEMPLATES = """
template MorphAnimationSet { <0892DE81-915A-4F34-B503-F7C397CB9E06>
  DWORD Loop; DWORD NumKeys; array MorphAnimationKey Keys[NumKeys]; }
"""


def use_morph_loop_variant(doc: XDocument) -> None:
    """Declare the MorphAnimationSet variant with ``DWORD Loop`` for this document."""
    from ..scan.text_tokens import TextTokens
    from ..templates import parse_template

    tokens = TextTokens(MORPH_LOOP_TEMPLATES.encode("ascii"), 0, "<morph loop>")
    tok = tokens.next()
    template = parse_template(tokens, tok[2])
    doc.templates = dict(doc.templates)
    doc.templates[template.name] = template
    if template.name not in doc.declared:
        doc.declared.append(template.name)
