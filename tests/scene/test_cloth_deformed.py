"""Cloth on a deformed mesh: pins follow the modifiers, free points are simulated, not
deformed again (a cape on a skinned character is skinned once, through its pins)."""

from __future__ import annotations

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene.cloth import bake as cloth_bake  # noqa: E402
from xof.addon.scene.cloth import override as cloth_override  # noqa: E402
from xof.addon.scene.cloth import runtime as cloth_runtime  # noqa: E402

from .cloth_fixtures import (  # noqa: E402
    grid_arrays,
    grid_object,
    on_screen,
    pin_top_corners,
    positions,
    register_physics,
    unregister_physics,
)
from .skin_fixtures import evaluated_world_positions, fmt, write  # noqa: E402

pytestmark = pytest.mark.blender
N = 8
PINS = [0, N - 1]
SHIFT = np.array([0.6, -0.2, 0.4])  # where the hook's empty goes by frame 11


@pytest.fixture
def hooked():
    """An 8 x 8 cloth hooked whole to an empty that moves by SHIFT over frames 1-11."""
    bpy.ops.wm.read_homefile(use_empty=True)
    register_physics()
    obj = grid_object(bpy, "Cloth", N, N)
    pin_top_corners(bpy, obj, N)
    handle = bpy.data.objects.new("Handle", None)
    bpy.context.scene.collection.objects.link(handle)
    hook = obj.modifiers.new("Hook", "HOOK")
    hook.object = handle
    hook.vertex_indices_set(list(range(N * N)))
    handle.location = (0.0, 0.0, 0.0)
    handle.keyframe_insert("location", frame=1)
    handle.location = tuple(SHIFT)
    handle.keyframe_insert("location", frame=11)
    for curve in _curves(handle):
        for point in curve.keyframe_points:
            point.interpolation = "LINEAR"
    bpy.context.view_layer.objects.active = obj
    obj.xof_physics.enabled = True
    obj.xof_physics.frame_end = 30
    yield obj
    unregister_physics()


def _curves(obj):
    action = obj.animation_data.action
    if hasattr(action, "fcurves"):
        return list(action.fcurves)
    return [c for layer in action.layers for strip in layer.strips for bag in strip.channelbags
            for c in bag.fcurves]  # fmt: skip


def _offset(frame: int) -> np.ndarray:
    return SHIFT * min(max(frame - 1, 0), 10) / 10.0


def test_free_points_are_simulated_once_and_pins_follow_the_hook(hooked) -> None:
    scene = bpy.context.scene
    rest, _ = grid_arrays(N, N)
    free = np.setdiff1d(np.arange(N * N), PINS)
    moved = 0.0
    for f in range(1, 16):
        scene.frame_set(f)
        rt = cloth_runtime.peek_runtime(hooked)
        assert rt is not None and rt.deformed
        assert hooked.modifiers[-1].name == cloth_override.MODIFIER_NAME
        shown = evaluated_world_positions(hooked)
        state, _ = rt.simulator.state()
        # pins: the hook's move of the rest shape, in the solver and on screen
        np.testing.assert_allclose(shown[PINS], rest[PINS] + _offset(f), atol=1e-5)
        np.testing.assert_allclose(state[PINS], rest[PINS] + _offset(f), atol=1e-5)
        # free points: exactly the solver's, not moved by the hook a second time
        np.testing.assert_allclose(shown[free], state[free], atol=1e-5)
        np.testing.assert_allclose(rt.cache.frames[f].positions[free], state[free], atol=1e-5)
        moved = max(moved, float(np.abs(state[free] - rest[free]).max()))
        # the mesh itself keeps the rest shape: the modifiers deform that
        np.testing.assert_array_equal(positions(hooked), rest.astype(np.float32))
    assert moved > 0.1  # it did fall and swing


def test_the_start_frame_starts_from_the_deformed_shape(hooked) -> None:
    scene = bpy.context.scene
    hooked.xof_physics.frame_start = 11  # the empty has moved by SHIFT there
    rest, _ = grid_arrays(N, N)
    scene.frame_set(11)
    rt = cloth_runtime.peek_runtime(hooked)
    state, vel = rt.simulator.state()
    np.testing.assert_allclose(state, rest + SHIFT, atol=1e-5)
    np.testing.assert_array_equal(vel, 0.0)
    np.testing.assert_allclose(evaluated_world_positions(hooked), rest + SHIFT, atol=1e-5)
    scene.frame_set(12)
    state, _ = rt.simulator.state()
    np.testing.assert_allclose(state[PINS], rest[PINS] + SHIFT, atol=1e-5)
    assert np.abs(state - (rest + SHIFT)).max() < 0.05  # one frame of falling, no jump


