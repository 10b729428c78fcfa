"""An independent linear-blend skinning of a .X file's raw data, for checking the importer.

Written from the format notes only (no product code): D3D row vectors, ``v' = v * M``;
combined = local * parent; skinned vertex = sum_b w_b * v * offset_b * combined_b over the
bones that exist, divided by the sum of those weights (what Blender's Armature modifier
does; vertices with no existing bone stay where they are). Animated locals follow D3DX:
position and scale lerp, rotation slerp, a matrix key is split into the same parts, a part
without keys keeps the frame matrix's value; rotation keys store the conjugate of the
quaternion whose D3DX matrix is the frame's rotation. Closed animations loop over their
key range. Spline animations (positionquality 0) move the position along the cubic Hermite
curve through the keys whose tangent at an inner key is the chord of its two neighbours over
their time distance, and 0 at the first and last key. Result mirrored to Blender space:
``(x, y, z) -> (x, z, y)``.
"""

from __future__ import annotations

import math

import numpy as np


def d3dx_rotation(w: float, x: float, y: float, z: float) -> np.ndarray:
    """D3DXMatrixRotationQuaternion (row-vector 3x3) of a unit quaternion."""
    n = math.sqrt(w * w + x * x + y * y + z * z)
    w, x, y, z = w / n, x / n, y / n, z / n
    return np.array(
        [
            [1 - 2 * y * y - 2 * z * z, 2 * x * y + 2 * z * w, 2 * x * z - 2 * y * w],
            [2 * x * y - 2 * z * w, 1 - 2 * x * x - 2 * z * z, 2 * y * z + 2 * x * w],
            [2 * x * z + 2 * y * w, 2 * y * z - 2 * x * w, 1 - 2 * x * x - 2 * y * y],
        ]
    )


def key_rotation(q: np.ndarray) -> np.ndarray:
    """Row-vector rotation of a rotation key (the key is the conjugate)."""
    return d3dx_rotation(q[0], -q[1], -q[2], -q[3])


def rotation_to_key(r: np.ndarray) -> np.ndarray:
    """Inverse of :func:`key_rotation` (via the axis-angle of the row matrix)."""
    # key_rotation(q) == d3dx(conj q) == transpose of the column matrix of conj q == column
    # matrix of q; so r is the usual column-vector rotation matrix of q.
    t = np.trace(r)
    if t > 0:
        s = math.sqrt(t + 1.0) * 2
        q = [0.25 * s, (r[2, 1] - r[1, 2]) / s, (r[0, 2] - r[2, 0]) / s, (r[1, 0] - r[0, 1]) / s]
    else:
        i = int(np.argmax(np.diag(r)))
        j, k = (i + 1) % 3, (i + 2) % 3
        s = math.sqrt(1.0 + r[i, i] - r[j, j] - r[k, k]) * 2
        q = [0.0] * 4
        q[0] = (r[k, j] - r[j, k]) / s
        q[1 + i] = 0.25 * s
        q[1 + j] = (r[j, i] + r[i, j]) / s
        q[1 + k] = (r[k, i] + r[i, k]) / s
    return np.array(q) / np.linalg.norm(q)


