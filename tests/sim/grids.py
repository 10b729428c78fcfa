"""Test meshes built by hand: a quad grid and a triangle fan (shared by tests and the bench)."""

from __future__ import annotations

import numpy as np


def quad_grid(
    nx: int, ny: int, size: float = 1.0, height: float = 0.0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A flat ``nx`` x ``ny`` vertex grid in the XY plane at ``height``, ``size`` metres wide.

    Vertex ``(i, j)`` (column ``i`` along X, row ``j`` along Y) has index ``j * nx + i``.
    Returns positions ``(nx*ny, 3)``, face sizes (all 4) and corners.
    """
    xs = np.linspace(0.0, size, nx)
    ys = np.linspace(0.0, size * (ny - 1) / max(nx - 1, 1), ny)
    gx, gy = np.meshgrid(xs, ys)
    positions = np.stack([gx.ravel(), gy.ravel(), np.full(nx * ny, height)], axis=1)
    i, j = np.meshgrid(np.arange(nx - 1), np.arange(ny - 1))
    v0 = (j * nx + i).ravel()
    corners = np.stack([v0, v0 + 1, v0 + 1 + nx, v0 + nx], axis=1).ravel()
    return positions, np.full(v0.size, 4, dtype=np.int64), corners.astype(np.int64)


def triangle_fan(count: int, radius: float = 1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A closed fan of ``count`` triangles around a centre vertex 0 (a regular polygon)."""
    angles = 2.0 * np.pi * np.arange(count) / count
    rim = np.stack([np.cos(angles), np.sin(angles), np.zeros(count)], axis=1) * radius
    positions = np.vstack([np.zeros((1, 3)), rim])
    a = np.arange(1, count + 1)
    b = np.roll(a, -1)
    corners = np.stack([np.zeros(count, dtype=np.int64), a, b], axis=1).ravel()
    return positions, np.full(count, 3, dtype=np.int64), corners.astype(np.int64)


def folded_over(
    s: np.ndarray, fold: float, radius: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A strip bent over at arc length ``fold``: the ``y`` and ``z`` of each point at arc
    length ``s`` when the rows past the fold go round a half circle of ``radius`` and come
    back over the first part ``2 radius`` above it, and which points lie on top."""
    arc = np.pi * radius
    y, z = s.copy(), np.zeros_like(s)
    bend = (s > fold) & (s < fold + arc)
    angle = (s[bend] - fold) / radius
    y[bend] = fold + radius * np.sin(angle)
    z[bend] = radius - radius * np.cos(angle)
    top = s >= fold + arc
    y[top] = fold - (s[top] - fold - arc)
    z[top] = 2 * radius
    return y, z, top
