"""Cloth data on a Blender mesh: masses as a vertex group, springs as marked (loose) edges."""

from __future__ import annotations

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene.cloth.data import (  # noqa: E402
    DAMPING_GROUP,
    MASS_GROUP,
    PIN_GROUP,
    SPRING_ATTRIBUTE,
    STIFFNESS_GROUP,
    apply_cloth_data,
    group_weights,
    groups_weights,
    mesh_edges,
    read_cloth_inputs,
)
from xof.addon.sim.model import SpringKind  # noqa: E402
from xof.addon.xfile.views.model import ClothData  # noqa: E402

from ..cloth_fixtures import grid_object  # noqa: E402

pytestmark = pytest.mark.blender


@pytest.fixture
def grid3():
    """A 3 x 3 vertex grid (2 x 2 quads): 12 edges, vertices 0..8 row by row."""
    bpy.ops.wm.read_homefile(use_empty=True)
    return grid_object(bpy, "Grid", 3, 3)


def marked(obj) -> set[tuple[int, int]]:
    flags = np.zeros(len(obj.data.edges), dtype=bool)
    obj.data.attributes[SPRING_ATTRIBUTE].data.foreach_get("value", flags)
    return {tuple(sorted(e)) for e in mesh_edges(obj.data)[flags].tolist()}


def test_masses_become_the_mass_group(grid3) -> None:
    masses = np.array([0.0, 1.0, 0.0, 0.5, 1.0, 1.0, 0.25, 1.0, 0.75])
    warnings = apply_cloth_data(grid3, ClothData(masses=masses, springs=None))
    assert warnings == []
    np.testing.assert_allclose(group_weights(grid3, MASS_GROUP, -1.0), masses)
    for name in (STIFFNESS_GROUP, DAMPING_GROUP):
        np.testing.assert_array_equal(group_weights(grid3, name, -1.0), np.ones(9))


def test_pins_also_go_to_a_pin_group_in_blenders_convention(grid3) -> None:
    masses = np.array([0.0, 0.5, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0, 0.0])
    apply_cloth_data(grid3, ClothData(masses=masses, springs=None))
    group = grid3.vertex_groups[PIN_GROUP]
    members = {
        v.index: e.weight for v in grid3.data.vertices for e in v.groups if e.group == group.index
    }
    assert members == {0: 1.0, 3: 1.0, 8: 1.0}  # weight 1 = pinned, as Blender's Cloth reads it
    np.testing.assert_array_equal(group_weights(grid3, MASS_GROUP, 1.0), masses)  # unchanged


def test_without_masses_every_point_weighs_one(grid3) -> None:
    apply_cloth_data(grid3, ClothData(masses=None, springs=None))
    np.testing.assert_array_equal(group_weights(grid3, MASS_GROUP, -1.0), np.ones(9))
    inputs = read_cloth_inputs(grid3)
    np.testing.assert_array_equal(inputs.masses, np.ones(9))


def test_bad_masses_are_reported(grid3) -> None:
    masses = np.array([2.0, -1.0, np.nan, 1, 1, 1, 1, 1, 1])
    warnings = apply_cloth_data(grid3, ClothData(masses=masses, springs=None))
    assert len(warnings) == 2
    np.testing.assert_allclose(group_weights(grid3, MASS_GROUP, -1.0)[:3], [1.0, 0.0, 0.0])
    assert apply_cloth_data(grid3, ClothData(masses=np.ones(4), springs=None))  # wrong count


def test_without_springs_every_face_edge_is_marked(grid3) -> None:
    apply_cloth_data(grid3, ClothData(masses=None, springs=None))
    assert len(grid3.data.edges) == 12
    assert len(marked(grid3)) == 12
    inputs = read_cloth_inputs(grid3, springs_source="FILE")
    assert inputs.springs.shape == (12, 2)


def test_file_springs_mark_edges_and_add_loose_ones(grid3) -> None:
    # two face edges (one given twice, reversed), two pairs that are not edges, one bad pair
    springs = np.array([[0, 1], [1, 0], [0, 4], [2, 6], [3, 4], [5, 5]])
    warnings = apply_cloth_data(grid3, ClothData(masses=None, springs=springs))
    assert len(warnings) == 1  # the self-joined pair
    assert len(grid3.data.edges) == 12 + 2
    assert marked(grid3) == {(0, 1), (0, 4), (2, 6), (3, 4)}
    file_inputs = read_cloth_inputs(grid3, springs_source="FILE")
    assert {tuple(p) for p in file_inputs.springs.tolist()} == {(0, 1), (0, 4), (2, 6), (3, 4)}
    face_inputs = read_cloth_inputs(grid3, springs_source="FACE_EDGES")
    assert face_inputs.springs.shape == (12, 2)  # loose edges are not face edges


def test_shear_and_bend_counts_on_a_3x3_grid(grid3) -> None:
    # by hand: 12 structural edges, 2 diagonals in each of 4 quads = 8 shear, and the
    # straight "skip one" pairs 0-2, 3-5, 6-8, 0-6, 1-7, 2-8 = 6 bend springs
    inputs = read_cloth_inputs(grid3, springs_source="FACE_EDGES", use_shear=True, use_bend=True)
    counts = np.bincount(inputs.kinds, minlength=3)
    assert counts.tolist() == [12, 8, 6]
    bend = inputs.springs[inputs.kinds == SpringKind.BEND]
    assert {tuple(p) for p in bend.tolist()} == {(0, 2), (3, 5), (6, 8), (0, 6), (1, 7), (2, 8)}
    keys = inputs.springs[:, 0] * 9 + inputs.springs[:, 1]
    assert np.unique(keys).size == keys.size


def test_cloth_data_survives_save_and_reload(grid3, tmp_path) -> None:
    masses = np.array([0.0, 1.0, 0.0, 0.5, 1.0, 1.0, 0.25, 1.0, 0.75])
    springs = np.array([[0, 1], [0, 4], [2, 6]])
    apply_cloth_data(grid3, ClothData(masses=masses, springs=springs))
    path = str(tmp_path / "cloth.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    bpy.ops.wm.open_mainfile(filepath=path)
    obj = bpy.data.objects["Grid"]
    np.testing.assert_allclose(group_weights(obj, MASS_GROUP, -1.0), masses)
    assert len(obj.data.edges) == 14
    assert marked(obj) == {(0, 1), (0, 4), (2, 6)}
    assert STIFFNESS_GROUP in obj.vertex_groups and DAMPING_GROUP in obj.vertex_groups


def test_several_groups_are_read_in_one_walk(grid3) -> None:
    a = grid3.vertex_groups.new(name="a")
    b = grid3.vertex_groups.new(name="b")
    a.add([0, 4], 0.25, "REPLACE")
    b.add([4, 8], 0.75, "REPLACE")
    b.add([1], 0.0, "REPLACE")  # a member with weight 0 is not outside the group
    wa, wb, missing, again = groups_weights(grid3, ["a", "b", "nope", "a"], -1.0)
    assert wa.tolist() == [0.25, -1, -1, -1, 0.25, -1, -1, -1, -1]
    assert wb.tolist() == [-1, 0.0, -1, -1, 0.75, -1, -1, -1, 0.75]
    assert missing is None and np.array_equal(again, wa) and again is not wa
    assert np.array_equal(group_weights(grid3, "b", -1.0), wb)
