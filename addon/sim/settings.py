"""What the user tunes: one dataclass shared by both solvers, with defaults that run fast.

Units are SI in Blender world space (metres, seconds, Z up). Masses come from the model
(kilograms per point; a file's ClothMasses values are used as they are, 1 = default).
The same setting means the same physics in both solvers:

- ``stiffness``/``shear_stiffness``/``bend_stiffness``: spring constant ``k`` in N/m, as in
  the book (``F = k * (len - rest)``); XPBD uses the compliance ``1 / k`` and stays stable
  at any value, the classic solver needs ``dt < 2 / sqrt(2 k / m)`` per substep.
- ``spring_damping``: the book's per-spring damper ``kd`` (N s/m, along the spring); classic
  only (XPBD relies on ``damping`` and ``drag``).
- ``damping``: per-point damping force ``-damping * v`` (N s/m), scaled by the painted
  damping scale.
- ``wind``: a force (N) added to every free point, as in the book.
- ``drag``: air drag as an acceleration ``-drag * v`` (1/s), independent of mass.
- ``shape_stiffness``: soft body only, the fraction of the way back to the rest shape per
  frame, 0..1 (the book's Revert); substep-independent.
- ``friction``: 0..1 (colliders may override it). XPBD: Coulomb coefficient, a contact's
  tangential slip per substep is limited to ``friction`` x its push-out depth; classic: the
  fraction of tangential velocity removed at a contact. ``collision_margin`` (metres) is
  kept between a point and a surface.
- ``self_collision``: XPBD cloth keeps ``self_distance`` (metres) between its points and its
  own triangles (needs the cloth's triangles, see ``Simulator``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

import numpy as np

Kind = Literal["CLOTH", "SOFT"]
Solver = Literal["XPBD", "CLASSIC"]


def _vec(x: float, y: float, z: float) -> np.ndarray:
    return np.array([x, y, z], dtype=np.float64)


@dataclass
class SimSettings:
    kind: Kind = "CLOTH"
    solver: Solver = "XPBD"
    stiffness: float = 1.0e6
    shear_stiffness: float = 1.0e4
    bend_stiffness: float = 5.0e2
    spring_damping: float = 0.0
    damping: float = 0.0
    gravity: np.ndarray = field(default_factory=lambda: _vec(0.0, 0.0, -9.81))
    wind: np.ndarray = field(default_factory=lambda: _vec(0.0, 0.0, 0.0))
    drag: float = 0.5
    substeps: int = 12
    shape_stiffness: float = 0.5
    friction: float = 0.3
    collision_margin: float = 0.005
    fps: float = 24.0
    tethers: bool = True  # XPBD: keep free points within their rest distance of the pins
    tether_pins: int = 2  # how many nearest pins each free point is tethered to
    stretch_limit_levels: int = 3  # XPBD cloth: limiters over 2, 4, 8 ... springs (0 = none),
    # counted for a cloth 100 springs across: one more per doubling (solver_xpbd.py)
    max_speed: float = 1.0e3  # m/s; a free point faster than this counts as an explosion
    max_stretch: float = 10.0  # a structural spring longer than this x rest = explosion
    self_collision: bool = False
    self_distance: float = 0.015

    @classmethod
    def cloth(cls, **changes: object) -> SimSettings:
        """Cloth defaults (XPBD, 12 substeps at 24 fps) with ``changes`` applied."""
        return replace(cls(), **changes)  # type: ignore[arg-type]

    @classmethod
    def soft_body(cls, **changes: object) -> SimSettings:
        """Soft-body defaults: few substeps, no tethers, a firm pull back to shape."""
        base = cls(kind="SOFT", substeps=3, tethers=False, shape_stiffness=0.5, drag=3.0)
        return replace(base, **changes)  # type: ignore[arg-type]

    def validated(self) -> tuple[SimSettings, list[str]]:
        """A copy with out-of-range values clamped, and what was changed."""
        notes: list[str] = []
        out = replace(self)

        def clamp(name: str, lo: float, hi: float, fallback: float) -> None:
            value = float(getattr(out, name))
            fixed = fallback if not np.isfinite(value) else min(max(value, lo), hi)
            if fixed != value:
                notes.append(f"setting {name}={value} out of range, using {fixed}")
                setattr(out, name, fixed)

        for name in ("stiffness", "shear_stiffness", "bend_stiffness"):
            clamp(name, 0.0, 1.0e12, 0.0)
        for name in ("spring_damping", "damping", "drag", "collision_margin", "self_distance"):
            clamp(name, 0.0, 1.0e9, 0.0)
        clamp("shape_stiffness", 0.0, 1.0, 0.0)
        clamp("friction", 0.0, 1.0, 0.0)
        clamp("fps", 1.0e-3, 1.0e4, 24.0)
        clamp("max_speed", 1.0e-6, 1.0e12, 1.0e3)
        clamp("max_stretch", 1.0, 1.0e12, 10.0)
        if int(out.substeps) < 1:
            notes.append(f"setting substeps={out.substeps} out of range, using 1")
            out.substeps = 1
        out.substeps = int(out.substeps)
        out.tether_pins = max(1, int(out.tether_pins))
        out.stretch_limit_levels = min(max(0, int(out.stretch_limit_levels)), 8)
        for name in ("gravity", "wind"):
            vec = np.array(getattr(out, name), dtype=np.float64).reshape(-1)
            if vec.size != 3 or not np.isfinite(vec).all():
                notes.append(f"setting {name} invalid, using zero")
                vec = np.zeros(3)
            setattr(out, name, vec)
        if out.kind not in ("CLOTH", "SOFT"):
            notes.append(f"unknown kind {out.kind!r}, using CLOTH")
            out.kind = "CLOTH"
        if out.solver not in ("XPBD", "CLASSIC"):
            notes.append(f"unknown solver {out.solver!r}, using XPBD")
            out.solver = "XPBD"
        return out, notes
