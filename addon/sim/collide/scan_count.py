"""How much candidate work the collision queries do, and how much of it is kept (benchmarks).

A broad phase is measured by what it keeps: every pair it scans costs, only the pairs that
come within reach are useful. The queries add to ``SCANS`` as they run (in this process; a
helper process counts its own): the benchmarks read it before and after a frame and print
the kept share. Counting is a few integer additions a query, so it is always on.
"""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass
class ScanCount:
    """Running totals of candidate pairs, per stage of the mesh collider's and the
    self-collision's queries."""

    # mesh colliders: point-box pairs read from the grid's cells, those inside the box,
    # those that got a closest point, candidate pairs kept, and contacts made (per substep)
    mesh_scanned: int = 0
    mesh_in_box: int = 0
    mesh_closest: int = 0
    mesh_kept: int = 0
    mesh_contacts: int = 0
    # self-collision: point-leaf pairs tested, point-triangle pairs tested against the
    # triangles' spheres, closest points, pairs kept, and contacts made (per substep)
    self_point_leaf: int = 0
    self_spheres: int = 0
    self_closest: int = 0
    self_kept: int = 0
    self_contacts: int = 0

    def copy(self) -> ScanCount:
        return ScanCount(**{f.name: getattr(self, f.name) for f in fields(self)})

    def since(self, before: ScanCount) -> ScanCount:
        """The counts added after ``before`` (a ``copy`` taken then)."""
        return ScanCount(
            **{f.name: getattr(self, f.name) - getattr(before, f.name) for f in fields(self)}
        )


SCANS = ScanCount()


def kept_share(kept: int, scanned: int) -> float:
    """``kept / scanned`` (0 when nothing was scanned)."""
    return kept / scanned if scanned else 0.0


def scan_report(count: ScanCount, frames: int) -> str:
    """Two lines for a benchmark: each stage's pairs a frame and the kept share of scanned."""
    per = max(frames, 1)
    mesh = (
        f"mesh colliders, a frame: {count.mesh_scanned / per:,.0f} scanned, "
        f"{count.mesh_in_box / per:,.0f} in a box, {count.mesh_closest / per:,.0f} closest "
        f"points, {count.mesh_kept / per:,.0f} kept "
        f"({100 * kept_share(count.mesh_kept, count.mesh_scanned):.1f} % of scanned), "
        f"{count.mesh_contacts / per:,.0f} contacts"
    )
    own = (
        f"self-collision, a frame: {count.self_point_leaf / per:,.0f} point-leaf, "
        f"{count.self_spheres / per:,.0f} sphere tests, {count.self_closest / per:,.0f} closest "
        f"points, {count.self_kept / per:,.0f} kept "
        f"({100 * kept_share(count.self_kept, count.self_point_leaf):.1f} % of point-leaf), "
        f"{count.self_contacts / per:,.0f} contacts"
    )
    return f"{mesh}\n{own}"
