"""The demo's character (examples/character.x): the committed file is what its generator
writes, and imported headless as ``make demo`` does it walks, its cape is cloth, and the cape
drapes over the body without entering it, shading from its own folds."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from ..scene.scene_fixtures import corner_face_angles

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
FRAMES = 24  # one walk cycle at 24 fps
INSIDE = 0.01  # metres beyond the body's surface a cape point may be (its collider thickness)


def example(name: str) -> ModuleType:
    """Load ``examples/<name>.py`` as a module (the examples are scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(f"xof_example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_committed_character_is_what_the_generator_writes() -> None:
    text = example("make_character").character_text()
    committed = (EXAMPLES / "character.x").read_text(encoding="ascii")
    assert committed == text, "examples/character.x is stale: run examples/make_character.py"
    assert len(text.encode()) < 512 * 1024


def test_the_generator_writes_the_described_figure() -> None:
    gen = example("make_character")
    _, faces, weights = gen.body()
    triangles = sum(len(f) - 2 for f in faces)
    assert 2000 < triangles < 6000
    assert len(gen.BONES) == 19
    for w in weights:  # every vertex fully weighted, to known bones
        assert sum(w.values()) == pytest.approx(1.0)
        assert set(w) <= set(gen.PARENT)
    # the cape hangs behind the back (the figure faces -y), from the shoulders down
    cape, _, _, _ = gen.cape()
    assert (cape[:, 1] > 0.05).all()
    assert cape[:, 2].max() == pytest.approx(gen.HEAD["Clavicle.L"][2], abs=0.02)


def evaluated_world(obj, depsgraph) -> np.ndarray:
    shown = obj.evaluated_get(depsgraph)
    mesh = shown.data
    co = np.empty(len(mesh.vertices) * 3, dtype=np.float64)
    mesh.vertices.foreach_get("co", co)
    m = np.array(shown.matrix_world)
    return co.reshape(-1, 3) @ m[:3, :3].T + m[:3, 3]


def depth_inside(body, points: np.ndarray, depsgraph) -> np.ndarray:
    """How far each point is behind the body's nearest surface (0 outside), by Blender's BVH
    of the evaluated body."""
    from mathutils import Vector
    from mathutils.bvhtree import BVHTree

    tree = BVHTree.FromObject(body, depsgraph)  # in the body's object space
    to_local = body.matrix_world.inverted()
    depth = np.zeros(len(points))
    for i, p in enumerate(points):
        local = to_local @ Vector(p)
        location, normal, _, _ = tree.find_nearest(local)
        depth[i] = max(0.0, -float((local - location).dot(normal)))
    return depth


@pytest.mark.blender
def test_the_character_walks_in_its_cape_as_the_demo_plays_it() -> None:
    bpy = pytest.importorskip("bpy")
    import addon_utils
    from xof.addon.scene.cloth.colliders import colliders_from_collection

    bpy.ops.wm.read_homefile(use_empty=True)
    addon_utils.enable("xof", default_set=True)
    try:
        demo = example("demo")
        arm, body, cape = demo.import_character()
        assert len(arm.data.bones) == 19
        assert [a.name for a in bpy.data.actions] == ["Walk"]
        assert cape.xof_physics.enabled
        group = cape.vertex_groups["cloth_mass"]
        masses = np.array([group.weight(i) for i in range(len(cape.data.vertices))])
        gen = example("make_character")
        assert np.flatnonzero(masses == 0.0).tolist() == list(range(gen.CAPE_COLS))  # top row
        demo.dress(body, cape, FRAMES)
        collection = cape.xof_physics.collider_collection
        assert body.name in collection.objects
        scene = bpy.context.scene
        scene.frame_start, scene.frame_end = 1, FRAMES
        depsgraph = bpy.context.evaluated_depsgraph_get()
        colliders = colliders_from_collection(collection, depsgraph, exclude=cape)
        assert len(colliders) == 1
        # the body's skinned surface, not a bounding shape (the cape would freeze around it)
        assert type(colliders[0]).__name__ == "MeshCollider"

        rest = evaluated_world(cape, depsgraph)
        deepest, foot = 0.0, {}
        for frame in range(1, FRAMES + 1):
            scene.frame_set(frame)
            depsgraph = bpy.context.evaluated_depsgraph_get()
            foot[frame] = (arm.matrix_world @ arm.pose.bones["Foot.L"].head).y
            world = evaluated_world(cape, depsgraph)
            deepest = max(deepest, float(depth_inside(body, world, depsgraph).max()))
        assert cape.xof_physics.cache_state == "VALID"
        # it walks (facing -y): the left foot forward a quarter cycle in, back at three quarters
        assert foot[FRAMES // 4 + 1] < -0.15 and foot[3 * FRAMES // 4 + 1] > 0.15
        assert deepest < INSIDE
        moved = np.linalg.norm(world - rest, axis=1)
        assert moved[gen.CAPE_COLS :].max() > 0.05  # the free cloth moved: it was simulated
        # pinned points follow the chest: they move with the walk but keep their spacing
        top = world[: gen.CAPE_COLS]
        assert np.linalg.norm(top - rest[: gen.CAPE_COLS], axis=1).max() > 0.005
        np.testing.assert_allclose(
            np.linalg.norm(np.diff(top, axis=0), axis=1),
            np.linalg.norm(np.diff(rest[: gen.CAPE_COLS], axis=0), axis=1),
            rtol=1e-3,
        )
        shown = cape.evaluated_get(depsgraph).data
        assert np.median(corner_face_angles(shown)) < 35.0
    finally:
        addon_utils.disable("xof", default_set=True)
