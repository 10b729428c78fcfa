"""What the cape benchmarks measure on evaluated objects (bpy and numpy only, no xof: a
benchmark may import xof from another checkout)."""

from __future__ import annotations

import bpy
import numpy as np
from mathutils.bvhtree import BVHTree


def evaluated_triangles(obj: bpy.types.Object) -> tuple[np.ndarray, np.ndarray]:
    """World-space vertices ``(V, 3)`` float64 and triangles ``(T, 3)`` of the evaluated
    object."""
    ev = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    mesh = ev.to_mesh()
    mesh.calc_loop_triangles()
    co = np.empty(len(mesh.vertices) * 3, dtype=np.float32)
    mesh.vertices.foreach_get("co", co)
    tris = np.empty(len(mesh.loop_triangles) * 3, dtype=np.int32)
    mesh.loop_triangles.foreach_get("vertices", tris)
    ev.to_mesh_clear()
    m = np.array(ev.matrix_world)
    return co.reshape(-1, 3).astype(float) @ m[:3, :3].T + m[:3, 3], tris.reshape(-1, 3)


def world_positions(obj: bpy.types.Object) -> np.ndarray:
    """World-space vertices ``(V, 3)`` float64 of the evaluated object."""
    ev = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    mesh = ev.to_mesh()
    co = np.empty(len(mesh.vertices) * 3, dtype=np.float32)
    mesh.vertices.foreach_get("co", co)
    ev.to_mesh_clear()
    m = np.array(ev.matrix_world)
    return co.reshape(-1, 3).astype(float) @ m[:3, :3].T + m[:3, 3]


def mesh_distance(body: bpy.types.Object, points: np.ndarray, limit: float = 0.1) -> np.ndarray:
    """Signed distance ``(N,)`` of ``points`` to the evaluated body's triangles (negative =
    behind the nearest face, i.e. inside; ``limit`` for points farther than ``limit``)."""
    verts, tris = evaluated_triangles(body)
    tree = BVHTree.FromPolygons(verts.tolist(), tris.tolist())
    out = np.full(len(points), limit)
    for i, p in enumerate(points.tolist()):
        loc, normal, _, dist = tree.find_nearest(p, limit)
        if loc is not None:
            side = (p[0] - loc[0]) * normal[0] + (p[1] - loc[1]) * normal[1]
            side += (p[2] - loc[2]) * normal[2]
            out[i] = dist if side >= 0 else -dist
    return out
