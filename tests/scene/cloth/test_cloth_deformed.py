"""Cloth on a deformed mesh: pins follow the modifiers, free points are simulated, not
deformed again (a cape on a skinned character is skinned once, through its pins)."""

from __future__ import annotations

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene.cloth import bake as cloth_bake  # noqa: E402
from xof.addon.scene.cloth import override as cloth_override  # noqa: E402
from xof.addon.scene.cloth import runtime as cloth_runtime  # noqa: E402

from ..cloth_fixtures import (  # noqa: E402
    GRID,
    SHIFT,
    fcurves,
    grid_arrays,
    grid_object,
    hook_whole,
    on_screen,
    override_modifiers,
    play,
    positions,
    shows_the_simulation,
)
from ..skin_fixtures import evaluated_world_positions, fmt, write  # noqa: E402

pytestmark = pytest.mark.blender
PINS = [0, GRID - 1]
FREE = np.setdiff1d(np.arange(GRID * GRID), PINS)


def _reference(modifier: str, settings: dict, local: np.ndarray) -> np.ndarray:
    """``modifier`` evaluated on a plain copy of the grid holding ``local``."""
    ref = grid_object(bpy, "Reference", GRID, GRID)
    mod = ref.modifiers.new("M", modifier)
    for name, value in settings.items():
        setattr(mod, name, value)
    ref.data.attributes["position"].data.foreach_set("vector", local.astype(np.float32).ravel())
    ref.data.update()
    return evaluated_world_positions(ref)


def _offset(frame: int) -> np.ndarray:
    return SHIFT * min(max(frame - 1, 0), 10) / 10.0


def test_free_points_are_simulated_once_and_pins_follow_the_hook(hooked) -> None:
    scene = bpy.context.scene
    rest, _ = grid_arrays(GRID, GRID)
    free = np.setdiff1d(np.arange(GRID * GRID), PINS)
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
    rest, _ = grid_arrays(GRID, GRID)
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
    rest, _ = grid_arrays(GRID, GRID)
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
    rest, _ = grid_arrays(GRID, GRID)
    hooked.shape_key_add(name="Basis", from_mix=False)
    lift = hooked.shape_key_add(name="Lift", from_mix=False)
    lifted = rest.copy()
    lifted[:GRID, 2] += 0.5
    lift.data.foreach_set("co", lifted.astype(np.float32).ravel())
    lift.value = 0.0
    lift.keyframe_insert("value", frame=1)
    lift.value = 1.0
    lift.keyframe_insert("value", frame=11)
    for curve in fcurves(hooked.data.shape_keys):
        for point in curve.keyframe_points:
            point.interpolation = "LINEAR"
    free = np.setdiff1d(np.arange(GRID * GRID), PINS)
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
    assert len(evaluated_world_positions(hooked)) > GRID * GRID  # subdivided after the override
    rest, _ = grid_arrays(GRID, GRID)
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
    rest, _ = grid_arrays(GRID, GRID)
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


# -- what users do to a modifier stack ---------------------------------------------------


@pytest.mark.parametrize(
    ("modifier", "settings"),
    [("SOLIDIFY", {"thickness": 0.2}), ("SUBSURF", {"levels": 1})],
)
def test_a_generating_modifier_still_acts_on_the_simulated_cloth(
    cloth, modifier: str, settings: dict
) -> None:
    mod = cloth.modifiers.new("M", modifier)
    for name, value in settings.items():
        setattr(mod, name, value)
    play(bpy, range(1, 9))
    rt = cloth_runtime.peek_runtime(cloth)
    state, _ = rt.simulator.state()
    assert np.abs(state[FREE] - grid_arrays(GRID, GRID)[0][FREE]).max() > 0.1  # it fell
    shown = evaluated_world_positions(cloth)
    expected = _reference(modifier, settings, state)  # the modifier on the simulated shape
    assert shown.shape == expected.shape
    np.testing.assert_allclose(shown, expected, atol=1e-4)


def test_a_deforming_modifier_added_after_playing_keeps_the_start_frame(cloth) -> None:
    play(bpy, range(1, 11))
    rest, _ = grid_arrays(GRID, GRID)
    assert np.abs(on_screen(cloth) - rest).max() > 0.1  # frame 10 is shown
    np.testing.assert_array_equal(positions(cloth), rest.astype(np.float32))  # not written
    hook_whole(bpy, cloth)  # the empty stays at the origin: the hook changes nothing
    bpy.context.scene.frame_set(1)
    rt = cloth_runtime.peek_runtime(cloth)
    assert rt.deformed
    state, vel = rt.simulator.state()
    np.testing.assert_allclose(state, rest, atol=1e-5)
    np.testing.assert_array_equal(vel, 0.0)
    np.testing.assert_allclose(rt.cache.frames[1].positions, rest, atol=1e-5)
    np.testing.assert_allclose(evaluated_world_positions(cloth), rest, atol=1e-5)


def test_a_renamed_override_modifier_is_stilloverride_modifiers(hooked) -> None:
    play(bpy, (1, 2, 3))
    hooked.modifiers[cloth_override.MODIFIER_NAME].name = "Cloth on top"
    play(bpy, (4,))
    assert len(override_modifiers(hooked)) == 1
    shows_the_simulation(bpy, hooked)
    hooked.modifiers.remove(hooked.modifiers["Hook"])
    play(bpy, (5,))
    assert not cloth_runtime.peek_runtime(hooked).deformed
    hooked.xof_physics.enabled = False
    assert override_modifiers(hooked) == []


