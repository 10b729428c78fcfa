"""Character benchmark (a script, not a test; needs bpy): a cape on a walking, turning,
skinned body, xof's cloth vs Blender's Cloth modifier on the same scene, one run each.

    .venv/bin/python tests/bench/bench_character.py [--frames 36] [--no-blender]
        [--no-self] [--profile FILE] [--quiet] [--crossing] [--save FILE.npy]

Scene (generated here): a body of capsules (torso, head, arms, legs; about 20k triangles)
skinned rigidly to an armature whose root walks forward and turns 90 degrees while the
torso leans forward (0.2-0.5 rad) and twists, the legs and arms swing (body and cape are
parented to the rig: an Armature modifier deforms in the rig's space); the body carries
Blender's Collision modifier (thickness_outer 0.02, cloth_friction 5), which xof reads too.
The cape is a 100 x 100 grid (0.5 m x 0.9 m) wrapped around the back just outside the
reach (surface + thickness + xof's margin + 1 mm), skinned to the torso, its top row pinned
at the shoulders (xof: mass 0 in ``cloth_mass``; Blender: weight 1 in ``pin``): it rests on
the back, the lean presses the back into it and the legs kick its lower half as they swing
back. xof: default cloth settings, self-collision on (0.015 m; ``--no-self``: off). Blender:
Cloth quality 5, collision and self-collision on (its defaults).

Per frame (``--quiet``: summary only): wall and CPU ms of ``frame_set``, the signed
distance of the cape's nearest point to the body surface (mm, negative = inside), measured
two independent ways: against the evaluated body's triangles (``mathutils`` BVHTree, sign
from the face normal) and against the posed capsules (analytic, from the bone matrices; the
mesh is inscribed in them, up to 0.15 mm inside), and how many cape points are within the
thickness (closer than 0.02 m). Per run: median ms per frame after the first, the smallest
distance over the run, intersecting cape triangle pairs at the last frame (pairs sharing a
vertex excluded) and structural stretch p99 at the last frame. ``--profile`` writes a
cProfile of xof's frames (``python -m pstats FILE``).
"""

from __future__ import annotations

import argparse
import cProfile
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
from xof.addon.sim.collide.scan_count import SCANS, scan_report  # noqa: E402

from tests.bench.body_measures import (  # noqa: E402
    mesh_distance,
    world_positions,
)
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
THICKNESS = 0.02  # the body's Collision modifier thickness_outer
# wrapped around the torso's back (the body faces -y) 1 mm outside xof's reach (thickness +
# the default collision margin 0.005)
CAPE_TOP, CAPE_RADIUS = 1.40, 0.17 + THICKNESS + 0.005 + 0.001


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
    body.parent = rig  # the Armature modifier deforms in the rig's space: parented, it walks
    body.modifiers.new("Armature", "ARMATURE").object = rig
    body.modifiers.new("Collision", "COLLISION")
    body.collision.thickness_outer = THICKNESS
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
        torso = rig.pose.bones["torso"]
        torso.rotation_mode = "XYZ"  # lean forward 0.2-0.5 rad (the cape lies on the back)
        lean = 0.35 - 0.15 * np.cos(2 * np.pi * t)
        torso.rotation_euler = (lean, 0.2 * np.sin(np.pi * t), 0.0)  # and twist +-0.2 rad
        torso.keyframe_insert("rotation_euler", frame=f)
        for name, sign in (("leg.L", 1), ("leg.R", -1), ("arm.L", -1), ("arm.R", 1)):
            pb = rig.pose.bones[name]
            pb.rotation_mode = "XYZ"
            pb.rotation_euler = (sign * swing, 0.0, 0.0)
            pb.keyframe_insert("rotation_euler", frame=f)


def build_cape(rig: bpy.types.Object, name: str) -> bpy.types.Object:
    arc = np.linspace(-CAPE_W / 2, CAPE_W / 2, CAPE_N) / CAPE_RADIUS  # around the back
    zs = np.linspace(CAPE_TOP, CAPE_TOP - CAPE_L, CAPE_N)
    ga, gz = np.meshgrid(arc, zs)
    x, y = CAPE_RADIUS * np.sin(ga), CAPE_RADIUS * np.cos(ga)
    verts = np.stack([x.ravel(), y.ravel(), gz.ravel()], axis=1)
    i, j = np.meshgrid(np.arange(CAPE_N - 1), np.arange(CAPE_N - 1))
    a = (j * CAPE_N + i).ravel()
    quads = np.stack([a, a + CAPE_N, a + CAPE_N + 1, a + 1], axis=1)
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata(verts.tolist(), [], quads.tolist())
    cape = bpy.data.objects.new(name, mesh)
    bpy.context.scene.collection.objects.link(cape)
    cape.vertex_groups.new(name="torso").add(list(range(len(verts))), 1.0, "REPLACE")
    cape.parent = rig
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


