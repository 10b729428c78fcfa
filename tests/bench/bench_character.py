"""Character benchmark (a script, not a test; needs bpy): a cape on a walking, turning,
skinned body, xof's cloth vs Blender's Cloth modifier on the same scene, one run each.

    .venv/bin/python tests/bench/bench_character.py [--frames 36] [--no-blender]

Scene (generated here): a body of capsules (torso, head, arms, legs; about 20k triangles)
skinned rigidly to an armature whose root walks forward and turns 90 degrees while the legs
and arms swing; the body carries Blender's Collision modifier (thickness_outer 0.02,
cloth_friction 5), which xof reads too. The cape is a 100 x 100 grid (0.5 m x 0.9 m)
hanging behind the back, skinned to the torso, its top row pinned (xof: mass 0 in
``cloth_mass``; Blender: weight 1 in ``pin``). xof: default cloth settings, self-collision
on (0.015 m). Blender: Cloth quality 5, collision and self-collision on (its defaults).
Per run: median ms per ``frame_set`` after the first frame, the deepest cape point inside
the body over the run (capsules evaluated analytically from the posed bones; positive =
inside the surface), intersecting cape triangle pairs at the last frame (pairs sharing a
vertex excluded), and structural stretch p99 at the last frame.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
_LINK = Path(tempfile.mkdtemp(prefix="xof-bench-"))
(_LINK / "xof").symlink_to(ROOT, target_is_directory=True)
sys.path.insert(0, str(_LINK))
sys.path.insert(0, str(ROOT))

import bpy  # noqa: E402

from tests.sim.meshes import grid_triangles, intersecting_pairs, uv_sphere  # noqa: E402

# name: (bone, start (x, y, z), end, radius, rings, segments)
PARTS = {
    "torso": ("torso", (0.0, 0.0, 1.02), (0.0, 0.0, 1.38), 0.17, 48, 80),
    "head": ("torso", (0.0, 0.0, 1.62), (0.0, 0.0, 1.64), 0.11, 28, 56),
    "arm.L": ("arm.L", (0.26, 0.0, 1.40), (0.26, 0.0, 0.95), 0.05, 20, 40),
    "arm.R": ("arm.R", (-0.26, 0.0, 1.40), (-0.26, 0.0, 0.95), 0.05, 20, 40),
    "leg.L": ("leg.L", (0.09, 0.0, 0.88), (0.09, 0.0, 0.08), 0.075, 30, 56),
    "leg.R": ("leg.R", (-0.09, 0.0, 0.88), (-0.09, 0.0, 0.08), 0.075, 30, 56),
}
PIVOTS = {"torso": (0.0, 0.0, 0.95), "arm.L": (0.26, 0.0, 1.40), "arm.R": (-0.26, 0.0, 1.40),
          "leg.L": (0.09, 0.0, 0.9), "leg.R": (-0.09, 0.0, 0.9)}  # fmt: skip
CAPE_N, CAPE_W, CAPE_L = 100, 0.5, 0.9
CAPE_TOP, CAPE_Y = 1.40, 0.20  # behind the back (the body faces -y)


def capsule(start, end, radius, rings, segments) -> tuple[np.ndarray, np.ndarray]:
    verts, tris = uv_sphere(rings, segments, radius)
    a, b = np.asarray(start, float), np.asarray(end, float)
    axis = b - a
    length = float(np.linalg.norm(axis))
    z = axis / length if length > 0 else np.array([0.0, 0.0, 1.0])
    x = np.cross(z, [0.0, 1.0, 0.0]) if abs(z[1]) < 0.9 else np.cross(z, [1.0, 0.0, 0.0])
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    local = verts.copy()
    local[:, 2] += np.where(local[:, 2] > 0, length / 2, -length / 2)
    world = local @ np.stack([x, y, z]) + (a + b) / 2
    return world, tris


def build_body() -> tuple[bpy.types.Object, bpy.types.Object]:
    arm_data = bpy.data.armatures.new("Rig")
    rig = bpy.data.objects.new("Rig", arm_data)
    bpy.context.scene.collection.objects.link(rig)
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="EDIT")
    root = arm_data.edit_bones.new("root")
    root.head, root.tail = (0, 0, 0), (0, 0, 0.3)
    for name, pivot in PIVOTS.items():
        bone = arm_data.edit_bones.new(name)
        bone.head = pivot
        bone.tail = (pivot[0], pivot[1], pivot[2] + (0.3 if name == "torso" else -0.3))
        bone.parent = root if name in ("torso", "leg.L", "leg.R") else arm_data.edit_bones["torso"]
    bpy.ops.object.mode_set(mode="OBJECT")
    verts, tris, groups = [], [], []
    offset = 0
    for bone, start, end, radius, rings, segments in PARTS.values():
        v, t = capsule(start, end, radius, rings, segments)
        verts.append(v)
        tris.append(t + offset)
        groups.append((bone, np.arange(offset, offset + len(v))))
        offset += len(v)
    mesh = bpy.data.meshes.new("Body")
    mesh.from_pydata(np.vstack(verts).tolist(), [], np.vstack(tris).tolist())
    body = bpy.data.objects.new("Body", mesh)
    bpy.context.scene.collection.objects.link(body)
    for bone, ids in groups:
        group = body.vertex_groups.get(bone) or body.vertex_groups.new(name=bone)
        group.add(ids.tolist(), 1.0, "REPLACE")
    body.modifiers.new("Armature", "ARMATURE").object = rig
    body.modifiers.new("Collision", "COLLISION")
    animate(rig)
    return rig, body


def animate(rig: bpy.types.Object, frames: int = 48) -> None:
    for f in range(1, frames + 2):
        t = (f - 1) / 24.0
        turn = np.pi / 2 * min(t / 2.0, 1.0)
        rig.location = (0.0, -1.0 * t, 0.0)
        rig.rotation_euler = (0.0, 0.0, turn)
        rig.keyframe_insert("location", frame=f)
        rig.keyframe_insert("rotation_euler", frame=f)
        swing = 0.45 * np.sin(2 * np.pi * t)
        for name, sign in (("leg.L", 1), ("leg.R", -1), ("arm.L", -1), ("arm.R", 1)):
            pb = rig.pose.bones[name]
            pb.rotation_mode = "XYZ"
            pb.rotation_euler = (sign * swing, 0.0, 0.0)
            pb.keyframe_insert("rotation_euler", frame=f)


def build_cape(rig: bpy.types.Object, name: str) -> bpy.types.Object:
    xs = np.linspace(-CAPE_W / 2, CAPE_W / 2, CAPE_N)
    zs = np.linspace(CAPE_TOP, CAPE_TOP - CAPE_L, CAPE_N)
    gx, gz = np.meshgrid(xs, zs)
    verts = np.stack([gx.ravel(), np.full(gx.size, CAPE_Y), gz.ravel()], axis=1)
    i, j = np.meshgrid(np.arange(CAPE_N - 1), np.arange(CAPE_N - 1))
    a = (j * CAPE_N + i).ravel()
    quads = np.stack([a, a + CAPE_N, a + CAPE_N + 1, a + 1], axis=1)
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata(verts.tolist(), [], quads.tolist())
    cape = bpy.data.objects.new(name, mesh)
    bpy.context.scene.collection.objects.link(cape)
    cape.vertex_groups.new(name="torso").add(list(range(len(verts))), 1.0, "REPLACE")
    cape.modifiers.new("Armature", "ARMATURE").object = rig
    return cape


def stretch_p99(pos: np.ndarray, rest: np.ndarray) -> float:
    n = CAPE_N
    idx = np.arange(n * n).reshape(n, n)
    edges = np.vstack(
        [np.stack([idx[:, :-1].ravel(), idx[:, 1:].ravel()], 1),
         np.stack([idx[:-1].ravel(), idx[1:].ravel()], 1)]
    )  # fmt: skip
    length = np.linalg.norm(pos[edges[:, 1]] - pos[edges[:, 0]], axis=1)
    rest_length = np.linalg.norm(rest[edges[:, 1]] - rest[edges[:, 0]], axis=1)
    return float(np.percentile(np.abs(length / rest_length - 1.0), 99))


def depth_inside(rig: bpy.types.Object, points: np.ndarray) -> float:
    """The deepest of ``points`` inside the posed capsules (positive = inside)."""
    deepest = -np.inf
    for bone, start, end, radius, _, _ in PARTS.values():
        m = (
            np.array(rig.matrix_world)
            @ np.array(rig.pose.bones[bone].matrix)
            @ np.linalg.inv(np.array(rig.data.bones[bone].matrix_local))
        )
        a = m[:3, :3] @ np.asarray(start) + m[:3, 3]
        b = m[:3, :3] @ np.asarray(end) + m[:3, 3]
        d = b - a
        t = np.clip((points - a) @ d / max(d @ d, 1e-12), 0.0, 1.0)
        dist = np.linalg.norm(points - (a + t[:, None] * d), axis=1)
        deepest = max(deepest, float((radius - dist).max()))
    return deepest


def world_positions(obj: bpy.types.Object) -> np.ndarray:
    ev = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    mesh = ev.to_mesh()
    co = np.empty(len(mesh.vertices) * 3, dtype=np.float32)
    mesh.vertices.foreach_get("co", co)
    ev.to_mesh_clear()
    m = np.array(ev.matrix_world)
    return co.reshape(-1, 3).astype(float) @ m[:3, :3].T + m[:3, 3]


def play(cape: bpy.types.Object, rig: bpy.types.Object, frames: int) -> dict:
    scene = bpy.context.scene
    scene.frame_set(1)
    rest = world_positions(cape)
    times, deepest = [], -np.inf
    for f in range(2, frames + 2):
        t = time.perf_counter()
        scene.frame_set(f)
        pos = world_positions(cape)  # make sure it is computed
        times.append(time.perf_counter() - t)
        deepest = max(deepest, depth_inside(rig, pos))
    tris = grid_triangles(CAPE_N, CAPE_N)
    return {
        "ms": 1e3 * statistics.median(times),
        "deepest": deepest,
        "crossing": intersecting_pairs(pos, tris),
        "p99": stretch_p99(pos, rest),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--frames", type=int, default=36)
    parser.add_argument("--no-blender", action="store_true")
    args = parser.parse_args()
    bpy.ops.wm.read_homefile(use_empty=True)
    from xof.tests.scene.cloth_fixtures import register_physics

    register_physics()
    from xof.addon.scene.cloth.data import MASS_GROUP, set_group_weights

    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, args.frames + 1
    rig, body = build_body()
    print(f"body: {len(body.data.polygons)} triangles; cape {CAPE_N * CAPE_N} points")
    print(f"load average before: {os.getloadavg()}")
    colliders = bpy.data.collections.new("Colliders")
    scene.collection.children.link(colliders)
    colliders.objects.link(body)

    ours = build_cape(rig, "CapeXof")
    masses = np.ones(CAPE_N * CAPE_N)
    masses[:CAPE_N] = 0.0
    set_group_weights(ours, MASS_GROUP, masses)
    props = ours.xof_physics
    props.enabled = True
    props.collider_collection = colliders
    props.self_collision = True
    props.frame_start, props.frame_end = 1, args.frames + 1
    xof = play(ours, rig, args.frames)
    print(
        f"xof: {xof['ms']:.1f} ms/frame; deepest inside the body {1e3 * xof['deepest']:.1f} mm; "
        f"intersecting cape pairs at the end {xof['crossing']}; stretch p99 "
        f"{100 * xof['p99']:.2f}%"
    )
    if args.no_blender:
        return
    props.enabled = False
    ours.hide_viewport = True
    theirs = build_cape(rig, "CapeBlender")
    theirs.vertex_groups.new(name="pin").add(list(range(CAPE_N)), 1.0, "REPLACE")
    cloth = theirs.modifiers.new("Cloth", "CLOTH")
    cloth.settings.quality = 5
    cloth.settings.vertex_group_mass = "pin"
    cloth.collision_settings.use_collision = True
    cloth.collision_settings.use_self_collision = True
    cloth.point_cache.frame_start, cloth.point_cache.frame_end = 1, args.frames + 1
    native = play(theirs, rig, args.frames)
    print(
        f"Blender Cloth: {native['ms']:.1f} ms/frame; deepest inside the body "
        f"{1e3 * native['deepest']:.1f} mm; intersecting cape pairs at the end "
        f"{native['crossing']}; stretch p99 {100 * native['p99']:.2f}%"
    )
    print(f"ratio Blender / xof: {native['ms'] / xof['ms']:.1f}x")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
