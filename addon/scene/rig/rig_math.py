"""Batched quaternion and matrix helpers for rigs (numpy only, no bpy).

Quaternions are ``(w, x, y, z)``. ``quat_to_mat3`` is the usual column-vector rotation matrix;
a .X rotation key ``q`` gives the file's row-vector frame rotation ``quat_to_mat3(q)`` (the
file stores the conjugate of what the row convention would suggest, so the two transposes
cancel). All functions take stacks (``(..., 4)``, ``(..., 4, 4)``) so a whole track converts at
once.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def quat_to_mat3(q: np.ndarray) -> np.ndarray:
    """(..., 4) quaternions (normalised here) -> (..., 3, 3) column-vector rotations."""
    q = np.asarray(q, dtype=np.float64)
    norm = np.linalg.norm(q, axis=-1, keepdims=True)
    q = q / np.where(norm > 0.0, norm, 1.0)
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    m = np.empty((*q.shape[:-1], 3, 3))
    m[..., 0, 0] = 1 - 2 * (y * y + z * z)
    m[..., 0, 1] = 2 * (x * y - z * w)
    m[..., 0, 2] = 2 * (x * z + y * w)
    m[..., 1, 0] = 2 * (x * y + z * w)
    m[..., 1, 1] = 1 - 2 * (x * x + z * z)
    m[..., 1, 2] = 2 * (y * z - x * w)
    m[..., 2, 0] = 2 * (x * z - y * w)
    m[..., 2, 1] = 2 * (y * z + x * w)
    m[..., 2, 2] = 1 - 2 * (x * x + y * y)
    return m


def mat3_to_quat(m: np.ndarray) -> np.ndarray:
    """(..., 3, 3) proper rotations -> (..., 4) unit quaternions with ``w >= 0``."""
    m = np.asarray(m, dtype=np.float64)
    tr = m[..., 0, 0] + m[..., 1, 1] + m[..., 2, 2]
    # four candidate forms; pick per matrix the one with the largest (stable) denominator
    cand = np.stack(
        [
            tr,
            m[..., 0, 0] - m[..., 1, 1] - m[..., 2, 2],
            m[..., 1, 1] - m[..., 0, 0] - m[..., 2, 2],
            m[..., 2, 2] - m[..., 0, 0] - m[..., 1, 1],
        ],
        axis=-1,
    )
    pick = np.argmax(cand, axis=-1)
    s = np.sqrt(np.maximum(1.0 + np.take_along_axis(cand, pick[..., None], -1)[..., 0], 1e-300))
    d = 0.5 / s
    half = 0.5 * s
    zy, xz, yx = (
        m[..., 2, 1] - m[..., 1, 2],
        m[..., 0, 2] - m[..., 2, 0],
        m[..., 1, 0] - m[..., 0, 1],
    )
    xy, xz2, yz = (
        m[..., 0, 1] + m[..., 1, 0],
        m[..., 0, 2] + m[..., 2, 0],
        m[..., 1, 2] + m[..., 2, 1],
    )
    # each matrix takes the form of its largest denominator (only that form is computed)
    q = np.empty((*m.shape[:-2], 4))
    forms = (
        lambda i: (half[i], zy[i] * d[i], xz[i] * d[i], yx[i] * d[i]),
        lambda i: (zy[i] * d[i], half[i], xy[i] * d[i], xz2[i] * d[i]),
        lambda i: (xz[i] * d[i], xy[i] * d[i], half[i], yz[i] * d[i]),
        lambda i: (yx[i] * d[i], xz2[i] * d[i], yz[i] * d[i], half[i]),
    )
    for form, values in enumerate(forms):
        where = pick == form
        if np.any(where):
            for c, v in enumerate(values(where)):
                q[..., c][where] = v
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    return np.where(q[..., :1] < 0.0, -q, q)


def quat_dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.sum(a * b, axis=-1)`` of (..., 4) stacks: the same products and left-to-right
    sum, the products in one contiguous pass and the sum in place (about 1.5x as fast as a
    pass a component, 3x a reduction over the short axis); a zero sum may keep the -0 that
    ``np.sum`` turns into +0 (callers compare it or take its absolute value)."""
    return _sum4(np.multiply(a, b))


def quat_norm(q: np.ndarray) -> np.ndarray:
    """``np.linalg.norm(q, axis=-1)`` of (..., 4) stacks, bit for bit (the same sum of
    squares, which are never -0)."""
    out = _sum4(np.multiply(q, q))
    return np.sqrt(out, out=out) if isinstance(out, np.ndarray) else np.sqrt(out)


