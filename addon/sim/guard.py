"""Explosion detection: a state is bad if it is non-finite, too fast or torn apart.

Checked once per frame on the solver's ``(N, 4)`` storage, cheap enough to always run: the
extremes of the state (a NaN or an infinity shows there), the fastest free point, and the
longest structural spring that has a free end (springs between two pinned points follow the
animation, not the solver). Float32 rows are gathered as one 16-byte item each, and every
work array is kept between frames (a fresh array over ~128 KB is mapped and faulted in on
each call, which cost more than the check), so the check stays a small part of a frame.
"""

from __future__ import annotations

import numpy as np

from .mesh.rows import squared_lengths
from .model import ClothModel, SpringKind, rows_of


def _finite(rows: np.ndarray) -> bool:
    """No NaN or infinity in ``rows`` (both reductions propagate them; no mask is built)."""
    return rows.size == 0 or bool(np.isfinite(rows.max()) and np.isfinite(rows.min()))


class ExplosionGuard:
    def __init__(self, model: ClothModel, max_speed: float, max_stretch: float) -> None:
        free = ~model.pinned
        structural = np.flatnonzero(model.kinds == SpringKind.STRUCTURAL)
        ends = rows_of(model.springs, structural)  # only these are looked at
        first = np.ascontiguousarray(ends[:, 0], dtype=np.intp)
        second = np.ascontiguousarray(ends[:, 1], dtype=np.intp)
        del ends
        watched = free[first]
        watched |= free[second]
        if watched.all():
            self.a, self.b = first, second
            rest = rows_of(model.rest_lengths, structural)
        else:
            self.a, self.b = first[watched], second[watched]
            rest = model.rest_lengths[structural[watched]]
        typical = float(np.median(rest)) if rest.size else 0.0
        # zero-length rest springs are judged against the typical length instead
        self.inverse_limit_squared = 1.0 / ((max_stretch * np.maximum(rest, typical)) ** 2 + 1e-12)
        self.free = free
        self.any_free = bool(free.any())
        self.max_speed_squared = max_speed * max_speed
        self._work: dict[np.dtype, tuple[np.ndarray, np.ndarray]] = {}
        self._spring_work: dict[np.dtype, tuple[np.ndarray, ...]] = {}
        self._free_scale: dict[np.dtype, np.ndarray] = {}

    @classmethod
    def merged(cls, guards: list[ExplosionGuard], offsets: list[int]) -> ExplosionGuard:
        """One guard over objects laid end to end (object ``i`` from row ``offsets[i]``),
        all with the same speed limit: it finds no problem exactly when none of them does."""
        out = cls.__new__(cls)
        out.a = np.concatenate([g.a + off for g, off in zip(guards, offsets, strict=True)])
        out.b = np.concatenate([g.b + off for g, off in zip(guards, offsets, strict=True)])
        out.inverse_limit_squared = np.concatenate([g.inverse_limit_squared for g in guards])
        out.free = np.concatenate([g.free for g in guards])
        out.any_free = bool(out.free.any())
        out.max_speed_squared = guards[0].max_speed_squared
        out._work = {}
        out._spring_work = {}
        out._free_scale = {}
        return out

    def _buffers(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(N,)`` and ``(N, 4)`` work arrays of the state's dtype, kept between frames."""
        work = self._work.get(rows.dtype)
        if work is None or work[1].shape != rows.shape:
            work = (np.empty(len(rows), rows.dtype), np.empty_like(rows))
            self._work[rows.dtype] = work
        return work

    def _fastest_free(self, rows: np.ndarray) -> float:
        """The largest squared length of a free point's row (0 without one).

        Pinned rows are scaled by 0 (an overflowing one gives NaN, which ``fmax`` skips):
        the same as a masked maximum at a quarter of its cost."""
        norms, square = self._buffers(rows)
        squared_lengths(rows, norms, square)
        scale = self._free_scale.get(rows.dtype)
        if scale is None:
            scale = self._free_scale[rows.dtype] = self.free.astype(rows.dtype)
        np.multiply(norms, scale, out=norms)
        return float(np.fmax.reduce(norms, initial=0.0))

    def _longest_stretch(self, pos: np.ndarray) -> float:
        """The largest ``(length / limit)^2`` of the watched springs."""
        work = self._spring_work.get(pos.dtype)
        if work is None or work[0].shape[0] != self.a.size:
            count = self.a.size
            work = (
                np.empty((count, 4), pos.dtype),
                np.empty((count, 4), pos.dtype),
                np.empty(count, pos.dtype),
                np.empty(count, np.result_type(pos.dtype, self.inverse_limit_squared)),
            )
            self._spring_work[pos.dtype] = work
        ends, starts, lengths, scaled = work
        if pos.dtype == np.float32 and pos.flags.c_contiguous:
            flat = pos.view(np.complex128).reshape(-1)
            np.take(flat, self.b, out=ends.view(np.complex128).reshape(-1), mode="clip")
            np.take(flat, self.a, out=starts.view(np.complex128).reshape(-1), mode="clip")
        else:
            np.take(pos, self.b, axis=0, out=ends, mode="clip")
            np.take(pos, self.a, axis=0, out=starts, mode="clip")
        ends -= starts
        squared_lengths(ends, lengths, starts)
        np.multiply(lengths, self.inverse_limit_squared, out=scaled)
        return float(scaled.max())

    def problem(
        self,
        pos: np.ndarray,
        vel: np.ndarray,
        start: np.ndarray | None = None,
        frame_dt: float = 0.0,
    ) -> str | None:
        """Why the ``(N, 4)`` state is unusable, or None when it is fine.

        With ``start`` (the positions at the start of the frame) and ``frame_dt``, a free
        point that moved faster than the limit over the frame also counts: a constraint can
        snap a point far in one substep and leave it slow by the end of the frame.
        """
        if not (_finite(pos) and _finite(vel)):
            return "non-finite positions or velocities"
        if self.any_free:
            fastest = self._fastest_free(vel)
            if start is not None and frame_dt > 0.0:
                moved = np.subtract(pos, start, out=self._buffers(pos)[1])
                fastest = max(fastest, self._fastest_free(moved) / frame_dt**2)
            if fastest > self.max_speed_squared:
                return f"a point moves at {fastest**0.5:.3g} m/s"
        if self.a.size and self._longest_stretch(pos) > 1.0:
            return "a spring is stretched beyond the limit"
        return None
