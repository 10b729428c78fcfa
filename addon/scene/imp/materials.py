"""Material -> a Principled BSDF material (shared materials built once per import).

Mapping (D3D fixed-function -> Principled):
- faceColor RGB -> Base Color, faceColor A -> Alpha (and the viewport colour); an alpha of
  exactly 0 is opaque: Microsoft's exporters wrote 0 and D3D draws such a material solid
  unless the program turns blending on (the SDK's own samples show them so);
- power (Phong exponent) -> Roughness via ``alpha = sqrt(2 / (power + 2))``,
  ``roughness = sqrt(alpha)`` (Phong <-> Beckmann equivalence; Blender's roughness is the
  square root of the microfacet alpha); power 0 gives roughness 1;
- specularColor -> Specular Tint, with Specular IOR Level 0 when it is black;
- emissiveColor -> Emission Color, strength 1 when not black;
- TextureFilename -> an Image Texture node feeding Base Color (and Alpha when translucent).

The file's raw values are also kept as custom properties (``xof_*``) so an exporter can
write them back exactly.
"""

from __future__ import annotations

from typing import Any

import bpy
import numpy as np

from ...xfile.views.model import MaterialData
from .textures import TextureLoader


def phong_power_to_roughness(power: float) -> float:
    """Blender roughness for a Phong specular exponent (0 -> 1.0, large -> near 0)."""
    p = max(float(power), 0.0)
    alpha = (2.0 / (p + 2.0)) ** 0.5
    return float(alpha**0.5)


def _rgb(values: Any, n: int = 3) -> list[float]:
    arr = np.asarray(values, dtype=np.float64).ravel()
    out = [float(v) for v in arr[:n]]
    out += [1.0] * (n - len(out))
    return [v if np.isfinite(v) else 0.0 for v in out]


def _input(node: bpy.types.Node, *names: str) -> bpy.types.NodeSocket | None:
    """The first of ``names`` that the node has (socket names moved between versions)."""
    for name in names:
        socket = node.inputs.get(name)
        if socket is not None:
            return socket
    return None


def _set(node: bpy.types.Node, value: Any, *names: str) -> None:
    socket = _input(node, *names)
    if socket is not None:
        socket.default_value = value  # type: ignore[attr-defined]


def material_name(data: MaterialData, index: int) -> str:
    return data.name or f"Material.{index:03d}"


def build_material(
    data: MaterialData, name: str, textures: TextureLoader | None
) -> bpy.types.Material:
    """A new material for one Material object."""
    mat = bpy.data.materials.new(name)
    raw = _rgb(data.face_color, 4)
    rgba = [*raw[:3], 1.0] if raw[3] == 0.0 else raw  # see the module docstring
    spec = _rgb(data.specular)
    emis = _rgb(data.emissive)
    roughness = phong_power_to_roughness(data.power)
    mat.diffuse_color = rgba
    mat.roughness = roughness
    mat.specular_color = [min(max(c, 0.0), 1.0) for c in spec]
    mat["xof_face_color"] = raw  # the file's value, written back by the exporter
    mat["xof_power"] = float(data.power)
    mat["xof_specular"] = spec
    mat["xof_emissive"] = emis
    if data.name is not None:
        mat["xof_name"] = data.name

    if bpy.app.version < (5, 0, 0):
        mat.use_nodes = True  # always on (and deprecated) from 5.0
    tree = mat.node_tree
    assert tree is not None
    bsdf = next((n for n in tree.nodes if n.type == "BSDF_PRINCIPLED"), None)
    if bsdf is None:
        bsdf = tree.nodes.new("ShaderNodeBsdfPrincipled")
    _set(bsdf, (*rgba[:3], 1.0), "Base Color")
    _set(bsdf, rgba[3], "Alpha")
    _set(bsdf, roughness, "Roughness")
    has_spec = max(spec) > 0.0
    _set(bsdf, (*[min(max(c, 0.0), 1.0) for c in spec], 1.0), "Specular Tint")
    _set(bsdf, 0.5 if has_spec else 0.0, "Specular IOR Level", "Specular")
    has_emis = max(emis) > 0.0
    _set(bsdf, (*emis, 1.0), "Emission Color", "Emission")
    _set(bsdf, 1.0 if has_emis else 0.0, "Emission Strength")

    if data.texture and textures is not None:
        mat["xof_texture"] = data.texture
        image = textures.image(data.texture)
        tex = tree.nodes.new("ShaderNodeTexImage")
        tex.image = image  # type: ignore[attr-defined]
        tex.location = (bsdf.location.x - 400.0, bsdf.location.y)
        base = _input(bsdf, "Base Color")
        if base is not None:
            tree.links.new(tex.outputs["Color"], base)
        alpha = _input(bsdf, "Alpha")
        if rgba[3] < 1.0 and alpha is not None:
            tree.links.new(tex.outputs["Alpha"], alpha)
    return mat


class MaterialCache:
    """Builds each material once per import: materials shared by reference stay shared."""

    def __init__(self, textures: TextureLoader | None) -> None:
        self.textures = textures
        self._by_key: dict[int, bpy.types.Material] = {}
        self.created: list[bpy.types.Material] = []
        self.zero_alpha: list[str] = []  # materials whose file alpha 0 was read as opaque

    def built(self, obj: object) -> bool:
        """True when the Material object ``obj`` has been built already."""
        return id(obj) in self._by_key

    def get(self, data: MaterialData) -> bpy.types.Material:
        key = id(data.source) if data.source is not None else id(data)
        mat = self._by_key.get(key)
        if mat is None:
            mat = build_material(data, material_name(data, len(self.created)), self.textures)
            self._by_key[key] = mat
            self.created.append(mat)
            if list(mat["xof_face_color"])[3] == 0.0:
                self.zero_alpha.append(mat.name)
        return mat
