"""One conversion inside a worker process that has bpy: reset, import, bake, export, count.

Runs only in a worker (``worker.py``), never in Blender's UI: it resets the whole session
between files. Output is written into a staging folder next to the final place
(:mod:`.staging`) and moved there when complete, so an interrupted or failed conversion never
leaves a file that looks converted. Everything the importer and the exporters print is
captured (at the file descriptor, so Blender's own C-level reports too) and its warnings go
into the result. A file that imports without a mesh (an animation-only file) is skipped with
the reason; for glTF, animation sets that play together become one animation.
"""

from __future__ import annotations

import math
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from ..xfile.errors import printable
from . import staging as stage_folders
from .options import DEGREE_PROPS, coerce

ROOT = Path(__file__).resolve().parents[2]  # the repository root: the extension package
PACKAGE = "xof"


def _bpy() -> Any:
    """The bpy module, untyped: this module drives operators and data of any kind."""
    import bpy

    return bpy


def enable_extension() -> str:
    """Enable the repository as the extension ``xof`` (linked in a temporary folder on
    ``sys.path``, as a clone is used without installing); returns the package name."""
    import addon_utils

    bpy = _bpy()
    if not hasattr(bpy.ops.import_scene, "x") or PACKAGE not in sys.modules:
        link_dir = Path(tempfile.mkdtemp(prefix="xof-batch-pkg-"))
        (link_dir / PACKAGE).symlink_to(ROOT, target_is_directory=True)
        sys.path.insert(0, str(link_dir))
        addon_utils.enable(PACKAGE, default_set=True)
    if not hasattr(bpy.ops.import_scene, "x"):
        raise RuntimeError(f"enabling {ROOT} as {PACKAGE} did not register import_scene.x")
    return PACKAGE


def operator_properties() -> dict[str, tuple[str, bool]]:
    """The import operator's properties: ``name -> (RNA type, is an enum flag)``."""
    bpy = _bpy()
    rna = bpy.ops.import_scene.x.get_rna_type()
    return {
        p.identifier: (p.type, bool(getattr(p, "is_enum_flag", False)))
        for p in rna.properties
        if p.identifier != "rna_type"
    }


def import_keywords(requested: dict[str, Any], props: dict[str, tuple[str, bool]]) -> dict:
    """The operator keywords for the requested options; ``ValueError`` names one it lacks."""
    out: dict[str, Any] = {}
    for name, value in requested.items():
        if name not in props:
            raise ValueError(f"import_scene.x has no property {name!r}")
        if name in DEGREE_PROPS:
            value = math.radians(float(value))
        out[name] = coerce(value, *props[name])
    return out


class _Capture:
    """Everything written to file descriptors 1 and 2 while active, as text afterwards."""

    def __enter__(self) -> _Capture:
        sys.stdout.flush()
        sys.stderr.flush()
        self._file = tempfile.TemporaryFile()
        self._saved = [os.dup(1), os.dup(2)]
        os.dup2(self._file.fileno(), 1)
        os.dup2(self._file.fileno(), 2)
        return self

    def __exit__(self, *exc: object) -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        for fd, saved in zip((1, 2), self._saved, strict=True):
            os.dup2(saved, fd)
            os.close(saved)
        self._file.seek(0)
        self.text = self._file.read().decode("utf-8", "replace")
        self._file.close()
        sys.stdout.write(self.text)  # the worker's log keeps it all


def warnings_in(text: str, stage: str) -> list[str]:
    """The warnings among captured lines, each prefixed by the stage that printed it."""
    found: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        low = stripped.lower()
        if low.startswith("xof: warning: "):
            found.append(f"{stage}: {stripped[len('xof: warning: ') :]}")
        elif "| warning:" in low:
            found.append(f"{stage}: {stripped.split('| WARNING:', 1)[-1].strip()}")
        elif low.startswith("warning:") and not low.startswith("warning: imported "):
            found.append(f"{stage}: {stripped[len('warning:') :].strip()}")
    return found


def _fcurves(action: Any) -> list[Any]:
    curves: list[Any] = []
    for layer in getattr(action, "layers", ()):
        for strip in layer.strips:
            for bag in getattr(strip, "channelbags", ()):
                curves.extend(bag.fcurves)
    if not curves and hasattr(action, "fcurves"):  # Blender before slotted actions
        curves.extend(action.fcurves)
    return curves


