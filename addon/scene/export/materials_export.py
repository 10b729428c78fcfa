"""Blender materials -> .X Materials (top level and referenced by name, or inline in Legacy).

The importer keeps a file's raw values as ``xof_*`` properties; when present they are written
back exactly. Otherwise they come from the Principled BSDF by the importer's mapping, inverted
(roughness -> Phong power through ``r^4 = 2 / (power + 2)``). A texture is written as the
path mode says (:mod:`.texture_files`), or as the file named it when the image has no file
on disk.
"""

from __future__ import annotations

import os
from typing import Any

import bpy

from ...xfile.document import XObject, XReference
from ...xfile.writer import objects as xo
from .plan.names import NameTable
from .texture_files import TextureFiles


def roughness_to_phong_power(roughness: float) -> float:
    """Inverse of the importer's ``phong_power_to_roughness`` (roughness 1 -> power 0)."""
    r = min(max(float(roughness), 1e-3), 1.0)
    return max(2.0 / r**4 - 2.0, 0.0)


def _socket(node: Any, *names: str) -> Any:
    for name in names:
        socket = node.inputs.get(name)
        if socket is not None:
            return socket
    return None


def _texture_image(mat: bpy.types.Material) -> bpy.types.Image | None:
    tree = mat.node_tree
    if tree is None:
        return None
    for link in tree.links:
        node, socket = link.from_node, link.to_socket
        if node is None or socket is None:
            continue
        if node.type == "TEX_IMAGE" and socket.name == "Base Color":
            return getattr(node, "image", None)
    return None


def texture_path(mat: bpy.types.Material, files: TextureFiles) -> str | None:
    """The TextureFilename to write for the material's base colour image, if it has one."""
    image = _texture_image(mat)
    packed = image is not None and image.packed_file is not None
    if image is not None and image.filepath:
        path = bpy.path.abspath(image.filepath, library=image.library)
        if os.path.isfile(path) or (packed and not files.copies):
            return files.name_for(path)  # a packed image: where its file was
    if image is not None and image.packed_file is not None and files.copies:
        name = os.path.basename(bpy.path.abspath(image.filepath)) if image.filepath else ""
        written = files.unpacked(image.packed_file.data, name or f"{image.name}.png")
        if written is not None:
            return written
    written = (image.get("xof_texture") if image is not None else None) or mat.get("xof_texture")
    return str(written) if written else None


def material_values(mat: bpy.types.Material) -> tuple[list[float], float, list[float], list[float]]:
    """faceColor, power, specular, emissive."""
    if "xof_face_color" in mat and "xof_power" in mat:  # type: ignore[operator]
        return (
            [float(v) for v in mat["xof_face_color"]],
            float(mat["xof_power"]),
            [float(v) for v in mat.get("xof_specular", (0.0, 0.0, 0.0))],
            [float(v) for v in mat.get("xof_emissive", (0.0, 0.0, 0.0))],
        )
    rgba = [float(v) for v in mat.diffuse_color]
    roughness = float(mat.roughness)
    specular = [float(v) for v in mat.specular_color]  # type: ignore[attr-defined]
    emissive = [0.0, 0.0, 0.0]
    tree = mat.node_tree
    bsdf = next((n for n in tree.nodes if n.type == "BSDF_PRINCIPLED"), None) if tree else None
    if bsdf is not None:
        base = _socket(bsdf, "Base Color")
        alpha = _socket(bsdf, "Alpha")
        if base is not None:
            rgba[:3] = [float(v) for v in base.default_value[:3]]
        if alpha is not None:
            rgba[3] = float(alpha.default_value)
        rough = _socket(bsdf, "Roughness")
        roughness = float(rough.default_value) if rough is not None else roughness
        tint = _socket(bsdf, "Specular Tint")
        level = _socket(bsdf, "Specular IOR Level", "Specular")
        if tint is not None and hasattr(tint.default_value, "__len__"):
            specular = [float(v) for v in tint.default_value[:3]]
        if level is not None and float(level.default_value) == 0.0:
            specular = [0.0, 0.0, 0.0]
        color = _socket(bsdf, "Emission Color", "Emission")
        strength = _socket(bsdf, "Emission Strength")
        if color is not None and (strength is None or float(strength.default_value) > 0.0):
            emissive = [float(v) * float(strength.default_value if strength else 1.0)
                        for v in color.default_value[:3]]  # fmt: skip
    return rgba, roughness_to_phong_power(roughness), specular, emissive


class MaterialTable:
    """Each Blender material written once: at top level, meshes referencing it by name; or
    (``inline``, Legacy) inside the first mesh's material list, copies in the others without
    a name (a name is written once in a file; three.js's XLoader reads no references)."""

    def __init__(self, names: NameTable, files: TextureFiles, inline: bool = False) -> None:
        self.names = names
        self.files = files
        self.inline = inline
        self.objects: list[XObject] = []  # the top-level ones
        self._by_pointer: dict[int, XObject] = {}

    def entry(self, mat: bpy.types.Material | None) -> XObject | XReference:
        """What a mesh's MeshMaterialList holds for ``mat``."""
        key = mat.as_pointer() if mat is not None else 0
        found = self._by_pointer.get(key)
        if found is not None:
            if not self.inline:
                return XReference(found.name, None)
            return XObject(
                found.template, members=dict(found.members), children=list(found.children)
            )
        if mat is None:
            name = self.names.get("material", "<default>", "Default")
            obj = xo.material(name, [0.8, 0.8, 0.8, 1.0], 0.0, [0, 0, 0], [0, 0, 0])
        else:
            name = self.names.get("material", mat.name, str(mat.get("xof_name", mat.name)))
            rgba, power, spec, emis = material_values(mat)
            obj = xo.material(name, rgba, power, spec, emis, texture_path(mat, self.files))
        self._by_pointer[key] = obj
        if self.inline:
            return obj
        self.objects.append(obj)
        return XReference(name, None)
