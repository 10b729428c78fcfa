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
- ``wind``: with ``wind_model`` ``"UNIFORM"`` a force (N) added to every free point; with
  ``"FACE"`` the book's per-face push ``n * dot(n, wind)`` (``n`` the face's unit normal, so
  a face edge-on to the wind feels nothing and the cloth flutters), shared equally among
  the face's corners (``wind.py``).
- ``time_scale``: the speed multiplier (Blender Cloth's Speed): each frame advances the
  simulation by ``time_scale / fps`` seconds.
- ``substeps``: solver steps a frame, 1 to ``MAX_FRAME_SUBSTEPS`` (a hard maximum: more is
  clamped, with a note, as any out-of-range value).
- ``max_substeps``: classic only: the explicit stability bound (``classic/stability.py``) raises the
  substeps up to this many; stiffer springs than that allows are softened, with a warning.
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
WindModel = Literal["UNIFORM", "FACE"]
WIND_MODELS = ("UNIFORM", "FACE")
# The book's cloth constants (spring and damper per spring, gravity in its Y-up world turned
# to Z up); its meshes use the D3D unit as the metre and mass 1 per point.
BOOK_STIFFNESS = 8.0
BOOK_SPRING_DAMPING = 0.5
BOOK_GRAVITY = (0.0, 0.0, -9.8)
MAX_SUBSTEPS = 10_000  # the classic solver's stability bound may raise substeps this far
# Substeps a frame the user may ask for (Blender's Cloth caps its Quality at 80): at 0.75 ms a
# substep on a 100-point flag, 100,000 took 75 s a frame and 1e9 never ended.
MAX_FRAME_SUBSTEPS = 1_000


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
    wind_model: WindModel = "UNIFORM"
    time_scale: float = 1.0
    max_substeps: int = 400
    drag: float = 0.5
    substeps: int = 12
    shape_stiffness: float = 0.5
    friction: float = 0.3
    collision_margin: float = 0.005
    fps: float = 24.0
    tethers: bool = True  # XPBD: keep free points within their rest distance of the pins
    tether_pins: int = 2  # how many nearest pins each free point is tethered to
    stretch_limit_levels: int = 3  # XPBD cloth: limiters over 2, 4, 8 ... springs (0 = none),
    # counted for a cloth 100 springs across: one more per doubling; coarse cloth stops at
    # the level spanning a fifth of it (xpbd/build.py: limiter_level_count)
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

    @classmethod
    def book(cls, **changes: object) -> SimSettings:
        """The book's model: classic solver, its spring constants and gravity, no air drag."""
        base = cls(
            solver="CLASSIC",
            stiffness=BOOK_STIFFNESS,
            shear_stiffness=BOOK_STIFFNESS,
            bend_stiffness=BOOK_STIFFNESS,
            spring_damping=BOOK_SPRING_DAMPING,
            damping=0.0,
            drag=0.0,
            gravity=_vec(*BOOK_GRAVITY),
            wind_model="FACE",
            substeps=1,
            tethers=False,
            stretch_limit_levels=0,
        )
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
        clamp("time_scale", 1.0e-3, 1.0e3, 1.0)
        if not 1 <= int(out.max_substeps) <= MAX_SUBSTEPS:
            fixed = min(max(int(out.max_substeps), 1), MAX_SUBSTEPS)
            notes.append(f"setting max_substeps={out.max_substeps} out of range, using {fixed}")
            out.max_substeps = fixed
        out.max_substeps = int(out.max_substeps)
        if not 1 <= int(out.substeps) <= MAX_FRAME_SUBSTEPS:
            fixed = min(max(int(out.substeps), 1), MAX_FRAME_SUBSTEPS)
            notes.append(f"setting substeps={out.substeps} out of range, using {fixed}")
            out.substeps = fixed
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
        if out.wind_model not in WIND_MODELS:
            notes.append(f"unknown wind model {out.wind_model!r}, using UNIFORM")
            out.wind_model = "UNIFORM"
        if out.solver not in ("XPBD", "CLASSIC"):
            notes.append(f"unknown solver {out.solver!r}, using XPBD")
            out.solver = "XPBD"
        return out, notes
