"""Cloth and soft-body solvers: numpy only, no bpy. The Blender side drives them per frame.

Rooms: ``mesh/`` (springs, neighbours, rows, triangle geometry), ``xpbd/`` (the default
solver: build, colouring, limiters, tethers, constraint pass, merge), ``classic/`` (the book's
solver), ``collide/`` (colliders, the mesh collider and its broad phase), ``self_collide/``,
``many/`` (the World and its helper processes); model, settings, simulator and guard here.
This module is the only door the rest of xof uses.

Contract (Z up, metres, seconds; ``N`` points, ``P`` of them pinned). One convention for
space: the model's rest shape is in the object's space, and every frame the simulator is given
the object's ``matrix_world``; everything else (state, pins, colliders, results) is in world
space.

Springs (``mesh/springs.py``), pure index work, every result ``(k, 2) int64`` with ``i < j``,
sorted, no duplicates:
    ``face_edges(face_sizes, corners)``: unique face edges (one spring per edge);
    ``shear_springs(face_sizes, corners)``: non-adjacent corner pairs of faces with 4+ corners;
    ``bend_springs(face_sizes, corners, positions, exclude=None)``: neighbours lying opposite
    through a shared vertex (angle wider than 135 degrees), never a structural/shear pair;
    ``merge_springs(*arrays)`` / ``merge_with_kinds(structural, shear, bend)``: union keeping
    first occurrences, the latter also returns each pair's source index = ``SpringKind``.

Model (``model.py``): ``ClothModel(rest_positions (N,3), masses (N,), springs (S,2),
kinds (S,) uint8 = SpringKind, stiffness_scale (N,)=None, damping_scale (N,)=None,
face_sizes=None, face_corners=None, matrix=None)``: ``rest_positions`` in object space,
``matrix`` the object's ``matrix_world`` when it is built (None: identity). Rest lengths,
tethers and limiters are measured on ``model.rest_world`` (``matrix @ rest_positions``).
Mass <= 0, negative or non-finite pins the point (non-zero bad values are reported in
``model.warnings``); bad springs are dropped (reported). ``model.pinned`` ``(N,)`` bool;
``Simulator.pinned_ids``: its indices, ascending (the order of pinned targets).

Settings (``settings.py``): ``SimSettings`` (see its docstring for units);
``SimSettings.cloth(**changes)`` and ``SimSettings.soft_body(**changes)`` give defaults.

Colliders (``collide/colliders.py``): ``Sphere(center, radius, friction=None)``,
``Plane(point, normal, friction=None)``; ``friction=None`` uses the settings' friction.
``MeshCollider(vertices (V, 3), triangles (T, 3), previous=None, outer=0.02, inner=0.0,
friction=None)`` (``collide/mesh_collider.py``): a triangle surface in world space, moving from
``previous`` to ``vertices`` over the coming frame (``move_to(vertices)`` next frame: the
current pose becomes the previous one); points are kept ``outer + collision_margin`` in
front of it, one-sided when ``inner > 0`` (the front is where counter-clockwise faces
point; points up to ``inner`` behind are pushed out), else two-sided (each point stays on
its side); a swept test catches points the moving surface passed within a substep.
Sphere and plane are values: one that moves is a new object (a helper process's copy of a
collider is sent again when the object, or its ``version``, changes).

A new collider kind is one class in a new module of ``collide/`` (exported here), a
subclass of ``Collider`` (``collide/colliders.py``, whose docstring says what each method is
asked) that writes:
- ``contacts(pos, margin, scratch=None)`` -> ``(indices (k,), outward normals (3, k), push
  (k,))`` for the points of ``pos`` (the solver's ``(N, 4)`` rows) within ``margin`` of
  it; the push with friction (XPBD) and the velocity answer (classic) come from the base;
- ``reach(margin)`` -> the ``(2, 3)`` box it can push points in this frame (the default
  None, anywhere, is right but lets a World never skip it);
- when it moves within a frame: ``begin_substep(t0, t1)``, and its own
  ``resolve_positions`` when the push needs that motion (as ``MeshCollider``);
- when it changes in place between frames: a ``version`` that changes with it, and
  ``update_since(version)`` / ``apply_update(update)`` to bring a helper process's copy up
  to date (without them the copy is sent whole at each change); ``helper_copy()`` when it
  keeps caches that belong to this process's points.
The solvers, the World's merge (``xpbd/merge.py``) and the helper processes (``many/``) ask
nothing else, so nothing else changes; ``tests/sim/test_collider_kind.py`` shows a box.
Self-collision (``self_collide/self_collision.py``): ``SimSettings(self_collision=True,
self_distance=0.015)`` with the cloth's triangles given as ``Simulator(model, settings,
triangles=(T, 3))``, XPBD only (such an object is stepped on its own by a ``World``); each
substep it comes after the colliders (a collider's push can lay two layers of a fold on its
surface together; self-collision then keeps them from crossing).

Simulator (``simulator.py``): ``Simulator(model, settings, report=None, triangles=None)``
(``report(stage)`` is told each build stage, for a progress bar; ``triangles`` ``(T, 3)``:
the cloth's own, for self-collision)
    ``reset(positions=None)``: back to ``positions`` (world space; default
    ``model.rest_world``) with zero velocity;
    ``step(frame_dt=None, pinned_targets=None, object_matrix=None, colliders=(),
    shape_targets=None)`` -> ``StepResult(positions, warnings)``: positions ``(N, 3)``
    float32 C-contiguous (a new array), and the frame's warnings (the same texts are also
    appended to ``warnings``, up to a cap; a caller reports these, never diffs the list).
    ``frame_dt`` defaults to ``1 / fps``. ``object_matrix`` (4, 4), column-vector convention:
    the object's ``matrix_world`` this frame as a numpy array (None: still the model's
    ``matrix``). ``pinned_targets`` ``(P, 3)``: where the pinned points (in the order of
    ``pinned_ids``) must be at the end of this frame, in world space (they move there at
    constant speed over the substeps), e.g. the evaluated/skinned mesh's pinned points
    through ``matrix_world``; without them the pins follow ``object_matrix @ rest`` (and stay
    where they are without either). A soft body is pulled toward ``object_matrix @ rest``,
    or toward ``shape_targets`` ``(N, 3)`` (world space) when given: the evaluated, e.g.
    skinned, mesh;
    ``state()`` -> ``(positions, velocities)`` copies, each ``(N, 3)``;
    ``set_state(positions, velocities)``: resume from a cached frame;
    ``warnings``: list of str (model and settings problems, recoveries; capped);
    ``recoveries``: int.
Never returns NaN or an exploded state: after every frame a non-finite state, a free point
faster than ``settings.max_speed`` or a structural spring longer than ``settings.max_stretch``
x rest (a zero-length spring: x the median rest length of the moving ones) makes it
restore the last good positions with zero velocity and add a warning.

Never returns a point that moved faster than ``max_speed`` over the frame either (a
constraint may snap a point far within a frame and leave it slow at its end), with one
exception: pins that jump farther in a frame than the cloth can follow (half of
``max_speed`` x the frame step) carry the whole cloth rigidly with them (the best-fit
rotation and shift of the pins, ``rigid_carry.py``), then the frame is simulated; a recovery
also carries the last good state to the pins' new place.

Solvers: ``XpbdSolver`` (``xpbd/solver.py``; the default: small-step XPBD, colour-grouped
Gauss-Seidel, tethers to pins, long-range stretch limiters for cloth:
``SimSettings.stretch_limit_levels``, see ``xpbd/limiters.py``) and ``ClassicSolver``
(``classic/solver.py``: the book's explicit mass-spring
model). Building a ``Simulator`` colours the springs and computes tethers and limiters
(build times: tests/bench/README.md); ``update_settings(settings)`` keeps the state and
that build when only values change (stiffness, damping, gravity, wind ...), and rebuilds
what the new settings change otherwise. ``SimSettings.book()`` gives the book's model.

World (``many/world.py``): ``World(simulators)`` steps several objects a frame at a time,
``step([ObjectFrame(pinned_targets, object_matrix, colliders, shape_targets), ...])`` -> a
``StepResult`` per object (``steps(...)`` yields them batch by batch as they are ready); the
XPBD ones sharing a substep length are solved in one merged pass, each object getting exactly
what stepping it alone gives. ``update_settings(i, settings)``.
"""

from .collide.colliders import Collider, Plane, Sphere
from .collide.mesh_collider import MeshCollider
from .many.parallel import shutdown as shutdown_helpers
from .many.world import ObjectFrame, World
from .mesh.affine import affine_inverse, transform_points
from .mesh.springs import bend_springs, face_edges, merge_springs, merge_with_kinds, shear_springs
from .model import ClothModel, SpringKind
from .settings import MAX_FRAME_SUBSTEPS, SimSettings
from .simulator import Simulator, StepResult
from .xpbd.build import BUILD_STAGES

__all__ = [
    "BUILD_STAGES",
    "MAX_FRAME_SUBSTEPS",
    "ClothModel",
    "Collider",
    "MeshCollider",
    "ObjectFrame",
    "Plane",
    "SimSettings",
    "Simulator",
    "Sphere",
    "SpringKind",
    "StepResult",
    "World",
    "affine_inverse",
    "bend_springs",
    "face_edges",
    "merge_springs",
    "merge_with_kinds",
    "shear_springs",
    "shutdown_helpers",
    "transform_points",
]