def capsule_distance(rig: bpy.types.Object, points: np.ndarray) -> np.ndarray:
    """Signed distance ``(N,)`` of ``points`` to the posed capsules' union (negative =
    inside)."""
    nearest = np.full(len(points), np.inf)
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
        np.minimum(nearest, dist - radius, out=nearest)
    return nearest


def play(
    cape: bpy.types.Object,
    rig: bpy.types.Object,
    body: bpy.types.Object,
    frames: int,
    quiet: bool = False,
    profile: str | None = None,
    crossing: bool = False,
    save: str | None = None,
) -> dict:
    scene = bpy.context.scene
    scene.frame_set(1)
    rest = world_positions(cape)
    times, cpu, nearest_mesh, nearest_capsule = [], [], [], []
    profiler = cProfile.Profile() if profile else None
    scans = SCANS.copy()
    tris = grid_triangles(CAPE_N, CAPE_N)
    saved = [rest]
    for f in range(2, frames + 2):
        t, c = time.perf_counter(), time.process_time()
        if profiler is not None:
            profiler.enable()
        scene.frame_set(f)
        pos = world_positions(cape)  # make sure it is computed
        if profiler is not None:
            profiler.disable()
        times.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
        by_mesh = mesh_distance(body, pos)
        by_capsule = capsule_distance(rig, pos)
        nearest_mesh.append(float(by_mesh.min()))
        nearest_capsule.append(float(by_capsule.min()))
        saved.append(pos)
        if crossing:
            print(f"  frame {f}: intersecting cape pairs {intersecting_pairs(pos, tris)}")
        if not quiet:
            print(
                f"  frame {f}: {1e3 * times[-1]:7.1f} ms ({1e3 * cpu[-1]:7.1f} CPU); nearest to "
                f"the body {1e3 * nearest_mesh[-1]:+6.1f} mm (mesh) "
                f"{1e3 * nearest_capsule[-1]:+6.1f} mm (capsules); within the thickness "
                f"{int((by_mesh < THICKNESS).sum())} points"
            )
    if profiler is not None and profile:
        profiler.dump_stats(profile)
    if save:
        np.save(save, np.stack(saved))
    return {
        "scans": SCANS.since(scans),
        "ms": 1e3 * statistics.median(times),
        "cpu": 1e3 * statistics.median(cpu),
        "nearest": min(nearest_mesh),
        "nearest_capsule": min(nearest_capsule),
        "inside_frames": sum(d < 0 for d in nearest_mesh),
        "crossing": intersecting_pairs(pos, tris),
        "p99": stretch_p99(pos, rest),
    }


def summary(name: str, r: dict) -> str:
    return (
        f"{name}: {r['ms']:.1f} ms/frame ({r['cpu']:.1f} CPU); nearest to the body over the run "
        f"{1e3 * r['nearest']:+.1f} mm (mesh), {1e3 * r['nearest_capsule']:+.1f} mm (capsules), "
        f"frames with a point inside {r['inside_frames']}; intersecting cape pairs at the end "
        f"{r['crossing']}; stretch p99 {100 * r['p99']:.2f}%"
    )


def scan_lines(r: dict, frames: int) -> str:
    return scan_report(r["scans"], frames)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--frames", type=int, default=36)
    parser.add_argument("--no-blender", action="store_true")
    parser.add_argument("--no-self", action="store_true", help="xof without self-collision")
    parser.add_argument("--profile", help="write a cProfile of xof's frames here")
    parser.add_argument("--quiet", action="store_true", help="no per-frame lines")
    parser.add_argument(
        "--crossing", action="store_true", help="intersecting cape pairs every frame"
    )
    parser.add_argument("--save", help="xof's cape positions (rest, then each frame) to this .npy")
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
    props.self_collision = not args.no_self
    props.frame_start, props.frame_end = 1, args.frames + 1
    xof = play(ours, rig, body, args.frames, args.quiet, args.profile, args.crossing, args.save)
    print(summary("xof", xof))
    print(scan_lines(xof, args.frames))
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
    native = play(theirs, rig, body, args.frames, args.quiet)
    print(summary("Blender Cloth", native))
    print(
        f"ratio Blender / xof: {native['ms'] / xof['ms']:.1f}x wall, "
        f"{native['cpu'] / xof['cpu']:.1f}x CPU"
    )
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
