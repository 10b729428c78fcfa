"""``python -m addon.xfile info FILE [--json]``: what a .X file holds, or why it cannot be read.

An unreadable file gives exit code 1 and one line on stderr naming the place; no traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from . import read
from .document import XDocument
from .errors import XFileError
from .names import is_word


def summary(doc: XDocument) -> dict[str, Any]:
    """The JSON contract: format, version, float_bits, objects per template, meshes."""
    scene = doc.scene()
    meshes = []
    for obj in doc.walk():
        if not is_word(obj.template, "mesh"):
            continue
        info: dict[str, Any] = {"name": obj.name}
        try:
            nverts = int(obj.members.get("nVertices", len(obj.members["vertices"])))
            faces = obj.members["faces"]
            info.update(vertices=nverts, faces=int(obj.members.get("nFaces", len(faces))))
        except (KeyError, TypeError):
            info.update(vertices=None, faces=None)
        mesh = next((m for m in scene.all_meshes() if m.source is obj), None)
        info["corners"] = int(mesh.face_sizes.sum()) if mesh is not None else None
        meshes.append(info)
    return {
        "format": doc.format,
        "version": doc.version,
        "float_bits": doc.float_bits,
        "objects": doc.count_by_template(),
        "meshes": meshes,
        "frames": sum(1 for o in doc.walk() if is_word(o.template, "frame")),
        "animation_sets": [a.name for a in scene.animation_sets],
        "ticks_per_second": scene.ticks_per_second,
        "declared_templates": doc.declared,
        "unresolved": [r.name or str(r.guid) for r in doc.unresolved],
        "warnings": doc.warnings
        + scene.warnings
        + [f"{m.name}: {w}" for m in scene.all_meshes() for w in m.warnings],
    }


def _human(info: dict[str, Any], path: str) -> str:
    lines = [f"{path}: .X {info['version']} {info['format']}, {info['float_bits']}-bit floats"]
    for mesh in info["meshes"]:
        lines.append(
            f"  mesh {mesh['name'] or '(unnamed)'}: {mesh['vertices']} vertices, "
            f"{mesh['faces']} faces, {mesh['corners']} corners"
        )
    lines.append(f"  frames: {info['frames']}")
    if info["animation_sets"]:
        lines.append(f"  animation sets: {', '.join(map(str, info['animation_sets']))}")
    lines.append("  objects: " + ", ".join(f"{k} {v}" for k, v in info["objects"].items()))
    for key in ("unresolved", "warnings"):
        for item in info[key]:
            lines.append(f"  {key[:-1] if key.endswith('s') else key}: {item}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m addon.xfile")
    sub = parser.add_subparsers(dest="command", required=True)
    info = sub.add_parser("info", help="summarise a .X file")
    info.add_argument("file")
    info.add_argument("--json", action="store_true", help="one JSON object on stdout")
    args = parser.parse_args(argv)
    try:
        doc = read(args.file)
        result = summary(doc)
    except XFileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(result))
    else:
        print(_human(result, args.file))
    return 0
