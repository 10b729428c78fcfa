"""`make demo`: a walking character in a cloth cape, imported from .X, simulated and rendered.

Runs on the ``bpy`` module (no Blender binary): the extension is loaded from this checkout and
``examples/character.x`` (a skinned figure with a walk cycle and a cape whose ``ClothMasses``
pin its top row at the shoulders; written by ``examples/make_character.py``) is imported with
``bpy.ops.import_scene.x``, which enables xof cloth on the cape. The body goes into the cape's
collider collection, so the cape collides with the body's skinned surface as it walks; a
breeze from the front stands in for walking forward. The timeline is played through xof's
frame handler, then ``out/demo.blend`` is saved (settings and cache included: reopen it and
scrub) and ``out/demo.png`` rendered (Cycles on the CPU): three frames side by side.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
CHARACTER = ROOT / "examples" / "character.x"
OUT = ROOT / "out"
SHOWN = (30, 36, 42)  # the strip: left foot forward, passing, right foot forward


def load_extension() -> None:
    """Import this checkout as the package ``xof`` (as Blender would) and register it."""
    link_dir = Path(tempfile.mkdtemp(prefix="xof-demo-"))
    (link_dir / "xof").symlink_to(ROOT, target_is_directory=True)
    sys.path.insert(0, str(link_dir))
    import xof

    xof.register()


def import_character() -> tuple[object, object, object]:
    """Import the character: (armature, body, cape)."""
    import bpy

    if bpy.ops.import_scene.x(filepath=str(CHARACTER)) != {"FINISHED"}:
        raise RuntimeError(f"{CHARACTER.name}: the import failed")
    objects = bpy.context.scene.objects
    arm = next(o for o in objects if o.type == "ARMATURE")
    meshes = [o for o in objects if o.type == "MESH"]
    cape = next((o for o in meshes if o.xof_physics.enabled), None)
    if cape is None:
        raise RuntimeError(f"{CHARACTER.name}: no cloth data was imported")
    body = next(o for o in meshes if o is not cape)
    return arm, body, cape


def dress(body: object, cape: object, frames: int) -> None:
    """The body as the cape's collider, and the cape's settings for the walk."""
    import bpy

    colliders = bpy.data.collections.new("Colliders")
    bpy.context.scene.collection.children.link(colliders)
    colliders.objects.link(body)  # the body stays in its own collection too
    collider = body.xof_physics
    if hasattr(collider, "collider_shape"):  # how a mesh collides: its evaluated surface
        collider.collider_shape = "SURFACE"
        collider.collider_thickness = 0.012
    props = cape.xof_physics
    props.collider_collection = colliders
    props.collision_margin = 0.008
    props.frame_start, props.frame_end = 1, frames
    props.wind = (0.0, 1.8, 0.0)  # a breeze from the front (N per point of mass 1)
    props.substeps = 16
    if hasattr(props, "self_collision"):
        props.self_collision = True


def stage(body: object, cape: object) -> None:
    """A floor, a camera behind and beside the figure, a sun, a sky; Cycles on the CPU."""
    import bpy
    from mathutils import Vector

    scene = bpy.context.scene
    floor = bpy.data.objects.new("Floor", bpy.data.meshes.new("Floor"))
    floor.data.from_pydata([(-6, -6, 0), (6, -6, 0), (6, 6, 0), (-6, 6, 0)], [], [(0, 1, 2, 3)])
    ground = bpy.data.materials.new("Ground")
    ground.diffuse_color = (0.42, 0.4, 0.37, 1.0)
    if ground.node_tree is None:  # Blender 4.5; 5.0 gives new materials their nodes
        ground.use_nodes = True
    bsdf = ground.node_tree.nodes.get("Principled BSDF")
    if bsdf is not None:
        bsdf.inputs["Base Color"].default_value = (0.42, 0.4, 0.37, 1.0)
        bsdf.inputs["Roughness"].default_value = 0.9
    floor.data.materials.append(ground)
    scene.collection.objects.link(floor)
    cam = bpy.data.objects.new("Camera", bpy.data.cameras.new("Camera"))
    scene.collection.objects.link(cam)
    cam.location = (2.7, 2.3, 1.45)
    direction = Vector((0.0, 0.05, 0.9)) - cam.location
    cam.rotation_euler = direction.to_track_quat("-Z", "Y").to_euler()
    cam.data.lens = 55.0
    scene.camera = cam
    sun = bpy.data.objects.new("Sun", bpy.data.lights.new("Sun", "SUN"))
    scene.collection.objects.link(sun)
    sun.rotation_euler = (0.9, 0.0, 2.6)
    sun.data.energy = 3.5
    sun.data.angle = 0.1
    world = bpy.data.worlds.new("Sky")
    if world.node_tree is None:  # Blender 4.5; 5.0 gives new worlds their nodes
        world.use_nodes = True
    world.node_tree.nodes["Background"].inputs["Color"].default_value = (0.55, 0.65, 0.8, 1)
    world.node_tree.nodes["Background"].inputs["Strength"].default_value = 0.7
    scene.world = world
    scene.render.engine = "CYCLES"
    scene.cycles.device = "CPU"
    scene.cycles.samples = 16
    scene.cycles.use_denoising = True
    scene.render.resolution_x, scene.render.resolution_y = 360, 480
    scene.render.resolution_percentage = 100


def render_strip(png: Path, frames: tuple[int, ...]) -> None:
    """Render ``frames`` (already simulated and cached) and write them side by side."""
    import bpy

    scene = bpy.context.scene
    tiles = []
    with tempfile.TemporaryDirectory(prefix="xof-demo-") as tmp:
        for frame in frames:
            scene.frame_set(frame)
            scene.render.filepath = str(Path(tmp) / f"frame{frame}.png")
            bpy.ops.render.render(write_still=True)
            image = bpy.data.images.load(scene.render.filepath)
            w, h = image.size
            pixels = np.empty(w * h * 4, dtype=np.float32)
            image.pixels.foreach_get(pixels)
            tiles.append(pixels.reshape(h, w, 4))
            bpy.data.images.remove(image)
    strip = np.concatenate(tiles, axis=1)
    h, w = strip.shape[:2]
    out = bpy.data.images.new("DemoStrip", w, h, alpha=False)
    out.pixels.foreach_set(strip.reshape(-1))
    # the tiles are display colours already: written as they are (Standard view), RGB, with
    # PNG's strongest compression
    settings, view = scene.render.image_settings, scene.view_settings
    kept = view.view_transform, view.look
    settings.file_format, settings.color_mode, settings.compression = "PNG", "RGB", 100
    view.view_transform, view.look = "Standard", "None"
    try:
        out.save_render(str(png), scene=scene)
    finally:
        view.view_transform, view.look = kept
        bpy.data.images.remove(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=max(SHOWN), help="frames to simulate")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--samples", type=int, default=16, help="Cycles samples per pixel")
    args = ap.parse_args()

    import bpy

    bpy.ops.wm.read_homefile(use_empty=True)
    load_extension()
    print(f"xof demo: importing {CHARACTER.relative_to(ROOT)}")
    try:
        arm, body, cape = import_character()
    except RuntimeError as exc:
        print(exc, file=sys.stderr)
        return 1
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, args.frames
    dress(body, cape, args.frames)
    stage(body, cape)
    scene.cycles.samples = args.samples

    started = time.perf_counter()
    for frame in range(1, args.frames + 1):
        scene.frame_set(frame)
    elapsed = time.perf_counter() - started
    print(
        f"{arm.name}: {len(arm.data.bones)} bones walking; simulated {args.frames} frames of "
        f"{len(cape.data.vertices)} cape points against {len(body.data.polygons)} body faces in "
        f"{elapsed:.2f} s ({1e3 * elapsed / args.frames:.1f} ms/frame); cache "
        f"{cape.xof_physics.cache_state.lower()}"
    )

    args.out.mkdir(parents=True, exist_ok=True)
    blend = args.out / "demo.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    print(f"saved {blend}")
    png = args.out / "demo.png"
    started = time.perf_counter()
    shown = tuple(f for f in SHOWN if f <= args.frames) or (args.frames,)
    render_strip(png, shown)
    took = time.perf_counter() - started
    print(f"rendered frames {', '.join(map(str, shown))} to {png} in {took:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