def _sum4(products: np.ndarray) -> np.ndarray:
    """``((p0 + p1) + p2) + p3`` over the last axis, into one new array."""
    out = products[..., 0] + products[..., 1]
    out += products[..., 2]
    out += products[..., 3]
    return out


def slerp(q0: np.ndarray, q1: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Spherical interpolation along the short arc, batched over leading axes."""
    q0 = np.asarray(q0, dtype=np.float64)
    q1 = np.asarray(q1, dtype=np.float64)
    t = np.asarray(t, dtype=np.float64)[..., None]
    dot = quat_dot(q0, q1)[..., None]
    q1 = np.where(dot < 0.0, -q1, q1)
    dot = np.abs(dot)
    theta = np.arccos(np.clip(dot, -1.0, 1.0))
    sin = np.sin(theta)
    small = sin < 1e-9
    safe = np.where(small, 1.0, sin)
    a = np.where(small, 1.0 - t, np.sin((1.0 - t) * theta) / safe)
    b = np.where(small, t, np.sin(t * theta) / safe)
    out = a * q0 + b * q1
    return out / quat_norm(out)[..., None]


def quat_angle(q0: np.ndarray, q1: np.ndarray) -> np.ndarray:
    """Rotation angle (radians, 0..pi) between two stacks of unit quaternions."""
    dot = np.abs(quat_dot(np.asarray(q0), np.asarray(q1)))
    return 2.0 * np.arccos(np.clip(dot, 0.0, 1.0))


def make_continuous(q: np.ndarray) -> np.ndarray:
    """Flip signs along a (k, 4) track so consecutive quaternions share a hemisphere.

    Blender interpolates quaternion channels one by one: a sign flip between two keys would
    swing the long way round.
    """
    q = np.array(q, dtype=np.float64, copy=True)
    if len(q) < 2:
        return q
    flips = np.sum(q[1:] * q[:-1], axis=-1) < 0.0
    sign = np.concatenate([[1.0], np.where(np.cumsum(flips) % 2 == 1, -1.0, 1.0)])
    return q * sign[:, None]


def det3(m3: np.ndarray) -> np.ndarray:
    """Determinants of (..., 3, 3) matrices, written out (no LAPACK call per stack)."""
    m = np.asarray(m3, dtype=np.float64)
    return (
        m[..., 0, 0] * (m[..., 1, 1] * m[..., 2, 2] - m[..., 1, 2] * m[..., 2, 1])
        - m[..., 0, 1] * (m[..., 1, 0] * m[..., 2, 2] - m[..., 1, 2] * m[..., 2, 0])
        + m[..., 0, 2] * (m[..., 1, 0] * m[..., 2, 1] - m[..., 1, 1] * m[..., 2, 0])
    )


#: matrices whose columns are orthonormal within this are rotations already (no SVD)
ORTHONORMAL_TOLERANCE = 1e-10


def _not_rotation(m: np.ndarray) -> np.ndarray:
    """(..., 3, 3) -> bool: columns not orthonormal within the tolerance, or determinant <= 0
    (non-finite matrices count as rotations: the SVD would fail on them)."""
    off = np.zeros(m.shape[:-2])
    for i in range(3):
        for j in range(i, 3):
            dot = m[..., 0, i] * m[..., 0, j] + m[..., 1, i] * m[..., 1, j]
            dot = dot + m[..., 2, i] * m[..., 2, j]
            off = np.maximum(off, np.abs(dot - (1.0 if i == j else 0.0)))
    return (off > ORTHONORMAL_TOLERANCE) | (det3(m) <= 0.0)


def closest_rotation(m3: np.ndarray, known: np.ndarray | None = None) -> np.ndarray:
    """(..., 3, 3) -> the nearest proper rotation (polar decomposition through SVD).

    Matrices that already are proper rotations (what scale-free key transforms give) are
    returned as they are; only the others pay for the SVD. ``known`` (bool, the stack's
    shape): matrices the caller knows to be proper rotations, not checked.
    """
    m3 = np.asarray(m3, dtype=np.float64)
    if known is None:
        bad = _not_rotation(m3)
    else:
        bad = np.zeros(m3.shape[:-2], dtype=bool)
        check = ~np.asarray(known, dtype=bool)
        bad[check] = _not_rotation(m3[check])
    if not np.any(bad):
        return m3.copy()
    r = m3.copy()
    u, _, vt = np.linalg.svd(m3[bad])
    fixed = u @ vt
    flip = det3(fixed) < 0.0
    if np.any(flip):
        u[flip, :, 2] *= -1.0
        fixed = u @ vt
    r[bad] = fixed
    return r


def decompose(
    m4: np.ndarray, conformal: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(..., 4, 4) column-vector matrices -> location, quaternion, scale (``T @ R @ S``).

    Scale is per column (exact when the matrix has no shear); a mirrored matrix gets all
    three scales negated so that the rotation stays proper. ``conformal`` (bool, the stack's
    shape): matrices the caller knows to be a rotation times a uniform, not tiny scale (their
    normalised columns are a rotation: the check for shear is skipped).
    """
    m4 = np.asarray(m4, dtype=np.float64)
    loc = m4[..., :3, 3].copy()
    m3 = m4[..., :3, :3]
    scale = np.sqrt(m3[..., 0, :] * m3[..., 0, :] + m3[..., 1, :] * m3[..., 1, :]
                    + m3[..., 2, :] * m3[..., 2, :])  # fmt: skip
    sign = np.where(det3(m3) < 0.0, -1.0, 1.0)
    scale = scale * sign[..., None]
    safe = np.where(np.abs(scale) > 1e-12, scale, 1.0)
    rot = closest_rotation(m3 / safe[..., None, :], conformal)
    return loc, mat3_to_quat(rot), scale


def compose(loc: np.ndarray, quat: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """location, quaternion, scale stacks -> (..., 4, 4) ``T @ R @ S``."""
    loc = np.asarray(loc, dtype=np.float64)
    r = quat_to_mat3(quat) * np.asarray(scale, dtype=np.float64)[..., None, :]
    m = np.zeros((*r.shape[:-2], 4, 4))
    m[..., :3, :3] = r
    m[..., :3, 3] = loc
    m[..., 3, 3] = 1.0
    return m


def row_compose(pos: np.ndarray, quat: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """File (row-vector) local matrices ``S * R * T`` from key values, batched.

    The rotation block is ``quat_to_mat3(q)`` itself (see the module docstring), each row
    scaled by its axis' scale; translation in row 3.
    """
    r = quat_to_mat3(quat) * np.asarray(scale, dtype=np.float64)[..., :, None]
    m = np.zeros((*r.shape[:-2], 4, 4))
    m[..., :3, :3] = r
    m[..., 3, :3] = np.asarray(pos, dtype=np.float64)
    m[..., 3, 3] = 1.0
    return m


def row_decompose(m: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Inverse of :func:`row_compose`: file row matrices -> position, quaternion, scale."""
    m = np.asarray(m, dtype=np.float64)
    loc, quat, scale = decompose(np.swapaxes(m, -1, -2))
    # decompose() read the transposed matrix: its "rotation" is quat_to_mat3(q).T, so conjugate
    quat = quat * np.array([1.0, -1.0, -1.0, -1.0])
    quat = np.where(quat[..., :1] < 0.0, -quat, quat)
    return loc, quat, scale


def _inverse_parts(a: list) -> tuple[list, object]:
    """Cofactor form of a 4x4 inverse: (adjugate rows, determinant), elementwise on floats or
    on arrays of matrices alike."""
    (a00, a01, a02, a03), (a10, a11, a12, a13), (a20, a21, a22, a23), (a30, a31, a32, a33) = a
    s0, s1, s2 = a00 * a11 - a10 * a01, a00 * a12 - a10 * a02, a00 * a13 - a10 * a03
    s3, s4, s5 = a01 * a12 - a11 * a02, a01 * a13 - a11 * a03, a02 * a13 - a12 * a03
    c5, c4, c3 = a22 * a33 - a32 * a23, a21 * a33 - a31 * a23, a21 * a32 - a31 * a22
    c2, c1, c0 = a20 * a33 - a30 * a23, a20 * a32 - a30 * a22, a20 * a31 - a30 * a21
    det = s0 * c5 - s1 * c4 + s2 * c3 + s3 * c2 - s4 * c1 + s5 * c0
    adj = [
        [a11 * c5 - a12 * c4 + a13 * c3, -a01 * c5 + a02 * c4 - a03 * c3,
         a31 * s5 - a32 * s4 + a33 * s3, -a21 * s5 + a22 * s4 - a23 * s3],
        [-a10 * c5 + a12 * c2 - a13 * c1, a00 * c5 - a02 * c2 + a03 * c1,
         -a30 * s5 + a32 * s2 - a33 * s1, a20 * s5 - a22 * s2 + a23 * s1],
        [a10 * c4 - a11 * c2 + a13 * c0, -a00 * c4 + a01 * c2 - a03 * c0,
         a30 * s4 - a31 * s2 + a33 * s0, -a20 * s4 + a21 * s2 - a23 * s0],
        [-a10 * c3 + a11 * c1 - a12 * c0, a00 * c3 - a01 * c1 + a02 * c0,
         -a30 * s3 + a31 * s1 - a32 * s0, a20 * s3 - a21 * s1 + a22 * s0],
    ]  # fmt: skip
    return adj, det


def inverse4(m: np.ndarray) -> np.ndarray:
    """Inverse of a (4, 4) matrix or a (..., 4, 4) stack, from cofactors, without LAPACK.

    Under Blender a LAPACK call on a 4x4 matrix costs far more than the arithmetic (its
    threads wait on Blender's), and rigs invert hundreds. A singular matrix raises
    ``LinAlgError`` as ``np.linalg.inv`` does; a non-finite one gives non-finite values.
    """
    m = np.asarray(m, dtype=np.float64)
    if m.ndim == 2:
        adj, det = _inverse_parts(m.tolist())
        if det == 0.0:
            raise np.linalg.LinAlgError("Singular matrix")
        return np.array(adj) / det
    adj, det = _inverse_parts([[m[..., r, c] for c in range(4)] for r in range(4)])
    det_a = np.asarray(det)
    if np.any(det_a == 0.0):
        raise np.linalg.LinAlgError("Singular matrix")
    out = np.stack([np.stack(row, axis=-1) for row in adj], axis=-2)
    return out / det_a[..., None, None]


def safe_inverse4(m: np.ndarray) -> np.ndarray:
    """:func:`inverse4` of one matrix that never raises: a singular matrix (a broken file's
    zero scale) gives the pseudo-inverse, a non-finite one (overflowed values) the identity."""
    m = np.asarray(m, dtype=np.float64)
    if not np.isfinite(m).all():
        return np.eye(4)
    try:
        out = inverse4(m)
    except np.linalg.LinAlgError:
        return np.linalg.pinv(m)
    return out if np.isfinite(out).all() else np.linalg.pinv(m)


def quat_multiply(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Hamilton products ``p * q`` of (..., 4) stacks (broadcast): ``quat_to_mat3(p * q)`` is
    ``quat_to_mat3(p) @ quat_to_mat3(q)``."""
    p = np.asarray(p, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    parts = multiply_parts(tuple(np.moveaxis(p, -1, 0)), tuple(np.moveaxis(q, -1, 0)))
    return np.stack(np.broadcast_arrays(*parts), axis=-1)


def multiply_parts(p: Sequence[np.ndarray], q: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
    """:func:`quat_multiply` on components: ``(w, x, y, z)`` arrays in, the product's out
    (one array each, no strided passes over a stack)."""
    pw, px, py, pz = p
    qw, qx, qy, qz = q
    return (
        pw * qw - px * qx - py * qy - pz * qz,
        pw * qx + px * qw + py * qz - pz * qy,
        pw * qy - px * qz + py * qw + pz * qx,
        pw * qz + px * qy - py * qx + pz * qw,
    )


def quat_rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``quat_to_mat3(q) @ v`` for (..., 4) unit quaternions and (..., 3) vectors."""
    q = np.asarray(q, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    parts = rotate_parts(tuple(np.moveaxis(q, -1, 0)), tuple(np.moveaxis(v, -1, 0)))
    return np.stack(np.broadcast_arrays(*parts), axis=-1)


def rotate_parts(q: Sequence[np.ndarray], v: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
    """:func:`quat_rotate` on components, without the matrix: ``v + 2w (u x v) + 2 u x (u x
    v)`` with ``q = (w, u)``."""
    w, x, y, z = q
    vx, vy, vz = v
    cx, cy, cz = y * vz - z * vy, z * vx - x * vz, x * vy - y * vx
    return (
        vx + 2.0 * (w * cx + y * cz - z * cy),
        vy + 2.0 * (w * cy + z * cx - x * cz),
        vz + 2.0 * (w * cz + x * cy - y * cx),
    )
