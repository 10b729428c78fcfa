"""Texture files: find what a TextureFilename names, load it once, placeholder when missing.

Exporters write absolute Windows paths, paths relative to some long-gone folder, or names
whose case differs from the file on disk. We look next to the .x file first, then in the usual
sub-folders, always case-insensitively, and keep the path as written on the image so an
export can write it back.
"""

from __future__ import annotations

import os
from pathlib import Path

import bpy

#: sub-folders (relative to the .x file's folder) searched after the folder itself
SEARCH_SUBFOLDERS: tuple[str, ...] = (
    "textures",
    "texture",
    "tex",
    "images",
    "image",
    "maps",
    "materials",
    "../textures",
    "../texture",
    "../tex",
    "../images",
    "..",
)


def _split_written_path(written: str) -> list[str]:
    """Path parts of a TextureFilename as written (either slash, drive letters dropped)."""
    text = written.strip().replace("\\", "/")
    if len(text) > 1 and text[1] == ":":
        text = text[2:]
    return [p for p in text.split("/") if p not in ("", ".")]


def _find_entry(folder: Path, name: str) -> Path | None:
    """``folder/name`` matched case-insensitively, or None."""
    exact = folder / name
    if exact.exists():
        return exact
    try:
        entries = os.listdir(folder)
    except OSError:
        return None
    wanted = name.casefold()
    for entry in sorted(entries):
        if entry.casefold() == wanted:
            return folder / entry
    return None


def _find_relative(folder: Path, parts: list[str]) -> Path | None:
    current = folder
    for part in parts:
        if part == "..":
            current = current.parent
            continue
        found = _find_entry(current, part)
        if found is None:
            return None
        current = found
    return current if current.is_file() else None


def find_texture(written: str, x_file_dir: str | Path | None) -> Path | None:
    """Where the texture named ``written`` is on disk, or None.

    Tried in order: the path as written if absolute and present; the path relative to the .x
    file's folder; every trailing part of it (``a/b/c.png`` -> ``b/c.png`` -> ``c.png``) in
    the folder and in :data:`SEARCH_SUBFOLDERS`. All matches are case-insensitive.
    """
    parts = _split_written_path(written)
    if not parts:
        return None
    raw = Path(written)
    if raw.is_absolute() and raw.is_file():
        return raw
    if x_file_dir is None:
        return None
    base = Path(x_file_dir)
    folders: list[Path] = []
    for sub in ("", *SEARCH_SUBFOLDERS):
        folder = _find_folder(base, sub)
        if folder is not None and folder not in folders:
            folders.append(folder)
    for i in range(len(parts)):  # a/b/c.png, then b/c.png, then c.png
        for folder in folders:
            found = _find_relative(folder, parts[i:])
            if found is not None:
                return found
    return None


def _find_folder(base: Path, sub: str) -> Path | None:
    """``base/sub`` with each part matched case-insensitively, or None."""
    current = base
    for part in sub.split("/") if sub else []:
        if part == "..":
            current = current.parent
            continue
        found = _find_entry(current, part)
        if found is None or not found.is_dir():
            return None
        current = found
    return current if current.is_dir() else None


class TextureLoader:
    """Loads each texture once per import; records images it created and warnings."""

    def __init__(self, x_file_dir: str | Path | None) -> None:
        self.x_file_dir = x_file_dir
        self._images: dict[str, bpy.types.Image] = {}
        self.created: list[bpy.types.Image] = []
        self.warnings: list[str] = []

    def image(self, written: str) -> bpy.types.Image:
        """The image for a TextureFilename; a placeholder (with a warning) when not found."""
        path = find_texture(written, self.x_file_dir)
        key = str(path.resolve()) if path is not None else "missing:" + written
        cached = self._images.get(key)
        if cached is not None:
            return cached
        image: bpy.types.Image | None = None
        if path is not None:
            try:
                image = bpy.data.images.load(str(path), check_existing=False)
            except RuntimeError as exc:
                self.warnings.append(f"texture {written!r}: cannot load {path}: {exc}")
        else:
            self.warnings.append(f"texture {written!r} not found (placeholder image used)")
        if image is None:
            image = self._placeholder(written)
        image["xof_texture"] = written
        self._images[key] = image
        self.created.append(image)
        return image

    @staticmethod
    def _placeholder(written: str) -> bpy.types.Image:
        """A file image pointing at the path as written: Blender shows it as missing (magenta)."""
        parts = _split_written_path(written)
        name = parts[-1] if parts else "texture"
        image = bpy.data.images.new(name, 1, 1)
        image.source = "FILE"
        image.filepath = written.replace("\\", "/")
        return image
