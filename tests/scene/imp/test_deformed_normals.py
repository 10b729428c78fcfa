""" "Looks right": the file's custom normals follow the Armature modifier and shape keys.

A smooth tube with its exact (radial) normals in MeshNormals is skinned to two bones and
turned well away from its rest, or morphed into a turned copy of itself. On the evaluated
mesh, the median angle between each corner's normal and its face's normal must stay small
(the tube's facets are 11.25 degrees wide); normals left at rest would point elsewhere.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene import importer  # noqa: E402

from ..scene_fixtures import evaluated_corner_face_angles  # noqa: E402
from ..skin_fixtures import (  # noqa: E402
    animation,
    fmt,
    frame_text,
    key_block,
    quat_key,
    rot_axis,
    set_frame,
    translation,
    write,
)

pytestmark = pytest.mark.blender

SEGMENTS, RINGS = 32, 25  # around, along (y from 0 to 6)
LIMIT = 35.0  # degrees


def tube() -> tuple[np.ndarray, np.ndarray, list[list[int]]]:
    """Positions, unit radial normals and quads of an open tube of radius 1 along +y."""
    a = 2 * np.pi * np.arange(SEGMENTS) / SEGMENTS
    y = np.linspace(0.0, 6.0, RINGS)
    pos = np.array([[math.cos(t), h, math.sin(t)] for h in y for t in a])
    nor = pos * [1.0, 0.0, 1.0]
    faces = []
    for r in range(RINGS - 1):
        for s in range(SEGMENTS):
            i, j = r * SEGMENTS + s, r * SEGMENTS + (s + 1) % SEGMENTS
            faces.append([i, i + SEGMENTS, j + SEGMENTS, j])  # outward in D3D's winding
    return pos, nor, faces


def mesh_text(name: str, pos: np.ndarray, nor: np.ndarray | None, faces, inner: str = "") -> str:
    verts = ",\n".join(f"{x:.7f};{y:.7f};{z:.7f};" for x, y, z in pos)
    polys = ",\n".join(f"4;{','.join(map(str, f))};" for f in faces)
    text = f"Mesh {name} {{\n{len(pos)};\n{verts};\n{len(faces)};\n{polys};\n"
    if nor is not None:
        ntext = ",\n".join(f"{x:.7f};{y:.7f};{z:.7f};" for x, y, z in nor)
        text += f"MeshNormals {{\n{len(nor)};\n{ntext};\n{len(faces)};\n{polys};\n}}\n"
    return text + inner + "}\n"


def skinned_text() -> str:
    pos, nor, faces = tube()
    upper = np.clip((pos[:, 1] - 2.0) / 2.0, 0.0, 1.0)  # blend between y = 2 and y = 4
    skin = "XSkinMeshHeader { 2; 4; 2; }\n"
    for bone, w, bind in (("Root", 1 - upper, np.eye(4)), ("Upper", upper, translation(0, 3, 0))):
        idx = np.flatnonzero(w > 0)
        skin += (
            f'SkinWeights {{ "{bone}"; {len(idx)}; {",".join(map(str, idx))}; '
            f"{fmt(w[idx])}; {fmt(np.linalg.inv(bind))};; }}\n"
        )
    body = frame_text("Body", np.eye(4), mesh_text("Tube", pos, nor, faces, skin))
    bones = frame_text("Root", np.eye(4), frame_text("Upper", translation(0, 3, 0)))
    keys = [0, 2400, 4800]  # the middle key at frame 12 (24 fps), the turn at its widest
    walk = "AnimationSet Turn {\n"
    walk += animation("Root", key_block(0, keys, [quat_key("x", a) for a in (0, 140, 0)]))
    walk += animation("Upper", key_block(0, keys, [quat_key("z", a) for a in (0, 70, 0)]))
    walk += "}\n"
    return "xof 0303txt 0032\nAnimTicksPerSecond { 4800; }\n" + body + bones + walk


def morph_text() -> str:
    pos, nor, faces = tube()
    turn = rot_axis("z", 150)[:3, :3]
    templates = (
        "template MorphAnimationKey {\n <2746B58A-B375-4cc3-8D23-7D094D3C7C67>\n"
        " DWORD Time;\n STRING MeshName;\n}\n"
        "template MorphAnimationSet {\n <0892DE81-915A-4f34-B503-F7C397CB9E06>\n"
        " DWORD NumKeys;\n array MorphAnimationKey Keys[NumKeys];\n}\n"
    )
    return (
        "xof 0303txt 0032\n" + templates
        + mesh_text("Tube", pos, nor, faces)
        + mesh_text("Turned", pos @ turn, None, faces)
        + 'MorphAnimationSet Bend {\n 2;\n 0; "Tube";,\n 1000; "Turned";;\n}\n'
    )  # fmt: skip


def median_angle(obj) -> float:
    """Median angle (degrees) between evaluated corner normals and their face's normal."""
    return float(np.median(evaluated_corner_face_angles(obj)))


@pytest.fixture
def scene():
    bpy.ops.wm.read_homefile(use_empty=True)
    sc = bpy.context.scene
    sc.render.fps, sc.render.fps_base = 24, 1.0
    sc.frame_start = 0
    return sc


def test_skinned_tube_shades_from_its_pose(scene, tmp_path):
    importer.import_files([write(tmp_path / "tube.x", skinned_text())], importer.ImportOptions())
    obj = bpy.data.objects["Body"]
    set_frame(0)
    at_rest = median_angle(obj)
    set_frame(12)
    posed = median_angle(obj)
    assert at_rest < 10.0  # half a facet: the file's normals are the smooth surface's
    assert posed < LIMIT, f"median {posed:.1f} degrees at the widest turn"


def test_morphed_tube_shades_from_its_shape(scene, tmp_path):
    importer.import_files([write(tmp_path / "morph.x", morph_text())], importer.ImportOptions())
    obj = next(o for o in bpy.data.objects if o.type == "MESH")
    assert obj.data.shape_keys is not None
    set_frame(scene.frame_start + 24)  # 1000 ms: fully the turned shape
    turned = median_angle(obj)
    assert turned < LIMIT, f"median {turned:.1f} degrees on the turned shape"
