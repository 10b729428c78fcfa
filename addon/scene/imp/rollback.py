"""Leave ``bpy.data`` exactly as before when an import fails.

A snapshot records every ID in every ``bpy.data`` collection; ``remove_new`` deletes whatever
appeared since (objects, meshes, materials, images, collections, actions, shape keys...), so a
failed import never leaves half-built data behind, whoever created it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import bpy

Snapshot = dict[str, set[int]]


def _derives_from_id(struct: object) -> bool:
    while struct is not None:
        if getattr(struct, "identifier", None) == "ID":
            return True
        struct = getattr(struct, "base", None)
    return False


def id_collections() -> list[str]:
    """Names of the ``bpy.data`` collections that hold IDs."""
    return [
        prop.identifier
        for prop in bpy.types.BlendData.bl_rna.properties
        if prop.type == "COLLECTION" and _derives_from_id(getattr(prop, "fixed_type", None))
    ]


def snapshot() -> Snapshot:
    return {
        name: {idb.as_pointer() for idb in getattr(bpy.data, name)} for name in id_collections()
    }


def counts() -> dict[str, int]:
    """Number of IDs per ``bpy.data`` collection (what the tests compare)."""
    return {name: len(getattr(bpy.data, name)) for name in id_collections()}


def new_ids(before: Snapshot) -> list[bpy.types.ID]:
    out: list[bpy.types.ID] = []
    for name in id_collections():
        seen = before.get(name, set())
        out.extend(idb for idb in getattr(bpy.data, name) if idb.as_pointer() not in seen)
    return out


def remove_new(before: Snapshot) -> int:
    """Delete every ID created since ``before``; returns how many were removed."""
    doomed = new_ids(before)
    if not doomed:
        return 0
    try:
        bpy.data.batch_remove(doomed)
    except (RuntimeError, TypeError, ReferenceError):
        for idb in doomed:  # one by one: some types refuse batch removal
            _remove_one(idb)
    left = new_ids(before)
    for idb in left:
        _remove_one(idb)
    return len(doomed)


def _remove_one(idb: bpy.types.ID) -> None:
    for name in id_collections():
        coll = getattr(bpy.data, name)
        try:
            if idb.as_pointer() in {i.as_pointer() for i in coll}:
                coll.remove(idb)
                return
        except (RuntimeError, ReferenceError, TypeError, AttributeError):
            return


@contextmanager
def transaction() -> Iterator[Snapshot]:
    """Run a block; if it raises, remove every ID it created, then re-raise."""
    before = snapshot()
    try:
        yield before
    except BaseException:
        remove_new(before)
        raise
