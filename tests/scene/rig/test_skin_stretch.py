"""Skinned meshes whose own frame scales (uniformly, non-uniformly, mirrored, sheared).

Generated rigs: rigid bone binds ``B``, a mesh frame ``M`` and offsets ``M * B^-1`` (D3D row
vectors), as exporters write them. Deformed positions must equal the independent LBS
reference (``v * offset * combined``) to 1e-5 of the bounding-box diagonal in the file's
pose and at keys, and vertices weighted fully to one bone must move rigidly; through the
exporter (round trip) and an animation-only file too.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene import importer  # noqa: E402
from xof.addon.scene.anim.animation_only import import_animation_file  # noqa: E402
from xof.addon.scene.export.exporter import export_scene  # noqa: E402
from xof.addon.xfile import read, scene_of  # noqa: E402

from .. import lbs_reference as ref  # noqa: E402
from ..skin_fixtures import (  # noqa: E402
    TPS,
    animation,
    column_mesh,
    evaluated_world_positions,
    fmt,
    frame_text,
    key_block,
    model_size,
    quat_key,
    rot_axis,
    scaling,
    set_frame,
    translation,
    write,
)

pytestmark = pytest.mark.blender

TOL = 1e-5  # of the bounding-box diagonal
KEYS = [0, 1600, 3200]  # frames 0, 8, 16 at the scene's 24 fps
FRAMES = [0, 8, 16, 5, 13.5]

#: the mesh frame's local matrix (row vectors) under a parent frame "Body"
MESH_FRAMES = {
    "uniform": (np.eye(4), rot_axis("y", 25) @ scaling(1.5, 1.5, 1.5) @ translation(1, 0, 2)),
    "nonuniform": (np.eye(4), scaling(1.28, 1.12, 1.47) @ rot_axis("y", 40)
                   @ translation(0.5, 0.2, -1)),
    "mirrored": (np.eye(4), scaling(-1.2, 1.0, 1.3) @ rot_axis("x", 15) @ translation(0, 1, 0)),
    # a mirror without scale: the bones keep it (their pose holds a negative scale)
    "mirror": (np.eye(4), scaling(-1.0, 1.0, 1.0) @ rot_axis("y", 20) @ translation(0, 1, 0)),
    # a rotation under a non-uniform scale: the combined matrix has shear
    "sheared": (scaling(1.0, 1.6, 0.8), rot_axis("z", 30) @ translation(0.2, 0, 0)),
}  # fmt: skip

# rigid bone binds (world, row vectors): a chain up the column
HIP = rot_axis("y", 30) @ translation(0.3, 0.0, 0.1)
SPINE = translation(0, 2, 0) @ HIP
HEAD = translation(0, 2, 0) @ SPINE
BINDS = {"Hip": HIP, "Spine": SPINE, "Head": HEAD}
LOCALS = {"Hip": HIP, "Spine": translation(0, 2, 0), "Head": translation(0, 2, 0)}
#: rings (y = 0.5 * ring) weighted fully to one bone; the rings between blend
FULL = {"Hip": range(0, 3), "Spine": range(5, 7), "Head": range(10, 13)}


def ring_weights() -> dict[str, tuple[list[int], list[float]]]:
    w = np.zeros((3, 13))
    for k, rings in enumerate(FULL.values()):
        w[k, list(rings)] = 1.0
    w[0:2, 3], w[0:2, 4] = (0.7, 0.3), (0.3, 0.7)
    w[1:3, 7], w[1:3, 8], w[1:3, 9] = (0.75, 0.25), (0.5, 0.5), (0.25, 0.75)
    out = {}
    for k, name in enumerate(BINDS):
        idx = [4 * r + c for r in range(13) for c in range(4) if w[k, r] > 0]
        out[name] = (idx, [float(w[k, i // 4]) for i in idx])
    return out


def mesh_world(kind: str) -> np.ndarray:
    parent, local = MESH_FRAMES[kind]
    return local @ parent


def rig_text(kind: str, animated: bool = True) -> str:
    m = mesh_world(kind)
    skin = "XSkinMeshHeader { 2; 4; 3; }\n"
    for bone, (idx, w) in ring_weights().items():
        idx_s = ",".join(map(str, idx))
        offset = m @ np.linalg.inv(BINDS[bone])
        skin += f'SkinWeights {{ "{bone}"; {len(idx)}; {idx_s}; {fmt(w)}; {fmt(offset)};; }}\n'
    parent, local = MESH_FRAMES[kind]
    body = frame_text("Body", parent, frame_text("Skin", local, column_mesh("Column", skin)))
    head = frame_text("Head", LOCALS["Head"])
    spine = frame_text("Spine", LOCALS["Spine"], head)
    hip = frame_text("Hip", LOCALS["Hip"], spine)
    text = "xof 0303txt 0032\nAnimTicksPerSecond { 4800; }\n" + body + hip
    if animated:
        text += anim_set()
    return text


def anim_set() -> str:
    walk = "AnimationSet Walk {\n"
    walk += animation(
        "Hip",
        key_block(0, KEYS, [quat_key("y", 30), quat_key("y", 70), quat_key("y", 120)])
        + key_block(2, KEYS, [[0.3, 0, 0.1], [0.6, 0.4, -0.2], [0.3, 0, 0.1]]),
    )
    walk += animation("Spine", key_block(0, KEYS, [quat_key("z", a) for a in (0, -35, 20)]))
    walk += animation("Head", key_block(0, KEYS, [quat_key("x", a) for a in (0, 40, -25)]))
    return walk + "}\n"


def anim_only_text() -> str:
    head = frame_text("Head", LOCALS["Head"])
    hip = frame_text("Hip", LOCALS["Hip"], frame_text("Spine", LOCALS["Spine"], head))
    return "xof 0303txt 0032\nAnimTicksPerSecond { 4800; }\n" + hip + anim_set()


def column_object():
    return next(o for o in bpy.data.objects if o.type == "MESH" and o.data.name == "Column")


def check(data, frames=FRAMES, animation_set=True) -> float:
    """Largest error (fraction of the diagonal) over ``frames``; asserts rigidity on the way."""
    mesh = data.all_meshes()[0]
    aset = data.animation_sets[0] if animation_set else None
    bind = ref.mirror((np.c_[mesh.positions, np.ones(len(mesh.positions))]
                       @ mesh_world_of(data))[:, :3])  # fmt: skip
    size = model_size(bind)
    worst = 0.0
    for frame in frames:
        set_frame(frame)
        got = evaluated_world_positions(column_object())
        fps = bpy.context.scene.render.fps / bpy.context.scene.render.fps_base
        want = ref.expected_positions(data, aset, None if aset is None else frame * TPS / fps)
        worst = max(worst, float(np.max(np.abs(got - want[id(mesh)]))) / size)
        for rings in FULL.values():
            idx = [4 * r + c for r in rings for c in range(4)]
            pairs = np.array(list(itertools.combinations(idx, 2)))
            d_got = np.linalg.norm(got[pairs[:, 0]] - got[pairs[:, 1]], axis=1)
            d_bind = np.linalg.norm(bind[pairs[:, 0]] - bind[pairs[:, 1]], axis=1)
            np.testing.assert_allclose(d_got, d_bind, atol=TOL * size)
    return worst


def mesh_world_of(data) -> np.ndarray:
    """The combined row matrix of the frame holding the skinned mesh (independently)."""

    def find(frame, above):
        world = frame.matrix @ above
        if frame.meshes:
            return world
        for child in frame.children:
            got = find(child, world)
            if got is not None:
                return got
        return None

    for top in data.frames:
        got = find(top, np.eye(4))
        if got is not None:
            return got
    return np.eye(4)


def load(tmp_path, kind, animated=True):
    bpy.ops.wm.read_homefile(use_empty=True)
    path = write(tmp_path / f"{kind}.x", rig_text(kind, animated))
    result = importer.import_files([path], importer.ImportOptions())
    return result, scene_of(read(str(path)))


@pytest.mark.parametrize("kind", list(MESH_FRAMES))
def test_skinned_under_a_scaled_mesh_frame_matches_lbs_and_stays_rigid(tmp_path, kind):
    _, data = load(tmp_path, kind)
    assert check(data) <= TOL
    arm = bpy.data.objects[kind]
    if kind == "mirror":
        return
    # bones are rigid at rest: the mesh carries the scale
    for bone in arm.data.bones:
        m3 = np.array(bone.matrix_local)[:3, :3]
        np.testing.assert_allclose(m3.T @ m3, np.eye(3), atol=1e-5)
        bind = np.array(list(bone["xof_bind"])).reshape(4, 4)[:3, :3]
        np.testing.assert_allclose(bind.T @ bind, np.eye(3), atol=1e-5)


@pytest.mark.parametrize("kind", list(MESH_FRAMES))
def test_file_pose_without_animation(tmp_path, kind):
    bpy.ops.wm.read_homefile(use_empty=True)
    path = write(tmp_path / f"{kind}.x", rig_text(kind, animated=False))
    importer.import_files([path], importer.ImportOptions())
    assert check(scene_of(read(str(path))), frames=[0], animation_set=False) <= TOL


@pytest.mark.parametrize("kind", ["nonuniform", "mirrored", "mirror", "sheared"])
def test_round_trip_through_the_exporter(tmp_path, kind):
    _, data = load(tmp_path, kind)
    out = tmp_path / f"{kind}_out.x"
    export_scene(str(out))
    bpy.ops.wm.read_homefile(use_empty=True)
    importer.import_files([out], importer.ImportOptions())
    # the re-import must deform as the original file does
    assert check(data) <= TOL


@pytest.mark.parametrize("kind", ["nonuniform", "mirrored", "sheared"])
def test_animation_only_file_on_a_scaled_rig(tmp_path, kind):
    load(tmp_path, kind, animated=False)
    anim = write(tmp_path / "walk.x", anim_only_text())
    arm = bpy.data.objects[kind]
    result = import_animation_file(anim, arm)
    assert [a.name for a in result.actions] == ["Walk"]
    full = scene_of(read(str(write(tmp_path / "full.x", rig_text(kind)))))
    assert check(full) <= TOL


def test_two_skins_under_different_frames_share_the_bones(tmp_path):
    """A body under a non-uniform frame and a second skin under a plain one, same bones."""
    text = rig_text("nonuniform")
    second = np.eye(4) @ translation(0.5, 0, 0)
    skin = "XSkinMeshHeader { 2; 4; 3; }\n"
    for bone, (idx, w) in ring_weights().items():
        idx_s = ",".join(map(str, idx))
        offset = second @ np.linalg.inv(BINDS[bone])
        skin += f'SkinWeights {{ "{bone}"; {len(idx)}; {idx_s}; {fmt(w)}; {fmt(offset)};; }}\n'
    extra = frame_text("Extra", second, column_mesh("Second", skin))
    text = text.replace("Frame Hip {", extra + "Frame Hip {", 1)
    bpy.ops.wm.read_homefile(use_empty=True)
    path = write(tmp_path / "two.x", text)
    result = importer.import_files([path], importer.ImportOptions())
    assert not any("disagree" in w for w in result.warnings)
    data = scene_of(read(str(path)))
    fps = bpy.context.scene.render.fps / bpy.context.scene.render.fps_base
    objs = {o.data.name: o for o in bpy.data.objects if o.type == "MESH"}
    for frame in (0, 8, 13.5):
        set_frame(frame)
        want = ref.expected_positions(data, data.animation_sets[0], frame * TPS / fps)
        for mesh in data.all_meshes():
            got = evaluated_world_positions(objs[mesh.name])
            size = model_size(want[id(mesh)])
            assert float(np.max(np.abs(got - want[id(mesh)]))) <= TOL * size, mesh.name
