"""Coarse cape benchmark (a script, not a test; needs bpy): how many of a 6 x 6 cape's 50
triangles the walking body's triangles cross, per frame.

    .venv/bin/python tests/bench/bench_coarse_cape.py [--frames 60] [--shift 0.05] [--blender]

Scene: ``examples/character.x`` (the demo's walking figure); its cape is replaced by a 6 x 6
grid sampled from the demo cape's rest grid (every few rows and columns), skinned to the
chest, its top row pinned at the shoulders, all but the top row moved ``--shift`` metres
toward the body (0.05: the swinging legs reach it; the book's hero starts with 21 of 50
triangles crossed). The body collides as its surface (thickness 0.012, margin 0.008, 16
substeps, as ``make demo``). ``--blender``: Blender's Cloth with the body's Collision
modifier (thickness_outer 0.012) instead of xof. A cape triangle counts as crossed when an
edge of a body triangle passes through it or one of its edges through a body triangle
(Moller-Trumbore, ``tests/sim/meshes.py``). Prints the count per frame, its maximum over
frames 20-60 and the median CPU ms of ``frame_set``.
"""

from __future__ import annotations

import argparse
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

from tests.bench.body_measures import evaluated_triangles  # noqa: E402
from tests.sim.meshes import _segment_hits  # noqa: E402

DEMO_COLS, DEMO_ROWS = 19, 27  # examples/make_character.py's cape grid
SIDE = 6


def coarse_cape(cape: bpy.types.Object, shift: float) -> None:
    """Replace the cape's mesh by the 6 x 6 grid (weights: all on the chest)."""
    co = np.empty(len(cape.data.vertices) * 3, np.float32)
    cape.data.vertices.foreach_get("co", co)
    cols = np.round(np.linspace(0, DEMO_COLS - 1, SIDE)).astype(int)
    rows = np.round(np.linspace(0, DEMO_ROWS - 1, SIDE)).astype(int)
    verts = co.reshape(-1, 3)[(rows[:, None] * DEMO_COLS + cols[None, :]).ravel()].copy()
    verts[SIDE:, 1] -= shift  # toward the body (its back faces +y)
    idx = np.arange(SIDE * SIDE).reshape(SIDE, SIDE)
    quads = np.stack([idx[:-1, :-1], idx[1:, :-1], idx[1:, 1:], idx[:-1, 1:]], -1)
    mesh = bpy.data.meshes.new("CoarseCape")
    mesh.from_pydata(verts.tolist(), [], quads.reshape(-1, 4).tolist())
    cape.data = mesh
    for group in list(cape.vertex_groups):
        cape.vertex_groups.remove(group)
    cape.vertex_groups.new(name="Chest").add(list(range(SIDE * SIDE)), 1.0, "REPLACE")


def crossed(cape: tuple[np.ndarray, np.ndarray], body: tuple[np.ndarray, np.ndarray]) -> int:
    """Cape triangles crossed by a body triangle (an edge of either through the other)."""
    (cp, ct), (bp, bt) = cape, body
    low, high = bp[bt].min(axis=1), bp[bt].max(axis=1)
    count = 0
    for tri in ct:
        c = cp[tri]
        near = np.flatnonzero(((low <= c.max(axis=0)) & (high >= c.min(axis=0))).all(axis=1))
        if not near.size:
            continue
        b = bp[bt[near]]
        a0, a1, a2 = (np.repeat(c[None, k], near.size, axis=0) for k in range(3))
        corners = (a0, a1, a2)
        hit = np.zeros(near.size, dtype=bool)
        for e0, e1 in ((0, 1), (1, 2), (2, 0)):
            hit |= _segment_hits(b[:, e0], b[:, e1], a0, a1, a2)
            hit |= _segment_hits(corners[e0], corners[e1], b[:, 0], b[:, 1], b[:, 2])
        count += int(hit.any())
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--frames", type=int, default=60)
    parser.add_argument("--shift", type=float, default=0.05)
    parser.add_argument("--blender", action="store_true", help="Blender's Cloth instead")
    args = parser.parse_args()
    bpy.ops.wm.read_homefile(use_empty=True)
    import xof

    xof.register()
    from xof.addon.scene.cloth.data import MASS_GROUP, set_group_weights

    if bpy.ops.import_scene.x(filepath=str(ROOT / "examples" / "character.x")) != {"FINISHED"}:
        raise SystemExit("examples/character.x: the import failed")
    meshes = [o for o in bpy.context.scene.objects if o.type == "MESH"]
    cape = next(o for o in meshes if o.xof_physics.enabled)
    body = next(o for o in meshes if o is not cape)
    coarse_cape(cape, args.shift)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, args.frames
    colliders = bpy.data.collections.new("Colliders")
    scene.collection.children.link(colliders)
    colliders.objects.link(body)
    if args.blender:
        cape.xof_physics.enabled = False
        cape.vertex_groups.new(name="pin").add(list(range(SIDE)), 1.0, "REPLACE")
        cloth = cape.modifiers.new("Cloth", "CLOTH")
        cloth.settings.vertex_group_mass = "pin"
        cloth.collision_settings.use_collision = True
        cloth.point_cache.frame_start, cloth.point_cache.frame_end = 1, args.frames
        collision = body.modifiers.new("Collision", "COLLISION")
        collision.settings.thickness_outer = 0.012
    else:
        masses = np.ones(SIDE * SIDE)
        masses[:SIDE] = 0.0
        set_group_weights(cape, MASS_GROUP, masses)
        body.xof_physics.collider_shape = "SURFACE"
        body.xof_physics.collider_thickness = 0.012
        props = cape.xof_physics
        props.mass_group = MASS_GROUP
        props.collider_collection = colliders
        props.collision_margin = 0.008
        props.frame_start, props.frame_end = 1, args.frames
        props.substeps = 16
    counts, cpu = [], []
    for frame in range(1, args.frames + 1):
        began = time.process_time()
        scene.frame_set(frame)
        cpu.append(time.process_time() - began)
        counts.append(crossed(evaluated_triangles(cape), evaluated_triangles(body)))
    name = "Blender Cloth" if args.blender else "xof"
    print(f"{name}: crossed cape triangles per frame {counts}")
    late = counts[19:60]
    print(
        f"{name}: at most {max(late) if late else '-'} of {2 * (SIDE - 1) ** 2} crossed over "
        f"frames 20-60, {counts[0]} at frame 1; {1e3 * statistics.median(cpu[1:]):.1f} CPU "
        "ms a frame"
    )


if __name__ == "__main__":
    main()
