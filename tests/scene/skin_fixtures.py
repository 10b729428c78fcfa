"""Shared helpers of the skinning/animation tests: fixture .X files and Blender evaluation."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

TPS = 4800  # ticks per second of the fixtures; keys every 160 ticks = 30 fps


def fmt(values) -> str:
    """Numbers as .X text; NaN the way MSVC's printf spells it in real files."""
    return ",".join(
        "-1.#IND00" if math.isnan(v) else f"{float(v):.9g}"
        for v in np.asarray(values, float).reshape(-1)
    )


def translation(x: float, y: float, z: float) -> np.ndarray:
    m = np.eye(4)
    m[3, :3] = [x, y, z]
    return m


def rot_axis(axis: str, degrees: float) -> np.ndarray:
    """Row-vector 4x4 rotation (D3D convention: v' = v * M)."""
    a = math.radians(degrees)
    c, s = math.cos(a), math.sin(a)
    m = np.eye(4)
    i, j = {"x": (1, 2), "y": (2, 0), "z": (0, 1)}[axis]
    m[i, i], m[i, j], m[j, i], m[j, j] = c, s, -s, c
    return m


def scaling(x: float, y: float, z: float) -> np.ndarray:
    return np.diag([x, y, z, 1.0])


def quat_key(axis: str, degrees: float) -> list[float]:
    """A rotation key (w, x, y, z) as .X files store it (the conjugate)."""
    a = math.radians(degrees) / 2
    v = {"x": (1, 0, 0), "y": (0, 1, 0), "z": (0, 0, 1)}[axis]
    return [math.cos(a), -v[0] * math.sin(a), -v[1] * math.sin(a), -v[2] * math.sin(a)]


def frame_text(name: str, matrix: np.ndarray, body: str = "") -> str:
    return f"Frame {name} {{\n FrameTransformMatrix {{ {fmt(matrix)};; }}\n{body}}}\n"


def column_mesh(name: str, skin: str = "") -> str:
    """A square column from y=0 to y=6 (13 rings of 4 vertices), quads between rings."""
    verts = [
        (x, 0.5 * r, z)
        for r in range(13)
        for x, z in ((-0.5, -0.5), (0.5, -0.5), (0.5, 0.5), (-0.5, 0.5))
    ]
    faces = []
    for r in range(12):
        a, b = 4 * r, 4 * r + 4
        for k in range(4):
            k2 = (k + 1) % 4
            faces.append((a + k, a + k2, b + k2, b + k))
    vtext = ",\n".join(f"{x};{y};{z};" for x, y, z in verts)
    ftext = ",\n".join(f"4;{','.join(map(str, f))};" for f in faces)
    return f"Mesh {name} {{\n{len(verts)};\n{vtext};\n{len(faces)};\n{ftext};\n{skin}}}\n"


def skin_weights(frame: str, indices, weights, offset: np.ndarray) -> str:
    idx = ",".join(str(int(i)) for i in indices)
    return f'SkinWeights {{ "{frame}"; {len(indices)}; {idx}; {fmt(weights)}; {fmt(offset)};; }}\n'


def triangle_mesh(name: str, size: float = 0.3) -> str:
    return f"Mesh {name} {{ 3; 0;0;0;, {size};0;0;, 0;{size};{size};; 1; 3;0,1,2;; }}\n"


def key_block(key_type: int, times, values) -> str:
    rows = ",\n".join(
        f"{int(t)};{np.size(v)};{fmt(v)};;" for t, v in zip(times, values, strict=True)
    )
    return f"AnimationKey {{ {key_type}; {len(times)};\n{rows};\n}}\n"


def animation(frame: str, keys: str, closed: bool = False, spline: bool = False) -> str:
    opts = f"AnimationOptions {{ {0 if closed else 1}; {0 if spline else 1}; }}\n"
    return f"Animation {{\n{{ {frame} }}\n{keys}{opts}}}\n"


# --- the character fixture ------------------------------------------------------------------

HIP_BIND = rot_axis("y", 30) @ translation(0.3, 0.0, 0.1)  # combined bind matrices (row)
SPINE_BIND = translation(0, 2, 0) @ HIP_BIND
HEAD_BIND = translation(0, 2, 0) @ SPINE_BIND
# the frames hold a posed skeleton, not the bind pose (as in several real files)
HIP_FRAME = rot_axis("y", 10) @ translation(0.2, 0.1, 0.0)
SPINE_FRAME = rot_axis("z", 20) @ translation(0, 2, 0)
HEAD_FRAME = rot_axis("x", -15) @ translation(0, 2, 0)
KEY_TIMES = [0, 1600, 3200]  # 0, 10, 20 frames at 30 fps
WAVE_HIP_TIMES = [0, 480, 800, 1920]  # 0, 3, 5, 12 frames at 30 fps


