"""Write ``examples/character.x``: the demo's walking figure wearing a cloth cape.

One text ``.X`` file holding

- a skeleton of 19 frames (root at the hips, spine, chest, neck, head, and for each side a
  clavicle, upper arm, forearm, hand, thigh, shin and foot), at rest with no rotations;
- ``Body``: a smooth low-poly figure (torso, head, arms, legs as tubes with rounded ends,
  per-vertex normals), skinned to the skeleton with weights blended across each joint;
- ``Cape``: a grid of cloth, wider at the hem than at the shoulders, hanging behind the back,
  skinned fully to the chest; its ``ClothMasses`` pin the top row (mass 0) and its
  ``ClothSprings`` list the grid edges;
- ``Walk``: an ``AnimationSet`` walking in place (one cycle a second, keys every eighth of a
  cycle, rotation keys on the limbs, a position key bobbing the root), with
  ``AnimTicksPerSecond``.

Everything is built in Blender's axes (x right, y back, z up; the figure faces -y), in metres,
and written in D3D's (left-handed, y up) by swapping y and z, which the importer swaps back.
Run it again after changing the numbers below; the output is committed so ``make demo``
needs nothing else, and a test checks the committed file equals what this script writes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

TICKS_PER_SECOND = 4800
CYCLE_SECONDS = 1.0
KEYS_PER_CYCLE = 8
SEGMENTS = 16  # vertices around each tube ring

CAPE_COLS, CAPE_ROWS = 19, 27
CAPE_TOP_Z, CAPE_LENGTH = 1.43, 0.95
CAPE_TOP_HALF, CAPE_HEM_HALF = 0.17, 0.36  # half widths (m)
PLEATS, PLEAT_DEPTH = 3, 0.035  # folds across the cape at rest, their depth at the hem (m)

# name, parent, head position (Blender axes, metres)
BONES: tuple[tuple[str, str | None, tuple[float, float, float]], ...] = (
    ("Root", None, (0.0, 0.0, 0.95)),
    ("Spine", "Root", (0.0, 0.0, 1.08)),
    ("Chest", "Spine", (0.0, 0.0, 1.26)),
    ("Neck", "Chest", (0.0, 0.0, 1.47)),
    ("Head", "Neck", (0.0, 0.0, 1.56)),
    *(
        bone
        for side, s in (("L", 1.0), ("R", -1.0))
        for bone in (
            (f"Clavicle.{side}", "Chest", (0.04 * s, 0.0, 1.42)),
            (f"UpperArm.{side}", f"Clavicle.{side}", (0.19 * s, 0.0, 1.40)),
            (f"Forearm.{side}", f"UpperArm.{side}", (0.22 * s, 0.01, 1.12)),
            (f"Hand.{side}", f"Forearm.{side}", (0.24 * s, -0.01, 0.87)),
            (f"Thigh.{side}", "Root", (0.095 * s, 0.0, 0.92)),
            (f"Shin.{side}", f"Thigh.{side}", (0.10 * s, -0.01, 0.52)),
            (f"Foot.{side}", f"Shin.{side}", (0.10 * s, 0.01, 0.09)),
        )
    ),
)
HEAD = {name: np.array(pos) for name, _, pos in BONES}
PARENT = {name: parent for name, parent, _ in BONES}

# D3D axes from Blender's: swap y and z (its own inverse)
SWAP = np.array([[1.0, 0, 0], [0, 0, 1.0], [0, 1.0, 0]])


@dataclass
class Part:
    """Rings of a tube: centres ``(K, 3)``, radii ``(K, 2)`` across (x-ish, y-ish), and the
    ring weights ``[{bone: weight}]``; the tube's ends are closed with a pole vertex."""

    centres: np.ndarray
    radii: np.ndarray
    weights: list[dict[str, float]]
    side: np.ndarray  # the direction the first radius runs along


