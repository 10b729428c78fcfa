"""Leave ``bpy.data`` and the scenes' settings exactly as before when an import fails.

A snapshot records every ID in every ``bpy.data`` collection; ``remove_new`` deletes whatever
appeared since (objects, meshes, materials, images, collections, actions, shape keys...), so a
failed import never leaves half-built data behind, whoever created it. The settings an import
may change on existing scenes (frame rate, frame range, current frame, Lock Interface) are
recorded too and put back.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import bpy

Snapshot = dict[str, set[int]]

#: Scene settings an import may change, as (owner, property) with owner "" (the scene) or
#: "render"; restored on every pre-existing scene when an import fails.
SCENE_SETTINGS: tuple[tuple[str, str], ...] = (
    ("", "frame_start"),
    ("", "frame_end"),
    ("", "frame_current"),
    ("", "frame_step"),
    ("", "use_preview_range"),
    ("", "frame_preview_start"),
    ("", "frame_preview_end"),
    ("render", "fps"),
    ("render", "fps_base"),
    ("render", "use_lock_interface"),
)
SceneSettings = dict[int, tuple[bpy.types.Scene, dict[tuple[str, str], object]]]


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


def scene_settings() -> SceneSettings:
    """The :data:`SCENE_SETTINGS` of every scene, keyed by the scene's pointer."""
    out: SceneSettings = {}
    for scene in bpy.data.scenes:
        values: dict[tuple[str, str], object] = {}
        for owner, prop in SCENE_SETTINGS:
            values[(owner, prop)] = getattr(getattr(scene, owner) if owner else scene, prop)
        out[scene.as_pointer()] = (scene, values)
    return out


def restore_scene_settings(saved: SceneSettings) -> None:
    """Put back what :func:`scene_settings` recorded, on the scenes that still exist."""
    alive = {scene.as_pointer() for scene in bpy.data.scenes}
    for pointer, (scene, values) in saved.items():
        if pointer not in alive:
            continue
        # the range first at its widest, so no start/end clamps the other on the way back
        scene.frame_start, scene.frame_end = 0, 1048574
        for (owner, prop), value in values.items():
            if (owner, prop) == ("", "frame_current"):
                continue
            setattr(getattr(scene, owner) if owner else scene, prop, value)
        if scene.frame_current != values[("", "frame_current")]:
            scene.frame_current = int(values[("", "frame_current")])  # type: ignore[call-overload]


@contextmanager
def transaction() -> Iterator[Snapshot]:
    """Run a block; if it raises, remove every ID it created, put the scenes' settings back,
    then re-raise."""
    before = snapshot()
    settings = scene_settings()
    try:
        yield before
    except BaseException:
        remove_new(before)
        restore_scene_settings(settings)
        raise