def column_weights() -> dict[str, tuple[list[int], list[float]]]:
    """Hat weights centred on the bone heads (y = 0, 2, 4); above y=4 they sum below 1."""
    out: dict[str, tuple[list[int], list[float]]] = {}
    for bone, centre in (("Hip", 0.0), ("Spine", 2.0), ("Head", 4.0)):
        idx, w = [], []
        for v in range(52):
            y = 0.5 * (v // 4)
            weight = max(0.0, 1.0 - abs(y - centre) / 2.0)
            if weight > 0:
                idx.append(v)
                w.append(weight)
        out[bone] = (idx, w)
    return out


def character_text(broken: str = "") -> str:
    """The skinned column with 3 bones, a prop on the head, a spinning rigid object, 2 sets.

    ``broken``: "index" (a vertex index past the end), "nan" (a NaN weight), "missing" (a
    SkinWeights naming a frame that does not exist).
    """
    weights = column_weights()
    binds = {"Hip": HIP_BIND, "Spine": SPINE_BIND, "Head": HEAD_BIND}
    skin = "XSkinMeshHeader { 2; 4; 3; }\n"
    for bone, (idx, w) in weights.items():
        if broken == "index" and bone == "Spine":
            idx = [*idx, 52]
            w = [*w, 0.5]
        if broken == "nan" and bone == "Head":
            w = list(w)
            w[0] = float("nan")
        skin += skin_weights(bone, idx, w, np.linalg.inv(binds[bone]))
    if broken == "missing":
        skin += skin_weights("Ghost", [0, 1], [0.5, 0.5], np.eye(4))
    prop = frame_text("Prop", translation(0.5, 0.5, 0.0), triangle_mesh("PropMesh"))
    head = frame_text("Head", HEAD_FRAME, prop)
    spine = frame_text("Spine", SPINE_FRAME, head)
    hip = frame_text("Hip", HIP_FRAME, spine)
    body = frame_text("Body", np.eye(4), column_mesh("Column", skin))
    spinner = frame_text("Spinner", translation(3, 0, 0), triangle_mesh("SpinnerMesh", 0.5))
    walk = "AnimationSet Walk {\n"
    walk += animation(
        "Hip",
        key_block(2, KEY_TIMES, [[0.2, 0.1, 0.0], [0.5, 0.3, -0.2], [0.2, 0.1, 0.0]])
        + key_block(0, KEY_TIMES, [quat_key("y", 10), quat_key("y", 50), quat_key("y", 100)])
        + key_block(1, KEY_TIMES, [[1, 1, 1], [1.2, 0.9, 1.1], [1, 1, 1]]),
        closed=True,
    )
    spine_keys = [
        scaling(1, s, 1) @ rot_axis("z", a) @ translation(0, 2, 0)
        for a, s in ((20, 1.0), (-25, 1.3), (5, 1.0))
    ]
    walk += animation("Spine", key_block(4, KEY_TIMES, spine_keys))
    head_keys = [
        scaling(1.0, 1.0, sz) @ rot_axis("x", a) @ translation(0, 2, dz)
        for a, sz, dz in ((-15, 1.0, 0.0), (30, 0.7, 0.3), (0, 1.0, 0.0))
    ]
    walk += animation("Head", key_block(3, KEY_TIMES, head_keys))
    walk += animation(
        "Spinner", key_block(0, KEY_TIMES, [quat_key("z", 0), quat_key("z", 60), quat_key("z", 90)])
    )
    walk += "}\n"
    wave = "AnimationSet Wave {\n"
    wave += animation(
        "Spine",
        key_block(0, [0, 480, 960, 1440], [quat_key("x", a) for a in (0, 20, -20, 0)]),
        spline=True,
    )
    # spline positions at uneven times (3, 2 and 7 frames apart), a rotation key between
    wave += animation(
        "Hip",
        key_block(2, WAVE_HIP_TIMES, [[0.2, 0.1, 0.0], [0.6, 0.4, -0.3], [0.1, 0.7, 0.2],
                                      [0.5, 0.1, 0.4]])
        + key_block(0, [0, 960, 1920], [quat_key("y", a) for a in (10, 30, 10)]),
        spline=True,
    )  # fmt: skip
    wave += "}\n"
    return (
        "xof 0303txt 0032\nAnimTicksPerSecond { 4800; }\n"
        + body + hip + spinner + walk + wave
    )  # fmt: skip


def anim_only_text() -> str:
    """The character's skeleton frames plus one set that nods the head; 'Tail' is unknown."""
    head = frame_text("Head", HEAD_FRAME)
    spine = frame_text("Spine", SPINE_FRAME, head)
    hip = frame_text("Hip", HIP_FRAME, spine)
    nod = "AnimationSet Nod {\n"
    nod += animation(
        "Head", key_block(0, [0, 960, 1920], [quat_key("x", a) for a in (-15, 25, -15)])
    )
    nod += animation("Tail", key_block(2, [0, 960], [[0, 0, 0], [0, 1, 0]]))
    nod += "}\n"
    return "xof 0303txt 0032\nAnimTicksPerSecond { 4800; }\n" + hip + nod


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="ascii")
    return path


# --- Blender side -------------------------------------------------------------------------------


def evaluated_world_positions(obj) -> np.ndarray:
    """World positions of ``obj``'s evaluated (deformed) mesh, in vertex order."""
    import bpy

    depsgraph = bpy.context.evaluated_depsgraph_get()
    ev = obj.evaluated_get(depsgraph)
    mesh = ev.to_mesh()
    try:
        co = np.empty(len(mesh.vertices) * 3)
        mesh.vertices.foreach_get("co", co)
    finally:
        ev.to_mesh_clear()
    m = np.array([list(row) for row in ev.matrix_world])
    co = co.reshape(-1, 3)
    return co @ m[:3, :3].T + m[:3, 3]


def set_frame(frame: float) -> None:
    import bpy

    whole = math.floor(frame)
    bpy.context.scene.frame_set(int(whole), subframe=float(frame - whole))


def model_size(points: np.ndarray) -> float:
    return float(np.linalg.norm(np.ptp(points, axis=0)))