def test_a_modifier_added_after_ours_moves_ours_last(hooked) -> None:
    play(bpy, (1, 2, 3))
    hooked.modifiers.new("Smooth", "SMOOTH")
    play(bpy, (4,))  # this frame's pins still come from the stack as it was (ours before Smooth)
    assert hooked.modifiers[-1].name == cloth_override.MODIFIER_NAME
    play(bpy, (5,))
    shows_the_simulation(bpy, hooked)


def test_a_deleted_node_group_is_made_again(hooked) -> None:
    play(bpy, (1, 2, 3))
    group = hooked.modifiers[cloth_override.MODIFIER_NAME].node_group
    bpy.data.node_groups.remove(group)
    play(bpy, (4,))
    assert hooked.modifiers[cloth_override.MODIFIER_NAME].node_group is not None
    shows_the_simulation(bpy, hooked)
    assert len([g for g in bpy.data.node_groups if g.get(cloth_override.GROUP_TAG)]) == 1


def test_save_and_reopen_with_the_override(hooked, tmp_path) -> None:
    scene = bpy.context.scene
    play(bpy, range(1, 8))
    scene.frame_set(5)
    before = evaluated_world_positions(hooked)
    path = str(tmp_path / "override.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    bpy.ops.wm.open_mainfile(filepath=path)
    obj = bpy.data.objects["Cloth"]
    scene = bpy.context.scene
    assert override_modifiers(obj) == [cloth_override.MODIFIER_NAME]
    scene.frame_set(5)  # the saved cache
    np.testing.assert_array_equal(evaluated_world_positions(obj), before)
    scene.frame_set(8)  # resumed from the saved frame 7
    assert cloth_runtime.peek_runtime(obj).cache.get(8) is not None
    shows_the_simulation(bpy, obj)
    rest, _ = grid_arrays(GRID, GRID)
    np.testing.assert_array_equal(positions(obj), rest.astype(np.float32))


def test_a_render_with_the_override_shows_what_playback_shows(hooked, tmp_path) -> None:
    scene = bpy.context.scene
    cam = bpy.data.objects.new("Cam", bpy.data.cameras.new("Cam"))
    scene.collection.objects.link(cam)
    cam.location = (0.3, -4.0, -0.3)
    cam.rotation_euler = (np.pi / 2, 0.0, 0.0)
    scene.camera = cam
    scene.render.engine = "BLENDER_WORKBENCH"
    scene.render.resolution_x = scene.render.resolution_y = 16
    scene.render.resolution_percentage = 100

    def render(name: str) -> np.ndarray:
        scene.render.filepath = str(tmp_path / name)
        bpy.ops.render.render(write_still=True)
        img = bpy.data.images.load(scene.render.filepath)
        px = np.array(img.pixels[:])
        bpy.data.images.remove(img)
        return px

    play(bpy, range(1, 7))
    shown = evaluated_world_positions(hooked)
    during = render("cached.png")
    assert hooked.xof_physics.last_warning == ""
    assert cloth_runtime.peek_runtime(hooked).deformed
    np.testing.assert_array_equal(evaluated_world_positions(hooked), shown)  # left as it was
    hooked.xof_physics.enabled = False  # no handler, no override: the same points by hand
    hooked.modifiers.remove(hooked.modifiers["Hook"])
    mesh = hooked.data
    mesh.attributes["position"].data.foreach_set("vector", shown.astype(np.float32).ravel())
    mesh.update()
    np.testing.assert_array_equal(render("by_hand.png"), during)
    rest, _ = grid_arrays(GRID, GRID)
    mesh.attributes["position"].data.foreach_set("vector", rest.astype(np.float32).ravel())
    mesh.update()
    assert not np.array_equal(render("rest.png"), during)  # the comparison can tell


def test_a_moved_rotated_scaled_cloth_shows_the_solver_state_in_world_space(hooked) -> None:
    hooked.location = (1.0, -2.0, 0.5)
    hooked.rotation_euler = (0.3, -0.2, 0.9)
    hooked.scale = (1.5, 0.7, 1.2)
    bpy.ops.xof.sim_reset()
    for f in range(1, 8):
        bpy.context.scene.frame_set(f)
        rt = cloth_runtime.peek_runtime(hooked)
        assert rt.deformed
        state, _ = rt.simulator.state()
        np.testing.assert_allclose(evaluated_world_positions(hooked), state, atol=2e-5)


def test_undo_and_redo_of_enabling_physics(cloth) -> None:
    cloth.xof_physics.enabled = False
    hook_whole(bpy, cloth, SHIFT)
    bpy.ops.ed.undo_push(message="before")
    cloth.xof_physics.enabled = True
    bpy.ops.ed.undo_push(message="enabled")
    play(bpy, range(1, 6))
    bpy.ops.ed.undo_push(message="played")
    bpy.ops.ed.undo()
    bpy.ops.ed.undo()
    obj = bpy.data.objects["Cloth"]
    assert not obj.xof_physics.enabled
    assert [m.name for m in obj.modifiers] == ["Hook"]
    assert not [a.name for a in obj.data.attributes if a.name.startswith("xof_cloth")]
    rest, _ = grid_arrays(GRID, GRID)
    np.testing.assert_allclose(positions(obj), rest, atol=1e-6)
    bpy.ops.ed.redo()
    obj = bpy.data.objects["Cloth"]
    assert obj.xof_physics.enabled
    play(bpy, (7, 3))
    play(bpy, (4,))
    assert override_modifiers(obj) == [cloth_override.MODIFIER_NAME]
    shows_the_simulation(bpy, obj)