def counts() -> dict[str, int]:
    """What the session holds: objects, vertices (of mesh objects), bones, actions, keys
    (keyframe points), shape keys (key blocks besides each basis), materials."""
    bpy = _bpy()
    meshes = {o.data for o in bpy.data.objects if o.type == "MESH"}
    return {
        "objects": len(bpy.data.objects),
        "vertices": sum(len(m.vertices) for m in meshes),
        "bones": sum(len(a.bones) for a in bpy.data.armatures),
        "actions": len(bpy.data.actions),
        "keys": sum(len(c.keyframe_points) for a in bpy.data.actions for c in _fcurves(a)),
        "shape_keys": sum(max(0, len(k.key_blocks) - 1) for k in bpy.data.shape_keys),
        "materials": len(bpy.data.materials),
    }


def reset() -> float:
    """An empty session (the extension stays enabled); returns the milliseconds it took."""
    bpy = _bpy()
    start = time.perf_counter()
    bpy.ops.wm.read_homefile(use_empty=True)
    return (time.perf_counter() - start) * 1e3


def _test_hook(source: str, stage: str = "import") -> None:
    """For the tests only: ``XOF_BATCH_TEST_CRASH=MODE:NAME[,MODE:NAME...]`` makes the worker
    die (``exit``: ``os._exit(70)``; ``segv``: SIGSEGV) or hang (``hang``) while importing
    the file named NAME, or hang while exporting it (``hang-export``: its staging folder is
    made)."""
    for spec in os.environ.get("XOF_BATCH_TEST_CRASH", "").split(","):
        mode, _, name = spec.partition(":")
        if not name or Path(source).name != name:
            continue
        if stage == "export":
            if mode == "hang-export":
                time.sleep(3600)
            continue
        if mode == "exit":
            os._exit(70)
        if mode == "segv":
            import signal

            os.kill(os.getpid(), signal.SIGSEGV)
        if mode == "hang":
            time.sleep(3600)


def bake_cloth(frames: int) -> list[str]:
    """Simulate every mesh with xof cloth for ``frames`` frames and bake to shape keys."""
    bpy = _bpy()
    scene = bpy.context.scene
    baked: list[str] = []
    for obj in list(bpy.data.objects):
        physics = getattr(obj, "xof_physics", None)
        if obj.type != "MESH" or physics is None or not physics.enabled:
            continue
        physics.frame_start = scene.frame_start
        physics.frame_end = scene.frame_start + frames - 1
        physics.bake_target = "SHAPE_KEYS"
        bpy.context.view_layer.objects.active = obj
        with bpy.context.temp_override(object=obj, active_object=obj):
            bpy.ops.xof.sim_bake()
        baked.append(obj.name)
    if baked:
        scene.frame_end = max(scene.frame_end, scene.frame_start + frames - 1)
    return baked


def _channelbag(action: Any, slot: Any) -> Any:
    for layer in action.layers:
        for strip in layer.strips:
            bag = strip.channelbag(slot)
            if bag is not None:
                return bag
    return None


_KEY_FLOATS = ("co", "handle_left", "handle_right")
_KEY_ENUMS = ("interpolation", "handle_left_type", "handle_right_type", "easing")


def _copy_fcurve(curve: Any, bag: Any) -> None:
    """A copy of ``curve`` (keys, handles, interpolation, cycles, extrapolation) in ``bag``."""
    group = curve.group.name if curve.group is not None else ""
    try:
        new = bag.fcurves.new(curve.data_path, index=curve.array_index, group_name=group)
    except TypeError:  # Blender before 5.0: the group is assigned after
        new = bag.fcurves.new(curve.data_path, index=curve.array_index)
        if group:
            new.group = bag.groups.get(group) or bag.groups.new(group)
    count = len(curve.keyframe_points)
    new.keyframe_points.add(count)
    floats = np.empty(2 * count, np.float32)
    for name in _KEY_FLOATS:
        curve.keyframe_points.foreach_get(name, floats)
        new.keyframe_points.foreach_set(name, floats)
    enums = np.empty(count, np.int32)
    for name in _KEY_ENUMS:
        curve.keyframe_points.foreach_get(name, enums)
        new.keyframe_points.foreach_set(name, enums)
    for modifier in curve.modifiers:
        if modifier.type == "CYCLES":
            new.modifiers.new("CYCLES")
    new.extrapolation = curve.extrapolation
    new.update()