def test_shape_key_bake_is_refused_and_pc2_bake_plays_last(hooked, tmp_path) -> None:
    scene = bpy.context.scene
    hooked.xof_physics.frame_end = 12
    refusal = r"deformed by its modifiers \(Hook\).*PC2"
    with pytest.raises(RuntimeError, match=refusal):
        cloth_bake.check_shape_key_target(hooked)
    hooked.xof_physics.bake_target = "SHAPE_KEYS"
    with pytest.raises(RuntimeError, match=refusal):  # the operator's error report
        bpy.ops.xof.sim_bake()
    assert hooked.xof_physics.cache_state != "BAKED"
    assert hooked.data.shape_keys is None
    start, frames = cloth_bake.simulate_range(scene, hooked)
    rt = cloth_runtime.peek_runtime(hooked)
    states = {f: rt.cache.frames[f].positions.copy() for f in range(start, 13)}
    cloth_bake.bake_pc2(hooked, start, frames, tmp_path / "cloth.pc2")
    hooked.xof_physics.cache_state = "BAKED"
    assert hooked.modifiers[-1].name == cloth_bake.MODIFIER_NAME
    assert hooked.modifiers.get(cloth_override.MODIFIER_NAME) is None
    for f in (3, 8, 12):  # the cache's frames, pins deformed, free points simulated
        scene.frame_set(f)
        np.testing.assert_allclose(evaluated_world_positions(hooked), states[f], atol=1e-5)


def test_without_modifiers_the_pins_hold_the_rest_shape(hooked) -> None:
    scene = bpy.context.scene
    scene.frame_set(1)
    scene.frame_set(2)
    assert hooked.modifiers.get(cloth_override.MODIFIER_NAME) is not None
    hooked.modifiers.remove(hooked.modifiers["Hook"])
    scene.frame_set(3)
    assert [m.name for m in hooked.modifiers] == [cloth_override.MODIFIER_NAME]  # one path
    rt = cloth_runtime.peek_runtime(hooked)
    assert not rt.deformed
    shown = on_screen(hooked)
    free = ~rt.pinned
    np.testing.assert_allclose(shown[free], rt.cache.frames[3].positions[free], atol=1e-6)
    rest, _ = grid_arrays(N, N)
    np.testing.assert_array_equal(shown[PINS], rest[PINS].astype(np.float32))
    np.testing.assert_array_equal(positions(hooked), rest.astype(np.float32))


def test_disabling_removes_the_override(hooked) -> None:
    scene = bpy.context.scene
    for f in (1, 2, 3):
        scene.frame_set(f)
    assert hooked.modifiers.get(cloth_override.MODIFIER_NAME) is not None
    hooked.xof_physics.enabled = False
    assert hooked.modifiers.get(cloth_override.MODIFIER_NAME) is None
    assert [m.name for m in hooked.modifiers] == ["Hook"]
    for name in (cloth_override.POSITION_ATTRIBUTE, cloth_override.FREE_ATTRIBUTE):
        assert hooked.data.attributes.get(name) is None
    groups = [g for g in bpy.data.node_groups if g.get(cloth_override.GROUP_TAG)]
    assert len(groups) == 1  # made once, reused


def test_a_shape_key_animation_moves_the_pins(hooked) -> None:
    # the same cloth without its hook, but with a key "Lift" raising the top row by 0.5,
    # keyed from 0 at frame 1 to 1 at frame 11
    scene = bpy.context.scene
    hooked.modifiers.remove(hooked.modifiers["Hook"])
    rest, _ = grid_arrays(N, N)
    hooked.shape_key_add(name="Basis", from_mix=False)
    lift = hooked.shape_key_add(name="Lift", from_mix=False)
    lifted = rest.copy()
    lifted[:N, 2] += 0.5
    lift.data.foreach_set("co", lifted.astype(np.float32).ravel())
    lift.value = 0.0
    lift.keyframe_insert("value", frame=1)
    lift.value = 1.0
    lift.keyframe_insert("value", frame=11)
    for curve in _curves(hooked.data.shape_keys):
        for point in curve.keyframe_points:
            point.interpolation = "LINEAR"
    free = np.setdiff1d(np.arange(N * N), PINS)
    for f in range(1, 14):
        scene.frame_set(f)
        rt = cloth_runtime.peek_runtime(hooked)
        assert rt.deformed
        state, _ = rt.simulator.state()
        shown = evaluated_world_positions(hooked)
        up = 0.5 * min(f - 1, 10) / 10.0
        np.testing.assert_allclose(state[PINS], rest[PINS] + [0.0, 0.0, up], atol=1e-5)
        np.testing.assert_allclose(shown[PINS], state[PINS], atol=1e-5)
        np.testing.assert_allclose(shown[free], state[free], atol=1e-5)


def test_ours_sits_between_the_deformers_and_a_subdivision(hooked, tmp_path) -> None:
    scene = bpy.context.scene
    hooked.modifiers.new("Subdivision", "SUBSURF").levels = 1
    hooked.xof_physics.frame_end = 6
    for f in range(1, 7):
        scene.frame_set(f)
    names = [m.name for m in hooked.modifiers]
    assert names == ["Hook", cloth_override.MODIFIER_NAME, "Subdivision"]
    rt = cloth_runtime.peek_runtime(hooked)
    assert rt.deformed
    assert len(evaluated_world_positions(hooked)) > N * N  # subdivided after the override
    rest, _ = grid_arrays(N, N)
    state, _ = rt.simulator.state()  # the pins follow the hook through the subdivision
    np.testing.assert_allclose(state[PINS], rest[PINS] + _offset(6), atol=1e-5)
    start, frames = cloth_bake.simulate_range(scene, hooked)
    cloth_bake.bake_pc2(hooked, start, frames, tmp_path / "cloth.pc2")
    names = [m.name for m in hooked.modifiers]
    assert names == ["Hook", cloth_bake.MODIFIER_NAME, "Subdivision"]


