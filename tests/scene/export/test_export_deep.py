"""Deep hierarchies export and read back (issue 34 item 6): a 255-level hierarchy, 300 nested
empties or a 300-bone chain (a rope, a tail) exported fine and failed on re-import ("deeper
than 256 levels"). The reader now reads 10,000 levels; the walks of the import and the export
keep their open levels on lists, so 1,500 levels (past Python's recursion limit of 1,000)
go through as a flat scene does."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from xof.addon.scene.export.exporter import export_scene  # noqa: E402
from xof.addon.scene.export.plan.options import ExportOptions  # noqa: E402
from xof.addon.scene.importer import ImportOptions, import_files  # noqa: E402

from ..scene_fixtures import reset_blender  # noqa: E402

pytestmark = pytest.mark.blender

STEP = 0.1  # each level sits this far above its parent (Blender Z)


def empty_chain(levels: int) -> list[bpy.types.Object]:
    chain: list[bpy.types.Object] = []
    for i in range(levels):
        obj = bpy.data.objects.new(f"Link{i:04d}", None)
        bpy.context.collection.objects.link(obj)
        if chain:
            obj.parent = chain[-1]
            obj.location = (0.0, 0.0, STEP)
        chain.append(obj)
    return chain


def chain_of(root: bpy.types.Object) -> list[bpy.types.Object]:
    out = [root]
    while out[-1].children:
        (child,) = out[-1].children
        out.append(child)
    return out


@pytest.mark.parametrize(("levels", "fmt"), [(300, "txt"), (1500, "bin")])
def test_nested_empties_export_and_read_back(levels: int, fmt: str, tmp_path: Path) -> None:
    if levels > 1000:
        assert sys.getrecursionlimit() <= levels  # a recursive walk could not do it
    reset_blender()
    empty_chain(levels)
    target = tmp_path / "rope.x"
    result = export_scene(str(target), ExportOptions(format=fmt))
    assert result.frames == levels
    reset_blender()
    import_files([target])
    roots = [o for o in bpy.data.objects if o.parent is None]
    assert [o.name for o in roots] == ["Link0000"]
    chain = chain_of(roots[0])
    assert [o.name for o in chain] == [f"Link{i:04d}" for i in range(levels)]
    bpy.context.view_layer.update()
    tip = np.array(chain[-1].matrix_world.translation)
    np.testing.assert_allclose(tip, [0.0, 0.0, STEP * (levels - 1)], atol=1e-4 * levels)


def test_a_300_bone_chain_exports_and_reads_back(tmp_path: Path) -> None:
    reset_blender()
    data = bpy.data.armatures.new("Tail")
    arm = bpy.data.objects.new("Tail", data)
    bpy.context.collection.objects.link(arm)
    bpy.context.view_layer.objects.active = arm
    bpy.ops.object.mode_set(mode="EDIT")
    previous = None
    for i in range(300):
        bone = data.edit_bones.new(f"Bone{i:03d}")
        bone.head = (0.0, 0.0, STEP * i)
        bone.tail = (0.0, 0.0, STEP * (i + 1))
        bone.parent = previous
        bone.use_connect = previous is not None
        previous = bone
    bpy.ops.object.mode_set(mode="OBJECT")
    target = tmp_path / "Tail.x"  # named as the armature: no frame of its name above the bones
    export_scene(str(target))
    reset_blender()
    import_files([target], ImportOptions(every_frame=True))
    (armature,) = bpy.data.armatures
    assert len(armature.bones) == 300
    tip = armature.bones["Bone299"]
    depth = 0
    bone = tip
    while bone.parent is not None:
        bone, depth = bone.parent, depth + 1
    assert depth == 299
    np.testing.assert_allclose(np.array(tip.head_local), [0.0, 0.0, STEP * 299], atol=1e-3)


def test_a_5000_deep_chain_of_unknown_objects_is_kept_32_levels_deep(tmp_path: Path) -> None:
    """Objects the importer does not interpret are kept as JSON (``xof_extras``): a chain of
    5,000 nested ones, which the reader now reads, ended the import in a RecursionError; the
    first 32 levels are kept and the rest counted."""
    import json

    from xof.addon.scene.imp.extras import MAX_NESTING

    reset_blender()
    depth = 5000
    path = tmp_path / "extras.x"
    path.write_text(
        "xof 0303txt 0032\nFrame F { Mesh { 3; 0;0;0;, 1;0;0;, 0;1;0;; 1; 3;0,1,2;; }\n"
        + "Foo { 1; " * depth
        + "}" * depth
        + "}\n",
        encoding="ascii",
    )
    result = import_files([path])
    assert result.extras == ["Foo x1 (kept as custom property xof_extras)"]
    (kept,) = json.loads(bpy.data.objects["F"]["xof_extras"])
    levels = 1
    while "children" in kept:
        (kept,) = kept["children"]
        levels += 1
    assert levels == MAX_NESTING + 1 == 33
    assert kept["children not kept"] == f"{depth - 33} nested object(s) past 32 levels"