def chain_weights(s: np.ndarray, joints: list[tuple[float, str]], blend: float) -> list:
    """Weights along a chain: bone ``joints[i][1]`` from distance ``joints[i][0]`` on, blended
    linearly over ``blend`` metres either side of each joint after the first."""
    out = []
    for x in s:
        w: dict[str, float] = {}
        for i, (start, bone) in enumerate(joints):
            end = joints[i + 1][0] if i + 1 < len(joints) else math.inf
            lo = 1.0 if i == 0 else np.clip((x - start + blend) / (2 * blend), 0.0, 1.0)
            hi = 1.0 if end == math.inf else np.clip((end + blend - x) / (2 * blend), 0.0, 1.0)
            if min(lo, hi) > 0.0:
                w[bone] = float(min(lo, hi))
        total = sum(w.values())
        out.append({b: v / total for b, v in w.items()})
    return out


def polyline(points: list[np.ndarray], count: int) -> tuple[np.ndarray, np.ndarray, list]:
    """``count`` points evenly along a polyline, their distance from its start, and the
    distances of its corners."""
    pts = np.array(points, dtype=np.float64)
    seg = np.linalg.norm(np.diff(pts, axis=0), axis=1)
    corners = np.concatenate([[0.0], np.cumsum(seg)])
    s = np.linspace(0.0, corners[-1], count)
    centres = np.stack([np.interp(s, corners, pts[:, k]) for k in range(3)], axis=1)
    return centres, s, list(corners)


def torso() -> Part:
    z = np.linspace(0.84, 1.50, 23)
    # (height, half width, half depth): hips, waist, chest, shoulders, base of the neck
    profile = np.array(
        [
            (0.84, 0.13, 0.10),
            (0.92, 0.165, 0.115),
            (1.02, 0.15, 0.105),
            (1.10, 0.135, 0.10),
            (1.22, 0.155, 0.11),
            (1.33, 0.175, 0.115),
            (1.41, 0.18, 0.10),
            (1.46, 0.10, 0.07),
            (1.50, 0.055, 0.05),
        ]
    )
    radii = np.stack([np.interp(z, profile[:, 0], profile[:, k]) for k in (1, 2)], axis=1)
    centres = np.stack([np.zeros_like(z), 0.01 * np.ones_like(z), z], axis=1)
    joints = [(0.0, "Root"), (1.08 - 0.84, "Spine"), (1.26 - 0.84, "Chest"), (1.47 - 0.84, "Neck")]
    return Part(centres, radii, chain_weights(z - 0.84, joints, 0.05), np.array([1.0, 0, 0]))


def head() -> Part:
    t = np.linspace(-1.0, 0.95, 13)
    z = 1.69 + 0.12 * t
    r = np.sqrt(np.clip(1.0 - t**2, 0.0, 1.0))
    radii = np.stack([0.09 * r, 0.105 * r], axis=1)
    radii[0] = (0.045, 0.045)  # the neck below the skull
    centres = np.stack([np.zeros_like(z), -0.01 * np.ones_like(z), z], axis=1)
    centres[0, 2] = 1.52
    weights = [{"Neck": 0.5, "Head": 0.5}] + [{"Head": 1.0}] * (len(z) - 1)
    return Part(centres, radii, weights, np.array([1.0, 0, 0]))


def limb(bones: list[str], tip: np.ndarray, radius: list[float], count: int) -> Part:
    points = [HEAD[b] for b in bones] + [tip]
    centres, s, corners = polyline(points, count)
    r = np.interp(s, np.linspace(0.0, corners[-1], len(radius)), radius)
    joints = list(zip(corners[:-1], bones, strict=True))
    return Part(
        centres, np.stack([r, r], axis=1), chain_weights(s, joints, 0.04), np.array([1.0, 0, 0])
    )


def leg(side: str, s: float) -> list[Part]:
    thigh = limb(
        [f"Thigh.{side}", f"Shin.{side}"],
        HEAD[f"Foot.{side}"],
        [0.085, 0.075, 0.06, 0.052, 0.05, 0.045, 0.04],
        18,
    )
    # the foot: a flattened tube from the heel forward to the toes
    x = 0.10 * s
    centres = np.array([(x, 0.05 - 0.23 * t, 0.055 - 0.03 * t) for t in np.linspace(0, 1, 8)])
    radii = np.stack([np.full(8, 0.045), np.full(8, 0.032)], axis=1)
    radii[:, 0] *= np.array([0.8, 1.0, 1.0, 1.0, 1.05, 1.05, 1.0, 0.85])
    foot = Part(centres, radii, [{f"Foot.{side}": 1.0}] * 8, np.array([1.0, 0, 0]))
    return [thigh, foot]