@pytest.mark.parametrize(
    ("kind", "settings", "follows"),
    [
        ("SOLIDIFY", {"thickness": 0.1}, True),
        ("MIRROR", {}, True),
        ("SCREW", {}, True),
        ("WIREFRAME", {}, False),  # its points are all new (the stored index tells): rest pins
        ("SKIN", {}, False),  # no stored attributes come through
    ],
)
def test_pins_behind_a_generating_modifier(hooked, kind, settings, follows) -> None:
    mod = hooked.modifiers.new("G", kind)
    for name, value in settings.items():
        setattr(mod, name, value)
    for f in range(1, 7):
        bpy.context.scene.frame_set(f)
    assert hooked.xof_physics.last_warning == ""
    rest, _ = grid_arrays(N, N)
    state, _ = cloth_runtime.peek_runtime(hooked).simulator.state()
    expected = rest[PINS] + (_offset(6) if follows else 0.0)
    np.testing.assert_allclose(state[PINS], expected, atol=1e-5)


# -- a skinned cape imported from .X ------------------------------------------------------


def _cape_text() -> str:
    """A 6 x 6 cape skinned whole to one bone that moves 2 units along x in its first
    second, pinned along its top row by ClothMasses."""
    n = 6
    verts = [(0.2 * i, 2.0 - 0.2 * j, 0.0) for j in range(n) for i in range(n)]
    faces = [
        (j * n + i, j * n + i + 1, (j + 1) * n + i + 1, (j + 1) * n + i)
        for j in range(n - 1)
        for i in range(n - 1)
    ]
    vtext = ",\n".join(f"{x:.3f};{y:.3f};{z:.3f};" for x, y, z in verts)
    ftext = ",\n".join(f"4;{','.join(map(str, f))};" for f in faces)
    masses = [0.0 if v < n else 1.0 for v in range(n * n)]
    eye = np.eye(4)
    skin = (
        "XSkinMeshHeader { 1; 1; 1; }\n"
        f'SkinWeights {{ "Bone"; {n * n}; {",".join(map(str, range(n * n)))}; '
        f"{fmt(np.ones(n * n))}; {fmt(eye)};; }}\n"
    )
    return (
        "xof 0303txt 0032\n"
        f"Frame Root {{\n FrameTransformMatrix {{ {fmt(eye)};; }}\n"
        f" Frame Bone {{ FrameTransformMatrix {{ {fmt(eye)};; }} }}\n"
        f" Mesh Cape {{\n{n * n};\n{vtext};\n{len(faces)};\n{ftext};\n{skin}}}\n}}\n"
        f"ClothMasses {{ {n * n}; {fmt(masses)}; }}\n"
        "AnimTicksPerSecond { 4800; }\n"
        "AnimationSet Move { Animation { { Bone }\n"
        "  AnimationKey { 2; 2; 0;3;0,0,0;;, 4800;3;2,0,0;;; } } }\n"
    )


def test_a_skinned_cape_hangs_from_its_bone_and_is_skinned_once(tmp_path) -> None:
    import addon_utils

    bpy.ops.wm.read_homefile(use_empty=True)
    addon_utils.enable("xof", default_set=True)
    try:
        path = write(tmp_path / "cape.x", _cape_text())
        assert bpy.ops.import_scene.x(filepath=str(path)) == {"FINISHED"}
        cape = next(o for o in bpy.data.objects if o.type == "MESH")
        assert cape.xof_physics.enabled
        assert any(m.type == "ARMATURE" for m in cape.modifiers)
        scene = bpy.context.scene
        start = cape.xof_physics.frame_start  # the animation's first frame
        scene.frame_set(start)
        rest = evaluated_world_positions(cape)
        pins = np.flatnonzero(np.isclose(rest[:, 2], rest[:, 2].max()))  # the top row
        assert pins.size == 6
        free = np.setdiff1d(np.arange(36), pins)
        for f in range(start + 1, start + 41):
            scene.frame_set(f)
            rt = cloth_runtime.peek_runtime(cape)
            assert rt.deformed
            state, _ = rt.simulator.state()
            shown = evaluated_world_positions(cape)
            np.testing.assert_allclose(shown[pins], state[pins], atol=1e-5)
            np.testing.assert_allclose(shown[free], state[free], atol=1e-5)
        # the bone moved the pins 2 units along x (file x = Blender x) and holds them there
        np.testing.assert_allclose(shown[pins], rest[pins] + [2.0, 0.0, 0.0], atol=1e-4)
        # the free points hang from them: carried along, not twice as far
        drift = shown[free, 0].mean() - rest[free, 0].mean()
        assert 0.5 < drift < 2.5
    finally:
        addon_utils.disable("xof", default_set=True)
