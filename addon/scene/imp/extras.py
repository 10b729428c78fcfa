"""Data the importer does not interpret, kept as a compact JSON custom property.

Nothing in a file is silently lost: uninterpreted children of a frame go on the frame's
object, those of a mesh on the mesh's object, top-level ones on the file's first root object.
Each is summarised (template, name, members, children); long arrays keep their shape and
first values only. The property is ``xof_extras`` (a JSON list); the report names the
templates.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import bpy
import numpy as np

from ...xfile.document import Ragged, XObject, XReference

if TYPE_CHECKING:
    from .context import BuildContext

from .context import BuildStep

#: Mesh children the importer (or another build step) turns into Blender data
INTERPRETED_MESH_CHILDREN = frozenset(
    {
        "MeshNormals",
        "MeshTextureCoords",
        "MeshVertexColors",
        "MeshMaterialList",
        "VertexDuplicationIndices",
        "XSkinMeshHeader",
        "SkinWeights",
        "DeclData",
        "FVFData",
        "ClothMasses",
        "ClothSprings",
    }
)

PROPERTY = "xof_extras"
_MAX_VALUES = 32
#: nested objects summarised below a kept one; deeper ones are counted, not kept (a file may
#: nest 10,000 levels: JSON and a recursive summary would give up long before)
MAX_NESTING = 32


def _listed(values: np.ndarray) -> Any:
    """``values.tolist()`` with non-finite floats as text (JSON has no inf or NaN)."""
    if values.dtype.kind == "f" and not np.isfinite(values).all():
        return _finite_or_text(values.tolist())
    return values.tolist()


def _finite_or_text(value: Any) -> Any:
    if isinstance(value, list):
        return [_finite_or_text(v) for v in value]
    return value if np.isfinite(value) else str(value)


def summarize_value(value: Any) -> Any:
    """A JSON-able, size-bounded summary of a member value."""
    if isinstance(value, np.ndarray):
        if value.size <= _MAX_VALUES:
            return _listed(value)
        return {"shape": list(value.shape), "head": _listed(value.ravel()[:8])}
    if isinstance(value, Ragged):
        return {"records": len(value), "head": _listed(np.asarray(value.flat[:8]))}
    if isinstance(value, dict):
        return {str(k): summarize_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        if len(value) <= _MAX_VALUES:
            return [summarize_value(v) for v in value]
        return {"length": len(value), "head": [summarize_value(v) for v in value[:8]]}
    if isinstance(value, (np.integer, np.floating)):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return str(value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def summarize(obj: XObject | XReference, depth: int = 0) -> dict[str, Any]:
    """One uninterpreted object (or reference) as a JSON-able dict; past
    :data:`MAX_NESTING` levels its children are only counted."""
    if isinstance(obj, XReference):
        return {"reference": obj.name or (str(obj.guid) if obj.guid else None)}
    out: dict[str, Any] = {"template": obj.template}
    if obj.name:
        out["name"] = obj.name
    if obj.members:
        out["members"] = {k: summarize_value(v) for k, v in obj.members.items()}
    if obj.children and depth >= MAX_NESTING:
        nested = sum(1 for _ in obj.walk()) - 1  # walked on a list, at any depth
        out["children not kept"] = f"{nested} nested object(s) past {MAX_NESTING} levels"
    elif obj.children:
        out["children"] = [summarize(c, depth + 1) for c in obj.children]
    return out


def attach(owner: bpy.types.ID, objects: list[XObject]) -> None:
    """Append summaries of ``objects`` to ``owner[PROPERTY]``."""
    if not objects:
        return
    existing = json.loads(owner.get(PROPERTY, "[]"))
    existing.extend(summarize(o) for o in objects)
    owner[PROPERTY] = json.dumps(existing, separators=(",", ":"), allow_nan=False, default=str)


def mesh_extras(source: XObject | None) -> list[XObject]:
    if source is None:
        return []
    return [c for c in source.objects() if c.template not in INTERPRETED_MESH_CHILDREN]


def keep_extras(ctx: BuildContext) -> None:
    """The build step: attach every uninterpreted object and name it in the report."""
    kept: list[XObject] = []
    for frame, obj in ctx.frame_objects.items():
        attach(obj, frame.extras)
        kept += frame.extras
    for mesh, obj in ctx.mesh_objects.items():
        extras = mesh_extras(mesh.source)
        attach(obj, extras)
        kept += extras
    used = {id(m.source) for mesh in ctx.scene.all_meshes() for m in mesh.materials}
    imported = ctx.options.mesh.use_materials  # then the importer builds unused Materials too
    top = [
        o
        for o in ctx.scene.extras
        if id(o) not in used and not (imported and o.template == "Material")
    ]
    if top:
        if ctx.roots:
            attach(ctx.roots[0], top)
        kept += top
    names = sorted({o.template for o in kept})
    for name in names:
        count = sum(1 for o in kept if o.template == name)
        where = "kept as custom property xof_extras" if ctx.roots else "not imported"
        ctx.result.keep_extra(name, count, where)


EXTRAS_STEP = BuildStep("extras", keep_extras)
