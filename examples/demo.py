"""`make demo`: import the bundled cloth cape, simulate it headless, save and render it.

Runs on the ``bpy`` module (no Blender binary): the extension is loaded from this checkout,
``examples/cape.x`` (a level 33 x 25 cloth whose ClothMasses pin five points of its far edge, and
whose ClothSprings list its grid edges; written by ``examples/make_cape.py``) is imported with
``bpy.ops.import_scene.x`` (the import enables xof cloth on it), it falls onto a ball in a
breeze, the timeline is played through xof's frame handler, and the result goes to
``out/demo.blend`` (settings and cache included: reopen it and scrub) and ``out/demo.png``
(a Cycles render on the CPU).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CAPE = ROOT / "examples" / "cape.x"
OUT = ROOT / "out"


def load_extension() -> None:
    """Import this checkout as the package ``xof`` (as Blender would) and register it."""
    link_dir = Path(tempfile.mkdtemp(prefix="xof-demo-"))
    (link_dir / "xof").symlink_to(ROOT, target_is_directory=True)
    sys.path.insert(0, str(link_dir))
    import xof

    xof.register()


def stage() -> None:
    """A camera, a sun, a sky and a small Cycles render that shows the cape's folds."""
    import bpy
    from mathutils import Vector

    scene = bpy.context.scene
    cam = bpy.data.objects.new("Camera", bpy.data.cameras.new("Camera"))
    scene.collection.objects.link(cam)
    cam.location = (2.6, -3.6, 1.9)
    direction = Vector((0.0, 0.0, 1.15)) - cam.location
    cam.rotation_euler = direction.to_track_quat("-Z", "Y").to_euler()
    scene.camera = cam
    sun = bpy.data.objects.new("Sun", bpy.data.lights.new("Sun", "SUN"))
    scene.collection.objects.link(sun)
    sun.rotation_euler = (0.6, 0.3, 0.9)
    sun.data.energy = 3.0
    world = bpy.data.worlds.new("Sky")
    if world.node_tree is None:  # Blender 4.5; 5.0 gives new worlds their nodes
        world.use_nodes = True
    world.node_tree.nodes["Background"].inputs["Color"].default_value = (0.55, 0.65, 0.8, 1)
    world.node_tree.nodes["Background"].inputs["Strength"].default_value = 0.8
    scene.world = world
    scene.render.engine = "CYCLES"
    scene.cycles.device = "CPU"
    scene.cycles.samples = 24
    scene.cycles.use_denoising = False
    scene.render.resolution_x, scene.render.resolution_y = 640, 480
    scene.render.resolution_percentage = 100


def obstacles() -> object:
    """A ball the wind presses the cape onto and a floor: xof colliders (and scenery)."""
    import bmesh
    import bpy

    colliders = bpy.data.collections.new("Colliders")
    bpy.context.scene.collection.children.link(colliders)
    mesh = bpy.data.meshes.new("Ball")
    bm = bmesh.new()
    bmesh.ops.create_uvsphere(bm, u_segments=32, v_segments=16, radius=0.3)
    for face in bm.faces:
        face.smooth = True
    bm.to_mesh(mesh)
    bm.free()
    ball = bpy.data.objects.new("Ball", mesh)
    ball.location = (0.1, -0.55, 1.2)
    floor = bpy.data.objects.new("Floor", bpy.data.meshes.new("Floor"))
    floor.data.from_pydata([(-4, -4, 0), (4, -4, 0), (4, 4, 0), (-4, 4, 0)], [], [(0, 1, 2, 3)])
    floor.location = (0.0, 0.0, 0.0)
    for obj in (ball, floor):
        colliders.objects.link(obj)
    return colliders


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=72, help="frames to simulate (24 fps)")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()

    import bpy

    bpy.ops.wm.read_homefile(use_empty=True)
    load_extension()
    print(f"xof demo: importing {CAPE.relative_to(ROOT)}")
    if bpy.ops.import_scene.x(filepath=str(CAPE)) != {"FINISHED"}:
        print("import failed", file=sys.stderr)
        return 1
    cape = next(o for o in bpy.data.objects if o.type == "MESH")
    props = cape.xof_physics
    if not props.enabled:
        print(f"{cape.name}: no cloth data was imported", file=sys.stderr)
        return 1
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, args.frames
    props.frame_start, props.frame_end = 1, args.frames
    props.wind = (0.6, -0.8, 0.0)  # a light breeze toward the camera (N per point of mass 1)
    props.collider_collection = obstacles()
    props.collision_margin = 0.02
    stage()

    started = time.perf_counter()
    for frame in range(1, args.frames + 1):
        scene.frame_set(frame)
    elapsed = time.perf_counter() - started
    shown = cape.evaluated_get(bpy.context.evaluated_depsgraph_get())  # the mesh stays at rest
    lowest = min((shown.matrix_world @ v.co).z for v in shown.data.vertices)
    print(
        f"simulated {args.frames} frames of {len(cape.data.vertices)} points in "
        f"{elapsed:.2f} s ({1e3 * elapsed / args.frames:.1f} ms/frame); cache "
        f"{props.cache_state.lower()}, lowest point z = {lowest:.3f}"
    )

    args.out.mkdir(parents=True, exist_ok=True)
    blend = args.out / "demo.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    print(f"saved {blend.relative_to(ROOT) if blend.is_relative_to(ROOT) else blend}")
    png = args.out / "demo.png"
    scene.render.filepath = str(png)
    bpy.ops.render.render(write_still=True)
    print(f"rendered frame {scene.frame_current} to {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
