"""How the simulation reaches the viewport and renders: a Geometry Nodes modifier, so the mesh
itself (its ``position``) stays the rest shape and playback never writes it.

The handler writes the simulated object-space positions into the ``xof_cloth_position`` point
attribute and which points they move into ``xof_cloth_free``; our modifier moves the free points
there. It sits right after the deforming modifiers at the top of the stack (armature, hooks),
before any generating one (Subdivision, Solidify), which then acts on the simulated cloth: on a
skinned cape the free points are not skinned again, and pinned points stay where the deformers
put them. Before moving anything it stores what the modifiers made of every point in
``xof_cloth_deformed``: pins follow it, a reset starts the cloth from it (a character in its
pose at the start frame), and a soft body is pulled toward it. Subdivision, Solidify, Mirror and
Array keep the original points first, with their stored values, so those are read back through
them; ``xof_cloth_index`` tells when a modifier (Remesh, Weld) did not, and then the pins fall
back to the rest shape. The moved surface shades from its own geometry: the modifier drops the
mesh's custom normals, which belong to the rest shape. Without the two attributes (a file saved
by xof, opened without it) the modifier moves nothing.

Storing the two attributes is a third of the modifier's cost, and they are read only when
shape keys or deforming modifiers move points (``needs_override``): a mesh nothing deforms
gets a plain node group that only moves the free points and drops the custom normals. When
a deformer appears, the frame it was evaluated with the plain group is evaluated again with
the full one before the deformed shape is read (``ensure_stored``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

POSITION_ATTRIBUTE = "xof_cloth_position"
FREE_ATTRIBUTE = "xof_cloth_free"
DEFORMED_ATTRIBUTE = "xof_cloth_deformed"  # written by the node group, read when evaluated
INDEX_ATTRIBUTE = "xof_cloth_index"  # each point's index before any generating modifier
MODIFIER_NAME = "xof Cloth"
GROUP_NAME = "xof Cloth Override"
GROUP_TAG = "xof_cloth_override"  # custom property marking our node group (version)
GROUP_VERSION = 4  # 4: the plain group; 3: moves nothing without the position attribute,
# drops custom normals
PLAIN_TAG = "xof_cloth_plain"  # custom property of the plain node group (stores nothing)
PLAIN_GROUP_NAME = "xof Cloth Override Plain"
CUSTOM_NORMAL = "custom_normal"  # the attribute Blender keeps custom normals in (4.1+)
BAKE_MODIFIER = "xof Cloth Cache"  # the bake's Mesh Cache: replaces the live simulation
# Modifiers that only move points (count and order stay): the cloth hangs from what they do,
# so ours comes after them. Neutral ones move nothing. Anything else (Subdivision, Solidify,
# Mirror, a user's Geometry Nodes...) ends the run: ours goes before it, so it still acts on
# the simulated cloth, and deformers after it are not followed.
DEFORMING = frozenset(
    {
        "ARMATURE", "CAST", "CORRECTIVE_SMOOTH", "CURVE", "DISPLACE", "HOOK",
        "LAPLACIANDEFORM", "LAPLACIANSMOOTH", "LATTICE", "MESH_CACHE", "MESH_DEFORM",
        "SHRINKWRAP", "SIMPLE_DEFORM", "SMOOTH", "SURFACE_DEFORM", "WARP", "WAVE",
    }
)  # fmt: skip
NEUTRAL = frozenset(
    {
        "NORMAL_EDIT", "UV_PROJECT", "UV_WARP", "VERTEX_WEIGHT_EDIT", "VERTEX_WEIGHT_MIX",
        "VERTEX_WEIGHT_PROXIMITY", "WEIGHTED_NORMAL",
    }
)  # fmt: skip


def is_ours(mod: Any) -> bool:
    """Our override, whatever the user renamed it to (found by its node group's tag)."""
    if mod.type != "NODES":
        return False
    group = mod.node_group
    if group is not None:
        return group.get(GROUP_TAG) is not None
    return bool(mod.name == MODIFIER_NAME)  # its node group was deleted


def _leading_run(obj: Any, render: bool, placed: Any = None) -> tuple[bool, int]:
    """Over the deforming and neutral modifiers at the top of the stack: whether an enabled
    one moves points, and how many modifiers the run holds, ours and ``placed`` left out
    (the index where ``placed`` belongs)."""
    moves = False
    count = 0
    for mod in obj.modifiers:
        if is_ours(mod) or (placed is not None and mod == placed):
            continue
        enabled = mod.show_render if render else mod.show_viewport
        if mod.name == BAKE_MODIFIER or not enabled or mod.type in NEUTRAL:
            count += 1
            continue
        if mod.type not in DEFORMING:
            break
        moves = True
        count += 1
    return moves, count


def needs_override(obj: Any, render: bool = False) -> bool:
    """Whether shape keys or deforming modifiers (before any generating one) move points."""
    if obj.data.shape_keys is not None:
        return True
    return _leading_run(obj, render)[0]


def is_current(group: Any, deformed: bool) -> bool:
    """Whether ``group`` is our node group of this version for a mesh that is ``deformed``
    (the full one) or not (the plain one)."""
    return bool(
        group is not None
        and group.get(GROUP_TAG) == GROUP_VERSION
        and bool(group.get(PLAIN_TAG)) != deformed
    )


def stack_state(obj: Any, render: bool = False) -> tuple[bool, bool]:
    """``needs_override(obj, render)``, and whether the stack is our modifier alone with
    the current node group for it (what ``ensure_modifier`` would keep as it is), in one
    look at the usual stack."""
    mods = obj.modifiers
    if len(mods) == 1:
        only = mods[0]
        group: Any = only.node_group if only.type == "NODES" else None
        tag = group.get(GROUP_TAG) if group is not None else None
        if tag is not None:  # ours alone: only shape keys move points
            deformed = obj.data.shape_keys is not None
            return deformed, tag == GROUP_VERSION and bool(group.get(PLAIN_TAG)) != deformed
    return needs_override(obj, render), False


def node_group(deformed: bool = True) -> Any:
    """Our node group (made once per file, found again by its tags): the full one, or for a
    mesh nothing deforms the plain one."""
    import bpy

    for found in bpy.data.node_groups:
        if found.bl_idname == "GeometryNodeTree" and is_current(found, deformed):
            return found
    group: Any = bpy.data.node_groups.new(
        GROUP_NAME if deformed else PLAIN_GROUP_NAME, "GeometryNodeTree"
    )
    group[GROUP_TAG] = GROUP_VERSION
    if not deformed:
        group[PLAIN_TAG] = 1
    group.interface.new_socket(name="Geometry", in_out="INPUT", socket_type="NodeSocketGeometry")
    group.interface.new_socket(name="Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
    nodes: Any = group.nodes
    links: Any = group.links
    source = nodes.new("NodeGroupInput")
    sink = nodes.new("NodeGroupOutput")
    chain: list[Any] = [source]
    geometry = source.outputs[0]
    if deformed:  # what the modifiers made of each point, and its index
        keep = nodes.new("GeometryNodeStoreNamedAttribute")
        keep.data_type = "FLOAT_VECTOR"
        keep.domain = "POINT"
        keep.inputs["Name"].default_value = DEFORMED_ATTRIBUTE
        deformed_at = nodes.new("GeometryNodeInputPosition")
        number = nodes.new("GeometryNodeStoreNamedAttribute")
        number.data_type = "INT"
        number.domain = "POINT"
        number.inputs["Name"].default_value = INDEX_ATTRIBUTE
        index = nodes.new("GeometryNodeInputIndex")
        links.new(geometry, keep.inputs["Geometry"])
        links.new(deformed_at.outputs["Position"], keep.inputs["Value"])
        links.new(keep.outputs["Geometry"], number.inputs["Geometry"])
        links.new(index.outputs["Index"], number.inputs["Value"])
        geometry = number.outputs["Geometry"]
        chain += [deformed_at, keep, index, number]
    place = nodes.new("GeometryNodeSetPosition")
    where = nodes.new("GeometryNodeInputNamedAttribute")
    where.data_type = "FLOAT_VECTOR"
    where.inputs["Name"].default_value = POSITION_ATTRIBUTE
    which = nodes.new("GeometryNodeInputNamedAttribute")
    which.data_type = "BOOLEAN"
    which.inputs["Name"].default_value = FREE_ATTRIBUTE
    both = nodes.new("FunctionNodeBooleanMath")
    both.operation = "AND"
    shading = nodes.new("GeometryNodeRemoveAttribute")
    shading.inputs["Name"].default_value = CUSTOM_NORMAL
    links.new(geometry, place.inputs["Geometry"])
    links.new(which.outputs["Attribute"], both.inputs[0])
    links.new(where.outputs["Exists"], both.inputs[1])
    links.new(both.outputs[0], place.inputs["Selection"])
    links.new(where.outputs["Attribute"], place.inputs["Position"])
    links.new(place.outputs["Geometry"], shading.inputs["Geometry"])
    links.new(shading.outputs["Geometry"], sink.inputs[0])
    chain += [which, where, both, place, shading, sink]
    for i, node in enumerate(chain):
        node.location = (200.0 * i, 0.0)
    return group


def ensure_modifier(obj: Any, render: bool = False, deformed: bool = True) -> Any:
    """Our Geometry Nodes modifier, right after the deforming run at the top of the stack
    (moved there when the user changed the stack; duplicates removed), with the full node
    group on a ``deformed`` mesh, else the plain one."""
    mods = obj.modifiers
    if len(mods) == 1:  # the usual stack: ours alone, current, in place
        only = mods[0]
        if only.type == "NODES" and is_current(only.node_group, deformed):
            return only
    ours = [m for m in mods if is_ours(m)]
    for extra in ours[1:]:
        mods.remove(extra)
    mod = ours[0] if ours else mods.new(MODIFIER_NAME, "NODES")
    if not ours:
        mod.show_in_editmode = False  # Edit Mode shows the rest shape being edited
    if not is_current(mod.node_group, deformed):
        mod.node_group = node_group(deformed)
    place_after_deformers(obj, mod, render)
    return mod


def ensure_stored(obj: Any, render: bool, depsgraph: Any) -> bool:
    """On a mesh the modifiers now deform: when this frame ran our plain node group (it
    stores nothing), the full one takes its place and ``depsgraph`` evaluates again, so the
    deformed shape can be read; whether it did."""
    swapped = False
    for mod in obj.modifiers:
        group = mod.node_group if mod.type == "NODES" else None
        if group is None or not group.get(PLAIN_TAG) or group.get(GROUP_TAG) is None:
            continue
        if mod.show_render if render else mod.show_viewport:
            mod.node_group = node_group(True)
            swapped = True
    if swapped and depsgraph is not None:
        depsgraph.update()
    return swapped


def place_after_deformers(obj: Any, mod: Any, render: bool = False) -> None:
    """Move ``mod`` (ours, or the bake's Mesh Cache) to the end of the deforming run."""
    mods = obj.modifiers
    target = _leading_run(obj, render, mod)[1]
    index = list(mods).index(mod)
    if index != target:
        mods.move(index, target)


def write(mesh: Any, local: np.ndarray, free: np.ndarray, write_free: bool = True) -> None:
    """The simulated object-space positions ``(N, 3)`` and which points they move ``(N,)``
    (written when ``write_free`` or when the attribute is new)."""
    attrs = mesh.attributes
    added = False
    where = attrs.get(POSITION_ATTRIBUTE)
    if where is None or where.data_type != "FLOAT_VECTOR" or where.domain != "POINT":
        if where is not None:
            attrs.remove(where)
        attrs.new(POSITION_ATTRIBUTE, "FLOAT_VECTOR", "POINT")
        added = True
    which = attrs.get(FREE_ATTRIBUTE)
    if which is None or which.data_type != "BOOLEAN" or which.domain != "POINT":
        if which is not None:
            attrs.remove(which)
        attrs.new(FREE_ATTRIBUTE, "BOOLEAN", "POINT")
        write_free = added = True
    if added:  # re-fetched: adding an attribute may move the others
        where = attrs[POSITION_ATTRIBUTE]
        which = attrs[FREE_ATTRIBUTE]
    if write_free:
        which.data.foreach_set("value", np.ascontiguousarray(free, dtype=bool))
    where.data.foreach_set("vector", np.ascontiguousarray(local, dtype=np.float32).reshape(-1))
    mesh.update()


def clear_shown(mesh: Any) -> bool:
    """Show no simulated frame (the modifier then moves nothing); whether anything changed."""
    attrs = mesh.attributes
    changed = False
    for name in (FREE_ATTRIBUTE, POSITION_ATTRIBUTE):
        found = attrs.get(name)
        if found is not None:
            attrs.remove(found)
            changed = True
    if changed:
        mesh.update()
    return changed


def remove(obj: Any) -> None:
    """Take the override away (disabled, reset, baked): modifiers and attributes."""
    for mod in [m for m in obj.modifiers if is_ours(m)]:
        obj.modifiers.remove(mod)
    attrs = obj.data.attributes
    for name in (POSITION_ATTRIBUTE, FREE_ATTRIBUTE):
        found = attrs.get(name)
        if found is not None:
            attrs.remove(found)
