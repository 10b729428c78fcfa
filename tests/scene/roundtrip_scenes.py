"""Generated scenes for the scene round trips: a skinned character at 60 fps whose frames
hold a pose (not the bind pose), with a helper frame, a one-mesh prop frame and two sets
that key different bones at uneven frames ("hit" is a bone only because a set animates it:
it weighs no vertex)."""

from __future__ import annotations

import numpy as np

from .skin_fixtures import (
    HEAD_BIND,
    HIP_BIND,
    SPINE_BIND,
    animation,
    column_mesh,
    column_weights,
    frame_text,
    key_block,
    quat_key,
    rot_axis,
    skin_weights,
    translation,
    triangle_mesh,
)

FPS = 60
TICKS = 4800 // FPS  # ticks per frame at 60 fps
#: keys at frames 0, 7 and 62 (gaps that share no common rate but 60 fps)
KEY_FRAMES = [0, 7, 62]
BINDS = {"Hip": HIP_BIND, "Spine": SPINE_BIND, "Head": HEAD_BIND}
#: the frames' pose: every bone away from its bind, so a bind-pose export shows
FRAMES = {
    "Hip": rot_axis("y", 25) @ translation(0.1, 0.2, 0.0),
    "Spine": rot_axis("z", 30) @ translation(0, 2, 0),
    "Head": rot_axis("x", -40) @ translation(0, 2, 0.1),
}


def rig60_text(sets: tuple[str, ...] = ("Walk", "Wave")) -> str:
    weights = column_weights()
    skin = "XSkinMeshHeader { 2; 4; 3; }\n"
    for bone, (idx, w) in weights.items():
        skin += skin_weights(bone, idx, w, np.linalg.inv(BINDS[bone]))
    hit = frame_text("hit", translation(0.0, 0.5, 0.0))
    prop = frame_text("Prop", translation(0.5, 0.5, 0.0), triangle_mesh("PropMesh"))
    head = frame_text("Head", FRAMES["Head"], hit + prop)
    spine = frame_text("Spine", FRAMES["Spine"], head)
    hip = frame_text("Hip", FRAMES["Hip"], spine)
    body = frame_text("Body", np.eye(4), column_mesh("Column", skin))
    ticks = [f * TICKS for f in KEY_FRAMES]
    walk = "AnimationSet Walk {\n"
    walk += animation(
        "Hip",
        key_block(0, ticks, [quat_key("y", 25), quat_key("y", 60), quat_key("y", 25)])
        + key_block(2, ticks, [[0.1, 0.2, 0.0], [0.4, 0.3, 0.0], [0.1, 0.2, 0.0]]),
    )
    walk += animation(
        "Spine",
        key_block(0, ticks, [quat_key("z", 30), quat_key("z", -10), quat_key("z", 30)])
        + key_block(2, ticks, [[0, 2, 0]] * 3),
    )
    walk += "}\n"
    wave = "AnimationSet Wave {\n"
    wave += animation("hit", key_block(2, ticks, [[0, 0.5, 0], [0, 0.8, 0], [0, 0.5, 0]]))
    wave += animation(
        "Head",
        key_block(0, ticks, [quat_key("x", -40), quat_key("x", 20), quat_key("x", -40)])
        + key_block(2, ticks, [[0, 2, 0.1]] * 3),
    )
    wave += "}\n"
    chosen = "".join(text for name, text in (("Walk", walk), ("Wave", wave)) if name in sets)
    return "xof 0303txt 0032\nAnimTicksPerSecond { 4800; }\n" + body + hip + chosen
