"""The per-object simulation cache: one full solver state per simulated frame.

Pure numpy (no bpy) so it can be tested and serialised anywhere. A frame keeps what is shown
(object-space positions, written to the mesh as they are), the solver's velocities and the
object's world matrix at that frame, so playback can resume from ANY cached frame: after
scrubbing back, after a setting change, or after the .blend is reopened (the whole cache
serialises to one ``bytes`` blob that fits in an ID property).
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass

import numpy as np

from ...sim import transform_points

MAGIC = b"XOFCACHE"
_VERSION = 2
_HEADER = struct.Struct("<8sII")  # magic, version, json length


@dataclass
class CachedFrame:
    positions: np.ndarray  # (N, 3) float32, object space, exactly what the mesh shows
    velocities: np.ndarray  # (N, 3) float32, world space
    matrix: np.ndarray  # (4, 4) float64 object world matrix at that frame

    def world_positions(self) -> np.ndarray:
        """The solver's positions (world space) to resume from."""
        return transform_points(self.matrix, self.positions)


class FrameCache:
    """Cached frames by frame number, all with ``vertex_count`` points."""

    def __init__(self, vertex_count: int) -> None:
        self.vertex_count = int(vertex_count)
        self.frames: dict[int, CachedFrame] = {}
        self.dropped: list[int] = []  # frames ``from_bytes`` left out (NaN or inf in them)

    def __contains__(self, frame: int) -> bool:
        return frame in self.frames

    def __len__(self) -> int:
        return len(self.frames)

    def store(
        self, frame: int, positions: np.ndarray, velocities: np.ndarray, matrix: np.ndarray
    ) -> CachedFrame:
        """Keep a frame (arrays copied, as float32)."""
        pos = np.array(positions, dtype=np.float32, copy=True).reshape(-1, 3)
        vel = np.array(velocities, dtype=np.float32, copy=True).reshape(-1, 3)
        if pos.shape[0] != self.vertex_count or vel.shape[0] != self.vertex_count:
            raise ValueError(f"{pos.shape[0]} points for a {self.vertex_count}-point cache")
        entry = CachedFrame(pos, vel, np.array(matrix, dtype=np.float64).reshape(4, 4))
        self.frames[int(frame)] = entry
        return entry

    def get(self, frame: int) -> CachedFrame | None:
        return self.frames.get(int(frame))

    def drop_after(self, frame: int) -> None:
        """Forget frames later than ``frame`` (they no longer follow from it)."""
        for f in [f for f in self.frames if f > frame]:
            del self.frames[f]

    def clear(self) -> None:
        self.frames.clear()

    def frame_range(self) -> tuple[int, int] | None:
        return (min(self.frames), max(self.frames)) if self.frames else None

    # -- serialisation ------------------------------------------------------------------------

    def to_bytes(self) -> bytes:
        """One blob: header, JSON index (frames and matrices), then raw float32 arrays."""
        frames = sorted(self.frames)
        index = {
            "vertex_count": self.vertex_count,
            "frames": frames,
            "matrices": [self.frames[f].matrix.reshape(-1).tolist() for f in frames],
        }
        meta = json.dumps(index).encode("utf-8")
        parts = [_HEADER.pack(MAGIC, _VERSION, len(meta)), meta]
        for f in frames:
            parts.append(self.frames[f].positions.astype("<f4", copy=False).tobytes())
            parts.append(self.frames[f].velocities.astype("<f4", copy=False).tobytes())
        return b"".join(parts)

    @classmethod
    def from_bytes(cls, blob: bytes) -> FrameCache:
        """Inverse of ``to_bytes``; raises ValueError on anything malformed. A frame with a
        NaN or inf (positions, velocities or matrix: a damaged or tampered file) is left out
        and listed in ``dropped``; playback simulates it again."""
        if len(blob) < _HEADER.size:
            raise ValueError("cache blob too short")
        magic, version, meta_len = _HEADER.unpack_from(blob, 0)
        if magic != MAGIC or version != _VERSION:
            raise ValueError("not an xof cache blob (or another version)")
        start = _HEADER.size
        try:
            index = json.loads(bytes(blob[start : start + meta_len]).decode("utf-8"))
            count = int(index["vertex_count"])
            frames = [int(f) for f in index["frames"]]
            matrices = np.array(index["matrices"], dtype=np.float64).reshape(len(frames), 4, 4)
        except (UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError) as exc:
            raise ValueError(f"bad cache index: {exc}") from exc
        size = count * 3 * 4
        offset = start + meta_len
        if len(blob) != offset + 2 * len(frames) * size:
            raise ValueError("cache blob size does not match its index")
        data = np.frombuffer(blob, dtype="<f4", offset=offset).reshape(-1, count, 3)
        finite = np.isfinite(data.reshape(len(frames), -1)).all(axis=1)
        finite &= np.isfinite(matrices.reshape(len(frames), -1)).all(axis=1)
        cache = cls(count)
        for i, f in enumerate(frames):
            if finite[i]:
                cache.store(f, data[2 * i], data[2 * i + 1], matrices[i])
            else:
                cache.dropped.append(f)
        return cache