def arm(side: str, s: float) -> list[Part]:
    tip = HEAD[f"Hand.{side}"] + np.array([0.01 * s, -0.01, -0.17])
    return [
        limb(
            [f"UpperArm.{side}", f"Forearm.{side}", f"Hand.{side}"],
            tip,
            [0.055, 0.048, 0.042, 0.036, 0.03, 0.035, 0.025],
            22,
        )
    ]


def tube_mesh(part: Part, first: int) -> tuple[np.ndarray, list[tuple[int, ...]], list]:
    """Vertices, faces (counter-clockwise seen from outside, Blender's front) and per-vertex
    weights of one closed tube; ``first`` is the index of its first vertex in the mesh."""
    k = len(part.centres)
    tangents = np.gradient(part.centres, axis=0)
    tangents /= np.linalg.norm(tangents, axis=1, keepdims=True)
    angles = 2 * np.pi * np.arange(SEGMENTS) / SEGMENTS
    verts, weights = [], []
    for i in range(k):
        t = tangents[i]
        u = part.side - t * (part.side @ t)
        u /= np.linalg.norm(u)
        v = np.cross(t, u)
        ring = (
            part.centres[i]
            + np.outer(np.cos(angles) * part.radii[i, 0], u)
            + np.outer(np.sin(angles) * part.radii[i, 1], v)
        )
        verts.extend(ring)
        weights.extend([part.weights[i]] * SEGMENTS)
    bottom = part.centres[0] - tangents[0] * 0.4 * part.radii[0].min()
    top = part.centres[-1] + tangents[-1] * 0.4 * part.radii[-1].min()
    verts.extend([bottom, top])
    weights.extend([part.weights[0], part.weights[-1]])
    faces: list[tuple[int, ...]] = []
    for i in range(k - 1):
        for j in range(SEGMENTS):
            a, b = first + i * SEGMENTS + j, first + i * SEGMENTS + (j + 1) % SEGMENTS
            faces.append((a, b, b + SEGMENTS, a + SEGMENTS))
    pole_lo, pole_hi = first + k * SEGMENTS, first + k * SEGMENTS + 1
    last = first + (k - 1) * SEGMENTS
    for j in range(SEGMENTS):
        j2 = (j + 1) % SEGMENTS
        faces.append((first + j2, first + j, pole_lo))
        faces.append((last + j, last + j2, pole_hi))
    return np.array(verts), faces, weights


def body() -> tuple[np.ndarray, list[tuple[int, ...]], list[dict[str, float]]]:
    parts = [torso(), head()]
    for side, s in (("L", 1.0), ("R", -1.0)):
        parts += leg(side, s) + arm(side, s)
    verts: list[np.ndarray] = []
    faces: list[tuple[int, ...]] = []
    weights: list[dict[str, float]] = []
    for part in parts:
        v, f, w = tube_mesh(part, sum(len(x) for x in verts))
        verts.append(v)
        faces += f
        weights += w
    positions = np.concatenate(verts)
    # the clavicles carry the top of the arms and the shoulders' flesh of the torso
    for i, p in enumerate(positions):
        if p[2] > 1.34 and abs(p[0]) > 0.12:
            side = "L" if p[0] > 0 else "R"
            w = weights[i]
            moved = 0.6 * w.get("Chest", 0.0)
            if moved:
                w = dict(w)
                w["Chest"] -= moved
                w[f"Clavicle.{side}"] = w.get(f"Clavicle.{side}", 0.0) + moved
                weights[i] = w
    return positions, faces, weights