def merge_sets_playing_together() -> list[str]:
    """The actions that play at once on objects (the importer puts sets that key disjoint
    bones on unmuted NLA tracks, with no active action) made into one active action, so that
    glTF exports them as one animation; the names of the merged sets (none: nothing done).

    Keys stay at their own times; the merged sets' actions are removed (the glTF exporter
    would export each one as an animation of its own too)."""
    bpy = _bpy()
    owners = []
    for obj in bpy.data.objects:
        anim = obj.animation_data
        if anim is None or anim.action is not None:
            continue
        strips = [
            s for t in anim.nla_tracks if not t.mute for s in t.strips
            if not s.mute and s.action is not None
        ]  # fmt: skip
        if strips:
            owners.append((obj, strips))
    names = list(dict.fromkeys(s.action.name for _, strips in owners for s in strips))
    if len(names) < 2:
        return []
    merged = bpy.data.actions.new("+".join(names))
    keys = merged.layers.new("Layer").strips.new(type="KEYFRAME")
    first, last, cyclic = float("inf"), float("-inf"), False
    for obj, strips in owners:
        slot = merged.slots.new("OBJECT", obj.name)
        bag = keys.channelbag(slot, ensure=True)
        for strip in strips:
            source = _channelbag(strip.action, strip.action_slot)
            if source is None:
                continue
            for curve in source.fcurves:  # disjoint sets: no channel twice (else: first kept)
                if bag.fcurves.find(curve.data_path, index=curve.array_index) is None:
                    _copy_fcurve(curve, bag)
            start, end = strip.action.frame_range
            first, last = min(first, float(start)), max(last, float(end))
            cyclic |= bool(strip.action.use_cyclic)
        anim = obj.animation_data
        for track in [t for t in anim.nla_tracks if not t.mute]:
            anim.nla_tracks.remove(track)
        anim.action = merged
        anim.action_slot = slot
    if first <= last:
        merged.use_frame_range = True
        merged.frame_start, merged.frame_end = first, max(last, first + 1.0)
        merged.use_cyclic = cyclic
    for name in names:
        action = bpy.data.actions.get(name)
        if action is not None and action.users == 0:
            bpy.data.actions.remove(action)
    return names


def _copy_textures(folder: Path, source_dir: Path) -> None:
    """Copy every image file into ``folder`` (keeping its place below the source's folder, else
    by name) and point the images there, so exporters write paths relative to the output."""
    bpy = _bpy()
    for image in bpy.data.images:
        if image.source != "FILE" or image.packed_file is not None or not image.filepath:
            continue
        path = Path(bpy.path.abspath(image.filepath))
        if not path.is_file():
            continue
        try:
            relative = path.resolve().relative_to(source_dir.resolve())
        except ValueError:
            relative = Path(path.name)
        target = folder / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
        image.filepath = str(target)


def export(
    target: str, path: Path, source_dir: Path, x_format: tuple[str, str] = ("txt", "32")
) -> None:
    """Write the session as ``target`` to ``path`` (a file in a fresh temporary folder);
    ``x_format``: the .x encoding and float bits for ``target == "x"``."""
    bpy = _bpy()
    if target in ("glb", "gltf"):
        # ACTIONS: every action an animation of its own (sets that play together were
        # merged into one before, merge_sets_playing_together)
        bpy.ops.export_scene.gltf(
            filepath=str(path),
            export_format="GLB" if target == "glb" else "GLTF_SEPARATE",
            export_animations=True,
            export_skins=True,
            export_morph=True,
            export_force_sampling=False,  # the imported keys, at their own times
            export_animation_mode="ACTIONS",
        )
    elif target == "fbx":
        bpy.ops.export_scene.fbx(
            filepath=str(path), path_mode="COPY", embed_textures=False, bake_anim=True
        )
    elif target == "blend":
        if bpy.data.images:
            bpy.ops.file.pack_all()
        bpy.ops.wm.save_as_mainfile(filepath=str(path), copy=True, compress=True)
    elif target == "x":
        _copy_textures(path.parent, source_dir)
        bpy.ops.export_scene.x(
            filepath=str(path), file_format=x_format[0], float_bits=str(x_format[1])
        )
    else:
        raise ValueError(f"unknown target {target!r}")


