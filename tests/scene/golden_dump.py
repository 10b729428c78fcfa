"""A stable text dump of the imported scene, for the golden tests.

Objects (hierarchy, type, world matrix), meshes (counts, first/last vertices, UV maps, colour
attributes, custom normals, materials), materials (Principled values, image) and images.
Floats are rounded so that harmless last-bit noise does not change the text.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

import numpy as np


def _num(v: float, digits: int = 4) -> str:
    r = round(float(v), digits)
    return f"{0.0 if r == 0 else r:.{digits}f}"


def _vec(values: Iterable[float], digits: int = 4) -> str:
    return "(" + ", ".join(_num(v, digits) for v in values) + ")"


def _object_lines(obj, depth: int) -> list[str]:
    pad = "  " * depth
    data = f" data={obj.data.name!r}" if obj.data is not None else ""
    lines = [f"{pad}- {obj.name!r} {obj.type}{data}"]
    m = np.array(obj.matrix_world)
    lines += [f"{pad}    world {_vec(row)}" for row in m[:3]]
    children = sorted(obj.children, key=lambda o: o.name)
    for child in children:
        lines += _object_lines(child, depth + 1)
    return lines


def _mesh_lines(mesh) -> list[str]:
    n = len(mesh.vertices)
    sizes = np.empty(len(mesh.polygons), dtype=np.int32)
    mesh.polygons.foreach_get("loop_total", sizes)
    hist = {int(k): int(c) for k, c in zip(*np.unique(sizes, return_counts=True), strict=True)}
    lines = [
        f"- {mesh.name!r}: {n} vertices, {len(mesh.edges)} edges, {len(mesh.polygons)} faces, "
        f"{len(mesh.loops)} corners, face sizes {hist}"
    ]
    if n:
        lines.append(f"    first vertex {_vec(mesh.vertices[0].co, 5)}")
        lines.append(f"    last vertex {_vec(mesh.vertices[n - 1].co, 5)}")
    if len(mesh.polygons):
        p0 = mesh.polygons[0]
        lines.append(f"    first face {list(p0.vertices)} normal {_vec(p0.normal, 3)}")
    lines.append(f"    uv maps {[uv.name for uv in mesh.uv_layers]}")
    if len(mesh.uv_layers) and len(mesh.loops):
        lines.append(f"    first corner uv {_vec(mesh.uv_layers[0].uv[0].vector, 5)}")
    lines.append(f"    colour attributes {[c.name for c in mesh.color_attributes]}")
    custom = "custom_normal" in mesh.attributes
    lines.append(f"    custom normals {custom}")
    if custom and len(mesh.loops):
        lines.append(f"    first corner normal {_vec(mesh.corner_normals[0].vector, 3)}")
    extra = sorted(a.name for a in mesh.attributes if a.name.startswith("xof_"))
    if extra:
        lines.append(f"    attributes {extra}")
    lines.append(f"    materials {[m.name if m else None for m in mesh.materials]}")
    if len(mesh.materials) > 1:
        idx = np.empty(len(mesh.polygons), dtype=np.int32)
        mesh.polygons.foreach_get("material_index", idx)
        lines.append(f"    material index counts {np.bincount(idx).tolist()}")
    return lines


def _material_lines(mat) -> list[str]:
    lines = [f"- {mat.name!r}"]
    bsdf = next((n for n in mat.node_tree.nodes if n.type == "BSDF_PRINCIPLED"), None)
    if bsdf is not None:
        for socket in ("Base Color", "Alpha", "Roughness", "Specular IOR Level", "Emission Color",
                       "Emission Strength"):  # fmt: skip
            value = bsdf.inputs[socket].default_value
            text = _vec(value) if hasattr(value, "__len__") else _num(value)
            lines.append(f"    {socket}: {text}")
    for node in mat.node_tree.nodes:
        if node.type == "TEX_IMAGE" and node.image is not None:
            lines.append(f"    image {node.image.name!r}")
    return lines


def dump_scene(bpy, warnings: list[str] | None = None, kept: list[str] | None = None) -> str:
    """The whole current blend data as text."""
    out = ["objects:"]
    roots = sorted((o for o in bpy.data.objects if o.parent is None), key=lambda o: o.name)
    for root in roots:
        out += _object_lines(root, 1)
    out.append("meshes:")
    for mesh in sorted(bpy.data.meshes, key=lambda m: m.name):
        out += ["  " + line for line in _mesh_lines(mesh)]
    out.append("materials:")
    for mat in sorted(bpy.data.materials, key=lambda m: m.name):
        out += ["  " + line for line in _material_lines(mat)]
    out.append("images:")
    for image in sorted(bpy.data.images, key=lambda i: i.name):
        found = os.path.isfile(bpy.path.abspath(image.filepath))
        size = tuple(image.size) if found else None
        out.append(f"  - {image.name!r} {'found' if found else 'missing'} size {size}")
    if kept is not None:
        out.append("kept uninterpreted:")
        out += [f"  - {k}" for k in kept]
    if warnings is not None:
        out.append("warnings:")
        out += [f"  - {w}" for w in warnings]
    return "\n".join(out) + "\n"