def cape() -> tuple[np.ndarray, list[tuple[int, ...]], np.ndarray, np.ndarray]:
    """Cape positions, quads, UVs and its grid edges: the top row follows the shoulders
    behind the neck, the rest hangs straight down, widening to the hem."""
    u = np.linspace(-1.0, 1.0, CAPE_COLS)
    v = np.linspace(0.0, 1.0, CAPE_ROWS)
    uu, vv = np.meshgrid(u, v)
    half = CAPE_TOP_HALF + (CAPE_HEM_HALF - CAPE_TOP_HALF) * vv
    x = uu * half
    z = CAPE_TOP_Z - vv * CAPE_LENGTH
    # gathered at the shoulders: pleats (three across) that deepen toward the hem
    pleats = PLEAT_DEPTH * np.sqrt(vv) * np.cos(PLEATS * np.pi * uu)
    y = 0.13 + 0.07 * np.minimum(vv * 6.0, 1.0) - 0.03 * uu**2 * (1.0 - vv) + pleats
    positions = np.stack([x, y, z], axis=-1).reshape(-1, 3)
    uvs = np.stack([(uu + 1.0) / 2.0, vv], axis=-1).reshape(-1, 2)
    idx = np.arange(CAPE_COLS * CAPE_ROWS).reshape(CAPE_ROWS, CAPE_COLS)
    # counter-clockwise seen from behind (+y): the cape's outside faces away from the body
    quads = np.stack([idx[:-1, :-1], idx[1:, :-1], idx[1:, 1:], idx[:-1, 1:]], axis=-1)
    horizontal = np.stack([idx[:, :-1], idx[:, 1:]], axis=-1).reshape(-1, 2)
    vertical = np.stack([idx[:-1, :], idx[1:, :]], axis=-1).reshape(-1, 2)
    faces = [tuple(int(i) for i in q) for q in quads.reshape(-1, 4)]
    return positions, faces, uvs, np.concatenate([horizontal, vertical])


def vertex_normals(positions: np.ndarray, faces: list[tuple[int, ...]]) -> np.ndarray:
    """Area-weighted smooth normals of counter-clockwise faces."""
    normals = np.zeros_like(positions)
    for f in faces:
        p = positions[list(f)]
        n = np.zeros(3)
        for i in range(1, len(f) - 1):
            n += np.cross(p[i] - p[0], p[i + 1] - p[0])
        normals[list(f)] += n
    return normals / np.linalg.norm(normals, axis=1, keepdims=True)


# -- animation ---------------------------------------------------------------------------------


def rot(axis: str, degrees: float) -> np.ndarray:
    a = math.radians(degrees)
    c, s = math.cos(a), math.sin(a)
    i, j = {"x": (1, 2), "y": (2, 0), "z": (0, 1)}[axis]
    m = np.eye(3)
    m[i, i], m[i, j], m[j, i], m[j, j] = c, -s, s, c
    return m


def walk_pose(phase: float) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Local rotations (3x3, Blender axes, column vectors) of the bones at ``phase``
    (radians of the cycle), and the root's offset from its rest head."""
    sw = math.sin(phase)
    pose: dict[str, np.ndarray] = {}
    for side, s in (("L", 1.0), ("R", -1.0)):
        leg_sw = s * sw  # +1: this leg forward
        knee = 8.0 + 32.0 * max(0.0, math.sin(phase + s * math.pi / 2 + 0.6)) ** 2
        pose[f"Thigh.{side}"] = rot("x", -26.0 * leg_sw)
        pose[f"Shin.{side}"] = rot("x", knee)
        pose[f"Foot.{side}"] = rot("x", -10.0 * leg_sw - 0.4 * knee + 4.0)
        pose[f"UpperArm.{side}"] = rot("y", 6.0 * s) @ rot("x", 22.0 * leg_sw)
        pose[f"Forearm.{side}"] = rot("x", -(14.0 + 12.0 * max(0.0, -leg_sw)))
        pose[f"Clavicle.{side}"] = rot("y", 2.0 * s * math.cos(2 * phase))
    pose["Spine"] = rot("z", 5.0 * sw) @ rot("x", -2.0)
    pose["Chest"] = rot("z", -7.0 * sw)
    pose["Head"] = rot("z", 3.0 * sw)
    root = rot("z", -3.0 * sw) @ rot("y", 2.0 * math.cos(phase))
    pose["Root"] = root
    bob = np.array([0.0, 0.0, 0.02 * math.cos(2 * phase) - 0.01])
    return pose, bob