def _error_text(exc: BaseException) -> str:
    text = str(exc).strip()
    for prefix in ("Error: ", "error: "):
        if text.startswith(prefix):
            text = text[len(prefix) :]
    return " ".join(text.split()) or type(exc).__name__


def _publish(staging: Path, output: Path) -> None:
    """Move the finished files from ``staging`` to ``output``'s folder, the main file last."""
    main = staging / output.name
    for item in sorted(staging.iterdir()):
        if item != main:
            dest = output.parent / item.name
            if dest.is_dir() and item.is_dir():
                shutil.copytree(item, dest, dirs_exist_ok=True)
                shutil.rmtree(item)
            else:
                os.replace(item, dest)
    os.replace(main, output)


def convert(task: dict[str, Any], props: dict[str, tuple[str, bool]]) -> dict[str, Any]:
    """Convert ``task["source"]`` to ``task["output"]``; a result dict, never an exception."""
    bpy = _bpy()
    source, output = Path(task["source"]), Path(task["output"])
    target = task["to"]
    start = time.perf_counter()
    result: dict[str, Any] = {"status": "failed", "error": None, "warnings": [], "counts": {}}
    stage = "reset"
    staging: Path | None = None
    try:
        result["reset_ms"] = reset()
        stages = result["stage_seconds"] = {}
        mark = time.perf_counter()
        stage = "import"
        keywords = import_keywords(task.get("import", {}), props)
        with _Capture() as cap:
            _test_hook(str(source))  # inside the capture, as a crash of the importer would be
            bpy.ops.import_scene.x(filepath=str(source), **keywords)
        result["warnings"] += warnings_in(cap.text, "import")
        stages["import"], mark = time.perf_counter() - mark, time.perf_counter()
        if task.get("bake_cloth"):
            stage = "bake"
            with _Capture() as cap:
                result["baked"] = bake_cloth(int(task["bake_cloth"]))
            result["warnings"] += warnings_in(cap.text, "bake")
            stages["bake"], mark = time.perf_counter() - mark, time.perf_counter()
        result["counts"] = counts()
        if not any(o.type == "MESH" for o in bpy.data.objects):
            result["status"] = "skipped"
            result["reason"] = _meshless_reason(result["counts"])
            return _finish(result, start)
        if target in ("glb", "gltf"):
            merged = merge_sets_playing_together()
            if merged:
                result["merged_sets"] = merged
        stage = "output"
        output.parent.mkdir(parents=True, exist_ok=True)
        staging = stage_folders.make(output.parent, output.stem)
        stage = "export"
        with _Capture() as cap:
            _test_hook(str(source), "export")
            x_format = task.get("x_format") or ("txt", "32")
            export(target, staging / output.name, source.parent, (x_format[0], x_format[1]))
        result["warnings"] += warnings_in(cap.text, "export")
        stages["export"] = time.perf_counter() - mark
        if not (staging / output.name).is_file():
            raise RuntimeError(f"the {target} exporter wrote no file")
        stage = "output"
        _publish(staging, output)
        result["status"] = "converted"
    except (RuntimeError, ValueError, OSError, TypeError, KeyError, AttributeError) as exc:
        where = {"import": "", "output": "cannot write the output: "}.get(stage, f"{stage}: ")
        result["error"] = where + _error_text(exc)
        # the importer's errors name the file (escaped): named once, not again
        shown = printable(str(source))
        if stage == "import" and isinstance(exc, RuntimeError) and shown not in str(exc):
            result["error"] = f"{shown}: {result['error']}"
    finally:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
    return _finish(result, start)


def _finish(result: dict[str, Any], start: float) -> dict[str, Any]:
    result["seconds"] = time.perf_counter() - start
    return result


def _meshless_reason(found: dict[str, int]) -> str:
    if found.get("actions"):
        return (
            f"an animation-only file ({found['actions']} animation set(s), no mesh): nothing "
            "to convert on its own; import it onto its character in Blender (File > Import > "
            "DirectX Animation) and export that"
        )
    return "no mesh in the file: nothing to convert"
