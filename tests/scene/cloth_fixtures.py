"""Shared set-up of the cloth tests and benchmark: grid meshes and xof's physics registered."""

from __future__ import annotations

from typing import Any

import numpy as np

GRID = 8  # the cloth fixtures' grid is GRID x GRID vertices, pinned at 0 and GRID - 1
SHIFT = np.array([0.6, -0.2, 0.4])  # where the hooked cloth's empty goes by frame 11


def grid_arrays(nx: int, ny: int, size: float = 2.0) -> tuple[np.ndarray, np.ndarray]:
    """Vertices ``(nx*ny, 3)`` of a flat XY grid (row-major, row 0 at y = +size/2) and quad
    corners ``(F, 4)``."""
    xs = np.linspace(-size / 2, size / 2, nx)
    ys = np.linspace(size / 2, -size / 2, ny)
    gx, gy = np.meshgrid(xs, ys)
    verts = np.column_stack([gx.ravel(), gy.ravel(), np.zeros(nx * ny)])
    i, j = np.meshgrid(np.arange(nx - 1), np.arange(ny - 1))
    a = (j * nx + i).ravel()
    quads = np.column_stack([a, a + nx, a + nx + 1, a + 1])
    return verts, quads


def grid_object(bpy: Any, name: str, nx: int, ny: int, size: float = 2.0) -> Any:
    """A mesh object holding an ``nx`` x ``ny`` grid, linked to the scene."""
    verts, quads = grid_arrays(nx, ny, size)
    mesh = bpy.data.meshes.new(name)
    mesh.vertices.add(len(verts))
    mesh.vertices.foreach_set("co", verts.astype(np.float32).ravel())
    mesh.loops.add(quads.size)
    mesh.loops.foreach_set("vertex_index", quads.astype(np.int32).ravel())
    mesh.polygons.add(len(quads))
    mesh.polygons.foreach_set("loop_start", np.arange(0, quads.size, 4, dtype=np.int32))
    mesh.polygons.foreach_set("loop_total", np.full(len(quads), 4, dtype=np.int32))
    mesh.update(calc_edges=True)
    mesh.validate()
    obj = bpy.data.objects.new(name, mesh)
    bpy.context.scene.collection.objects.link(obj)
    return obj


def pin_top_corners(bpy: Any, obj: Any, nx: int) -> np.ndarray:
    """Mass group ``cloth_mass``: 1 everywhere, 0 (pinned) at the two top corners."""
    from xof.addon.scene.cloth.data import MASS_GROUP, set_group_weights

    masses = np.ones(len(obj.data.vertices))
    masses[[0, nx - 1]] = 0.0
    set_group_weights(obj, MASS_GROUP, masses)
    return masses


def positions(obj: Any) -> np.ndarray:
    mesh = obj.data
    out = np.empty(len(mesh.vertices) * 3, dtype=np.float32)
    mesh.attributes["position"].data.foreach_get("vector", out)
    return out.reshape(-1, 3)


def evaluated_positions(bpy: Any, obj: Any) -> np.ndarray:
    dg = bpy.context.evaluated_depsgraph_get()
    mesh = obj.evaluated_get(dg).data
    out = np.empty(len(mesh.vertices) * 3, dtype=np.float32)
    mesh.attributes["position"].data.foreach_get("vector", out)
    return out.reshape(-1, 3)


def register_physics() -> None:
    from xof.operators import physics_ops, physics_panel, physics_props, sim_handler

    for module in (physics_props, physics_ops, physics_panel, sim_handler):
        module.register()


def unregister_physics() -> None:
    from xof.operators import physics_ops, physics_panel, physics_props, sim_handler

    for module in (sim_handler, physics_panel, physics_ops, physics_props):
        module.unregister()


def mesh_edges_of(obj: Any) -> np.ndarray:
    """Edge vertex pairs ``(E, 2)`` of the object's mesh."""
    from xof.addon.scene.cloth.data import mesh_edges

    return mesh_edges(obj.data)


def on_screen(obj: Any) -> np.ndarray:
    """What the viewport shows of the mesh's own points (object space): the evaluated mesh,
    with the simulated frame; ``positions`` is the mesh data itself (the rest shape)."""
    import bpy

    return evaluated_positions(bpy, obj)[: len(obj.data.vertices)]


def pinned_cloth(bpy: Any, n: int, frame_end: int, frame_start: int = 1) -> Any:
    """An ``n`` x ``n`` grid "Cloth" pinned at its top corners, active, xof cloth enabled over
    ``frame_start``..``frame_end``."""
    obj = grid_object(bpy, "Cloth", n, n)
    pin_top_corners(bpy, obj, n)
    bpy.context.view_layer.objects.active = obj
    props = obj.xof_physics
    props.enabled = True
    props.frame_start, props.frame_end = frame_start, frame_end
    return obj


def hook_whole(bpy: Any, obj: Any, shift: Any = None) -> Any:
    """Hook every point of ``obj`` to a new empty "Handle"; with ``shift``, the empty moves
    linearly from the origin to ``shift`` over frames 1-11 (else it stays at the origin)."""
    handle = bpy.data.objects.new("Handle", None)
    bpy.context.scene.collection.objects.link(handle)
    hook = obj.modifiers.new("Hook", "HOOK")
    hook.object = handle
    hook.vertex_indices_set(list(range(len(obj.data.vertices))))
    if shift is not None:
        handle.location = (0.0, 0.0, 0.0)
        handle.keyframe_insert("location", frame=1)
        handle.location = tuple(shift)
        handle.keyframe_insert("location", frame=11)
        for curve in fcurves(handle):
            for point in curve.keyframe_points:
                point.interpolation = "LINEAR"
    return hook


def fcurves(obj: Any) -> list[Any]:
    """The F-curves of the object's action (layered actions on Blender 4.4+)."""
    action = obj.animation_data.action
    if hasattr(action, "fcurves"):
        return list(action.fcurves)
    return [c for layer in action.layers for strip in layer.strips for bag in strip.channelbags
            for c in bag.fcurves]  # fmt: skip


def play(bpy: Any, frames: Any) -> None:
    for f in frames:
        bpy.context.scene.frame_set(f)


def override_modifiers(obj: Any) -> list[str]:
    """Names of the modifiers that run xof's override node group, whatever they are called."""
    from xof.addon.scene.cloth import override as cloth_override

    return [
        m.name
        for m in obj.modifiers
        if m.type == "NODES"
        and m.node_group is not None
        and m.node_group.get(cloth_override.GROUP_TAG) is not None
    ]


def shows_the_simulation(bpy: Any, obj: Any) -> None:
    """The evaluated mesh is the current frame's cached state (the cloth is at the origin)."""
    from xof.addon.scene.cloth import runtime as cloth_runtime

    from .skin_fixtures import evaluated_world_positions

    rt = cloth_runtime.peek_runtime(obj)
    entry = rt.cache.frames[bpy.context.scene.frame_current]
    np.testing.assert_array_equal(entry.matrix, np.eye(4))
    np.testing.assert_allclose(evaluated_world_positions(obj), entry.positions, atol=1e-5)