def d3d_quaternion(r: np.ndarray) -> list[float]:
    """The .X rotation key of a Blender-axes rotation: the D3D-axes rotation's quaternion,
    conjugated as files store it (w, x, y, z)."""
    m = SWAP @ r @ SWAP
    w = math.sqrt(max(0.0, 1.0 + m[0, 0] + m[1, 1] + m[2, 2])) / 2.0
    x = math.copysign(
        math.sqrt(max(0.0, 1.0 + m[0, 0] - m[1, 1] - m[2, 2])) / 2.0, m[2, 1] - m[1, 2]
    )
    y = math.copysign(
        math.sqrt(max(0.0, 1.0 - m[0, 0] + m[1, 1] - m[2, 2])) / 2.0, m[0, 2] - m[2, 0]
    )
    z = math.copysign(
        math.sqrt(max(0.0, 1.0 - m[0, 0] - m[1, 1] + m[2, 2])) / 2.0, m[1, 0] - m[0, 1]
    )
    return [w, -x, -y, -z]


# -- writing -----------------------------------------------------------------------------------


def num(x: float) -> str:
    text = f"{x:.5f}".rstrip("0").rstrip(".")
    return "0" if text in {"-0", ""} else text


def vec_rows(values: np.ndarray) -> str:
    return ",\n".join(";".join(num(c) for c in row) + ";" for row in values) + ";"


def face_rows(faces: list[tuple[int, ...]]) -> str:
    # D3D's front faces are clockwise: reversed order after the axis swap
    return (
        ",\n".join(f"{len(f)};" + ",".join(str(i) for i in reversed(f)) + ";" for f in faces) + ";"
    )


def d3d(p: np.ndarray) -> np.ndarray:
    return np.asarray(p) @ SWAP.T


def translation_matrix(offset: np.ndarray) -> str:
    x, y, z = d3d(offset)
    return f"1,0,0,0,0,1,0,0,0,0,1,0,{num(x)},{num(y)},{num(z)},1;;"


def skin_blocks(weights: list[dict[str, float]]) -> str:
    """The skin header and one ``SkinWeights`` per bone that has weights."""
    per_bone: dict[str, list[tuple[int, float]]] = {name: [] for name, _, _ in BONES}
    for i, w in enumerate(weights):
        for bone, value in w.items():
            if value > 0.0:
                per_bone[bone].append((i, value))
    used = [b for b, entries in per_bone.items() if entries]
    most = max(len([v for v in w.values() if v > 0]) for w in weights)
    out = [f"XSkinMeshHeader {{ {most}; {most * 4}; {len(used)}; }}"]
    for bone in used:
        entries = per_bone[bone]
        idx = ",".join(str(i) for i, _ in entries)
        wts = ",".join(num(v) for _, v in entries)
        offset = translation_matrix(-HEAD[bone])
        out.append(f'SkinWeights {{\n"{bone}";\n{len(entries)};\n{idx};\n{wts};\n{offset}\n}}')
    return "\n".join(out)


def mesh_block(
    name: str,
    positions: np.ndarray,
    faces: list[tuple[int, ...]],
    material: str,
    skin: str,
    extra: str = "",
    uvs: np.ndarray | None = None,
) -> str:
    normals = vertex_normals(positions, faces)
    parts = [
        f"Mesh {name} {{",
        f"{len(positions)};",
        vec_rows(d3d(positions)),
        f"{len(faces)};",
        face_rows(faces),
        "MeshNormals {",
        f"{len(normals)};",
        vec_rows(d3d(normals)),
        f"{len(faces)};",
        face_rows(faces),
        "}",
    ]
    if uvs is not None:
        parts += ["MeshTextureCoords {", f"{len(uvs)};", vec_rows(uvs), "}"]
    parts += [f"MeshMaterialList {{ 1; 1; 0;; {{ {material} }} }}", skin, extra, "}"]
    return "\n".join(p for p in parts if p)


def frame_tree(name: str) -> str:
    parent = PARENT[name]
    offset = HEAD[name] - (HEAD[parent] if parent else 0.0)
    children = "".join(frame_tree(c) for c, p in PARENT.items() if p == name)
    return (
        f"Frame {name} {{\nFrameTransformMatrix {{ {translation_matrix(offset)} }}\n{children}}}\n"
    )


