"""``python -m addon.xfile info|check FILE [--json] [--encoding E]``: what a .X file holds,
whether D3D would load it, or why it cannot be read.

- ``info``: a summary (``--json``: one JSON object);
- ``check``: reads as the importer does and lists what it tolerated (separators D3D refuses,
  unknown templates, values beyond a template...); ``--strict`` exits 1 at the first place
  where the file departs from what D3D's own parser accepts (``strict.py`` has the rules);
- ``--encoding``: of names in the file (``auto``, ``utf-8``, ``shift_jis``, ``cp1252``).

An unreadable file (or memory running out) gives exit code 1 and one line on stderr naming
the file and the place, or with ``--json`` one object ``{"error": {"file", "place",
"message"}}`` on stdout; never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from . import read, scene_of
from .document import XDocument
from .errors import XFileError, shown_path
from .names import is_word
from .scan.codepages import ENCODINGS


def summary(doc: XDocument) -> dict[str, Any]:
    """The JSON contract: format, version, float_bits, objects per template, meshes."""
    scene = scene_of(doc)
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
        "names_encoding": doc.names_encoding,
        "objects": doc.count_by_template(),
        "meshes": meshes,
        "frames": sum(1 for o in doc.walk() if is_word(o.template, "frame")),
        "animation_sets": [a.name for a in scene.animation_sets],
        "ticks_per_second": scene.ticks_per_second,
        "declared_templates": doc.declared,
        "unresolved": [r.name or str(r.guid) for r in doc.unresolved],
        "warnings": all_warnings(doc),
    }


def all_warnings(doc: XDocument) -> list[str]:
    """The reader's warnings and the typed views' (per mesh), as the importer reports them."""
    scene = scene_of(doc)
    return (
        doc.warnings
        + scene.warnings
        + [f"{m.name}: {w}" for m in scene.all_meshes() for w in m.warnings]
    )


def _human(info: dict[str, Any], path: str) -> str:
    lines = [f"{path}: .X {info['version']} {info['format']}, {info['float_bits']}-bit floats"]
    if info["names_encoding"] != "utf-8":
        lines[0] += f", names in {info['names_encoding']}"
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
    return shown_text("\n".join(lines))


def shown_text(text: str) -> str:
    """Names from the file, printable on any terminal (each line escaped on its own)."""
    return "\n".join(shown_path(line) if line else line for line in text.split("\n"))


def _check(args: argparse.Namespace) -> tuple[int, dict[str, Any], str]:
    from .strict import check

    result = check(args.file, args.encoding)
    doc = result.document
    departures = [str(d) for d in result.departures]
    name = shown_path(args.file)
    if args.strict:
        first = result.first
        info: dict[str, Any] = {"file": args.file, "d3d": first is None}
        if first is None:
            return 0, info, f"{name}: D3D's parser accepts this file"
        info.update(place=first.where, message=first.message)
        return 1, info, f"{name}:{first.where}: D3D refuses this: {first.message}"
    tolerated = departures + [w for w in all_warnings(doc) if w not in departures]
    info = {"file": args.file, "names_encoding": doc.names_encoding, "tolerated": tolerated}
    lines = [f"{name}: read as the importer does; tolerated: {len(tolerated) or 'nothing'}"]
    lines += [f"  {item}" for item in tolerated]
    return 0, info, "\n".join(lines)


def _error(args: argparse.Namespace, file: str, place: str | None, message: str) -> int:
    if args.json:
        print(json.dumps({"error": {"file": file, "place": place, "message": message}}))
    else:
        head = shown_path(file) + (f":{place}" if place else "")
        print(f"error: {head}: {message}", file=sys.stderr)
    return 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m addon.xfile")
    sub = parser.add_subparsers(dest="command", required=True)
    info = sub.add_parser("info", help="summarise a .X file")
    check = sub.add_parser("check", help="what the reader tolerated; --strict: would D3D load it")
    check.add_argument("--strict", action="store_true", help="exit 1 where D3D would stop")
    for command in (info, check):
        command.add_argument("file")
        command.add_argument("--json", action="store_true", help="one JSON object on stdout")
        command.add_argument(
            "--encoding", choices=ENCODINGS, default="auto", help="of names in the file"
        )
    args = parser.parse_args(argv)
    try:
        if args.command == "check":
            code, result, text = _check(args)
        else:
            doc = read(args.file, encoding=args.encoding)
            result = summary(doc)
            code, text = 0, _human(result, args.file)
    except XFileError as exc:
        return _error(args, exc.path or args.file, exc.where, exc.reason)
    except MemoryError:
        return _error(args, args.file, None, "not enough memory to read the file")
    if args.json:
        print(json.dumps(result))
    else:
        print(shown_text(text))
    return code