def split_matrix(m: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Row matrix = S * R * T -> (scale, rotation key, position)."""
    m = np.asarray(m, dtype=np.float64).reshape(4, 4)
    scale = np.linalg.norm(m[:3, :3], axis=1)
    if np.linalg.det(m[:3, :3]) < 0:
        scale = -scale
    return scale, rotation_to_key(m[:3, :3] / scale[:, None]), m[3, :3].copy()


def slerp(a: np.ndarray, b: np.ndarray, t: float) -> np.ndarray:
    d = float(np.dot(a, b))
    if d < 0:
        b, d = -b, -d
    if d > 0.9999999:
        out = a + t * (b - a)
        return out / np.linalg.norm(out)
    ang = math.acos(min(d, 1.0))
    return (math.sin((1 - t) * ang) * a + math.sin(t * ang) * b) / math.sin(ang)


def _bracket(times: np.ndarray, t: float) -> tuple[int, int, float]:
    if t <= times[0]:
        return 0, 0, 0.0
    if t >= times[-1]:
        return len(times) - 1, len(times) - 1, 0.0
    hi = int(np.searchsorted(times, t, side="right"))
    lo = hi - 1
    return lo, hi, (t - times[lo]) / (times[hi] - times[lo])


def hermite_position(times: np.ndarray, vals: np.ndarray, t: float) -> np.ndarray:
    """The spline position at tick ``t`` (see the module docstring), one segment by hand."""
    n = len(times)
    if n == 1 or t <= times[0]:
        return vals[0].copy()
    if t >= times[-1]:
        return vals[-1].copy()
    i = int(np.searchsorted(times, t, side="right")) - 1

    def tangent(j: int) -> np.ndarray:
        if j == 0 or j == n - 1:
            return np.zeros(3)
        return (vals[j + 1] - vals[j - 1]) / (times[j + 1] - times[j - 1])

    # Bernstein form: control points at thirds of the segment along the tangents
    h = times[i + 1] - times[i]
    b0, b3 = vals[i], vals[i + 1]
    b1 = b0 + tangent(i) * h / 3.0
    b2 = b3 - tangent(i + 1) * h / 3.0
    u = (t - times[i]) / h
    return (1 - u) ** 3 * b0 + 3 * (1 - u) ** 2 * u * b1 + 3 * (1 - u) * u**2 * b2 + u**3 * b3


def animated_local(anim, frame_matrix: np.ndarray, t: float) -> np.ndarray:
    """The local row matrix of one Animation at tick ``t``."""
    s0, q0, p0 = split_matrix(frame_matrix)
    parts: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for track in anim.tracks:
        times = np.asarray(track.times, float)
        vals = np.asarray(track.values, float)
        order = np.argsort(times, kind="stable")
        times, vals = times[order], vals[order]
        if track.key_type == 0:
            parts["rot"] = (times, vals)
        elif track.key_type == 1:
            parts["scale"] = (times, vals)
        elif track.key_type == 2:
            parts["pos"] = (times, vals)
        elif track.key_type in (3, 4):
            split = [split_matrix(v) for v in vals]
            parts["scale"] = (times, np.array([s for s, _, _ in split]))
            parts["rot"] = (times, np.array([q for _, q, _ in split]))
            parts["pos"] = (times, np.array([p for _, _, p in split]))
    if not anim.open and parts:
        all_t = np.concatenate([p[0] for p in parts.values()])
        t0, t1 = float(all_t.min()), float(all_t.max())
        if t1 > t0 and (t < t0 or t > t1):
            t = t0 + (t - t0) % (t1 - t0)

    def lerp(name: str, default: np.ndarray) -> np.ndarray:
        if name not in parts:
            return default
        times, vals = parts[name]
        lo, hi, f = _bracket(times, t)
        return vals[lo] + f * (vals[hi] - vals[lo])

    scale = lerp("scale", s0)
    if "pos" in parts and not anim.linear:
        pos = hermite_position(*parts["pos"], t)
    else:
        pos = lerp("pos", p0)
    if "rot" in parts:
        times, vals = parts["rot"]
        lo, hi, f = _bracket(times, t)
        a = vals[lo] / np.linalg.norm(vals[lo])
        b = vals[hi] / np.linalg.norm(vals[hi])
        q = slerp(a, b, f)
    else:
        q = q0
    m = np.eye(4)
    m[:3, :3] = scale[:, None] * key_rotation(q)
    m[3, :3] = pos
    return m


def frame_table(scene) -> dict[str, tuple[str | None, np.ndarray, object]]:
    """name -> (parent name, frame matrix, FrameData); first frame of a name wins."""
    table: dict[str, tuple[str | None, np.ndarray, object]] = {}

    def visit(frame, parent: str | None) -> None:
        if frame.name is not None and frame.name not in table:
            table[frame.name] = (parent, np.asarray(frame.matrix, float).reshape(4, 4), frame)
        for child in frame.children:
            visit(child, frame.name)

    for top in scene.frames:
        visit(top, None)
    return table


def combined_matrices(scene, animation_set, ticks: float | None) -> dict[str, np.ndarray]:
    """Every named frame's combined (world) row matrix at ``ticks`` (None: frame pose)."""
    table = frame_table(scene)
    anims = {}
    if animation_set is not None and ticks is not None:
        for anim in animation_set.animations:
            anims[anim.frame_name] = anim
    locals_ = {
        name: (animated_local(anims[name], m, ticks) if name in anims else m)
        for name, (_, m, _) in table.items()
    }
    out: dict[str, np.ndarray] = {}

    def world(name: str) -> np.ndarray:
        if name not in out:
            parent = table[name][0]
            out[name] = locals_[name] @ world(parent) if parent is not None else locals_[name]
        return out[name]

    for name in table:
        world(name)
    return out


def mirror(points: np.ndarray) -> np.ndarray:
    return np.asarray(points)[:, [0, 2, 1]]


def skinned_positions(mesh, combined: dict[str, np.ndarray]) -> np.ndarray:
    """Blender-space positions of a skinned mesh (see the module docstring)."""
    v = np.asarray(mesh.positions, float)
    n = len(v)
    vh = np.hstack([v, np.ones((n, 1))])
    acc = np.zeros((n, 3))
    wsum = np.zeros(n)
    for sw in mesh.skin.weights:
        if sw.frame_name not in combined:
            continue
        idx = np.asarray(sw.indices, np.int64)
        w = np.asarray(sw.weights, float)
        ok = (idx >= 0) & (idx < n) & np.isfinite(w) & (w > 0)
        idx, w = idx[ok], w[ok]
        m = np.asarray(sw.offset, float).reshape(4, 4) @ combined[sw.frame_name]
        moved = (vh[idx] @ m)[:, :3]
        np.add.at(acc, idx, w[:, None] * moved)
        np.add.at(wsum, idx, w)
    out = v.copy()
    has = wsum > 1e-4
    out[has] = acc[has] / wsum[has, None]
    return mirror(out)


def rigid_positions(mesh, frame_world: np.ndarray) -> np.ndarray:
    v = np.asarray(mesh.positions, float)
    vh = np.hstack([v, np.ones((len(v), 1))])
    return mirror((vh @ frame_world)[:, :3])


def mesh_frames(scene) -> dict[int, str | None]:
    """id(MeshData) -> name of the frame that holds it (None at top level)."""
    out: dict[int, str | None] = {}

    def visit(frame) -> None:
        for mesh in frame.meshes:
            out[id(mesh)] = frame.name
        for child in frame.children:
            visit(child)

    for top in scene.frames:
        visit(top)
    return out


def expected_positions(scene, animation_set, ticks: float | None) -> dict[int, np.ndarray]:
    """id(MeshData) -> Blender-space world positions of every mesh at ``ticks``."""
    combined = combined_matrices(scene, animation_set, ticks)
    holders = mesh_frames(scene)
    out = {}
    for mesh in scene.all_meshes():
        if mesh.skin is not None and mesh.skin.weights:
            out[id(mesh)] = skinned_positions(mesh, combined)
        else:
            holder = holders.get(id(mesh))
            world = combined[holder] if holder is not None else np.eye(4)
            out[id(mesh)] = rigid_positions(mesh, world)
    return out