def plain_frame(name: str, content: str) -> str:
    """A frame at the origin holding ``content``."""
    matrix = translation_matrix(np.zeros(3))
    return f"Frame {name} {{\nFrameTransformMatrix {{ {matrix} }}\n{content}\n}}\n"


def animation_set() -> str:
    step = TICKS_PER_SECOND * CYCLE_SECONDS / KEYS_PER_CYCLE
    times = [round(k * step) for k in range(KEYS_PER_CYCLE + 1)]
    poses = [walk_pose(2 * math.pi * k / KEYS_PER_CYCLE) for k in range(KEYS_PER_CYCLE + 1)]
    blocks = []
    for name in PARENT:
        if name not in poses[0][0]:
            continue
        rows = ",\n".join(
            f"{t};4;" + ",".join(num(c) for c in d3d_quaternion(p[0][name])) + ";;"
            for t, p in zip(times, poses, strict=True)
        )
        keys = f"AnimationKey {{ 0; {len(times)};\n{rows};\n}}\n"
        if name == "Root":
            rows = ",\n".join(
                f"{t};3;" + ",".join(num(c) for c in d3d(HEAD["Root"] + p[1])) + ";;"
                for t, p in zip(times, poses, strict=True)
            )
            keys += f"AnimationKey {{ 2; {len(times)};\n{rows};\n}}\n"
        blocks.append(f"Animation {{\n{{ {name} }}\n{keys}AnimationOptions {{ 0; 1; }}\n}}")
    return "AnimationSet Walk {\n" + "\n".join(blocks) + "\n}\n"


TEMPLATES = """\
template ClothMasses {
 <F5AD0F93-9BF2-4bcf-B7CF-D68CD6B54156>
 DWORD NumPoints;
 array FLOAT Mass[NumPoints];
}

template ClothSprings {
 <8C08B088-728E-46c8-BE87-72672B81DB11>
 DWORD NumSprings;
 DWORD NumVertices;
 array DWORD Vertex[NumVertices];
}
"""


def character_text() -> str:
    body_pos, body_faces, body_weights = body()
    cape_pos, cape_faces, cape_uvs, springs = cape()
    masses = np.ones(len(cape_pos))
    masses[:CAPE_COLS] = 0.0  # the top row is held at the shoulders
    cloth = (
        f"ClothMasses {{ {len(masses)}; {','.join(num(m) for m in masses)}; }}\n"
        f"ClothSprings {{ {len(springs)}; {2 * len(springs)};\n"
        + ",".join(f"{i},{j}" for i, j in springs)
        + "; }"
    )
    cape_skin = skin_blocks([{"Chest": 1.0}] * len(cape_pos))
    body_mesh = mesh_block("BodyMesh", body_pos, body_faces, "Skin", skin_blocks(body_weights))
    cape_mesh = mesh_block(
        "CapeMesh", cape_pos, cape_faces, "CapeCloth", cape_skin, cloth, cape_uvs
    )
    return (
        "xof 0303txt 0032\n"
        f"// A walking figure in a cloth cape: {len(BONES)} bones, one walk cycle.\n"
        "// Written by examples/make_character.py.\n\n"
        + TEMPLATES
        + f"\nAnimTicksPerSecond {{ {TICKS_PER_SECOND}; }}\n\n"
        "Material Skin { 0.55;0.45;0.38;1.0;; 20.0; 0.1;0.1;0.1;; 0.0;0.0;0.0;; }\n"
        "Material CapeCloth { 0.2;0.012;0.02;1.0;; 8.0; 0.1;0.1;0.1;; 0.0;0.0;0.0;; }\n\n"
        + frame_tree("Root")
        + plain_frame("Body", body_mesh)
        + plain_frame("Cape", cape_mesh)
        + animation_set()
    )


if __name__ == "__main__":
    out = Path(__file__).with_name("character.x")
    out.write_text(character_text(), encoding="ascii")
    print(f"wrote {out} ({out.stat().st_size // 1024} KB)")
