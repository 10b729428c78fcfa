"""Texture files: find what a TextureFilename names, load it once, placeholder when missing.

Exporters write absolute Windows paths, paths relative to some long-gone folder, or names
whose case differs from the file on disk. We look next to the .x file first, then in the usual
sub-folders, always case-insensitively, and keep the path as written on the image so an
export can write it back.

A file names its textures, so a hostile file could name any file on the machine (and Pack
Resources would then embed it in a .blend the user shares). Textures are only taken from
inside the .x file's folder tree and the folders the user names, and only when the file's
first bytes are those of an image; everything else is refused with a warning naming it.
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
)

#: first bytes of the image formats Blender reads (TGA has none: see :func:`is_image_file`)
IMAGE_MAGIC: tuple[bytes, ...] = (
    b"\x89PNG\r\n\x1a\n",
    b"\xff\xd8\xff",  # JPEG
    b"BM",  # BMP
    b"GIF87a",
    b"GIF89a",
    b"II*\x00",  # TIFF, little-endian
    b"MM\x00*",  # TIFF, big-endian
    b"DDS ",
    b"8BPS",  # PSD
    b"#?RADIANCE",
    b"#?RGBE",
    b"v/1\x01",  # OpenEXR
    b"\x00\x00\x00\x0cjP  ",  # JPEG 2000
    b"\xffO\xffQ",  # JPEG 2000 codestream
    b"SDPX",
    b"XPDS",  # DPX
    b"\x80\x2a\x5f\xd7",  # Cineon
)


def is_image_file(path: Path) -> bool:
    """Whether ``path`` starts like an image file Blender reads (by content, not name)."""
    try:
        with open(path, "rb") as f:
            head = f.read(18)
    except OSError:
        return False
    if any(head.startswith(magic) for magic in IMAGE_MAGIC):
        return True
    if head[:4] == b"RIFF" and len(head) >= 12 and head[8:12] == b"WEBP":
        return True
    if path.suffix.lower() in (".tga", ".targa", ".vda", ".icb", ".vst") and len(head) == 18:
        width, height = head[12] | head[13] << 8, head[14] | head[15] << 8
        return head[1] in (0, 1) and head[2] in (1, 2, 3, 9, 10, 11) and width > 0 and height > 0
    return False


def _probe(path: Path, test: str) -> bool:
    """``path.exists()`` / ``is_file()`` / ``is_dir()``, False where the name itself cannot
    be asked about (too long, a NUL byte: a file can name anything)."""
    try:
        return bool(getattr(path, test)())
    except (OSError, ValueError):
        return False


def _inside(path: Path, roots: list[Path]) -> bool:
    """Whether ``path`` (links resolved) lies in one of ``roots`` (already resolved)."""
    try:
        real = path.resolve()
    except (OSError, RuntimeError, ValueError):
        return False
    return any(real == root or root in real.parents for root in roots)


def _split_written_path(written: str) -> list[str]:
    """Path parts of a TextureFilename as written (either slash, drive letters dropped)."""
    text = written.strip().replace("\\", "/")
    if len(text) > 1 and text[1] == ":":
        text = text[2:]
    return [p for p in text.split("/") if p not in ("", ".")]


def _find_entry(folder: Path, name: str) -> Path | None:
    """``folder/name`` matched case-insensitively, or None."""
    exact = folder / name
    if _probe(exact, "exists"):
        return exact
    try:
        entries = os.listdir(folder)
    except (OSError, ValueError):
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
            return None  # never up: the shorter tails of the path are tried instead
        found = _find_entry(current, part)
        if found is None:
            return None
        current = found
    return current if _probe(current, "is_file") else None


def find_texture(
    written: str, x_file_dir: str | Path | None, folders: tuple[str | Path, ...] = ()
) -> Path | None:
    """Where the texture named ``written`` is on disk, or None (see :func:`locate_texture`)."""
    return locate_texture(written, x_file_dir, folders)[0]


def locate_texture(
    written: str, x_file_dir: str | Path | None, folders: tuple[str | Path, ...] = ()
) -> tuple[Path | None, str | None]:
    """``(path, refusal)`` for the texture named ``written``.

    Searched, case-insensitively: the .x file's folder and each of ``folders`` (the user's
    texture folders), with :data:`SEARCH_SUBFOLDERS` of each; in each, the path as written,
    then its shorter tails (``a/b/c.png`` -> ``b/c.png`` -> ``c.png``). A path as written that
    exists but lies outside those folders, or a match that is not an image file, is refused:
    ``refusal`` says why (None when nothing was refused).
    """
    parts = _split_written_path(written)
    if not parts:
        return None, None
    bases = [Path(x_file_dir)] if x_file_dir is not None else []
    bases += [Path(f) for f in folders]
    roots = []
    for base in bases:
        try:
            roots.append(base.resolve())
        except (OSError, RuntimeError):
            continue
    refusal: str | None = None
    raw = Path(written)
    if not raw.is_absolute() and x_file_dir is not None:  # ../maps/a.png: where it leads
        raw = Path(x_file_dir) / "/".join(_split_written_path(written))
    if _probe(raw, "is_file") and not _inside(raw, roots):
        refusal = (f"refused {raw}: outside the model's folder and the texture folders "
                   "(name its folder in Texture Folders to use it)")  # fmt: skip
    search: list[Path] = []
    for base in bases:
        for sub in ("", *SEARCH_SUBFOLDERS):
            folder = _find_folder(base, sub)
            if folder is not None and folder not in search:
                search.append(folder)
    for i in range(len(parts)):  # a/b/c.png, then b/c.png, then c.png
        for folder in search:
            found = _find_relative(folder, parts[i:])
            if found is None:
                continue
            if not _inside(found, roots):
                refusal = f"refused {found}: it links outside the model's folder"
            elif not is_image_file(found):
                refusal = f"refused {found}: not an image file"
            else:
                return found, None
    return None, refusal


def _find_folder(base: Path, sub: str) -> Path | None:
    """``base/sub`` with each part matched case-insensitively, or None."""
    current = base
    for part in sub.split("/") if sub else []:
        if part == "..":
            current = current.parent
            continue
        found = _find_entry(current, part)
        if found is None or not _probe(found, "is_dir"):
            return None
        current = found
    return current if _probe(current, "is_dir") else None


class TextureLoader:
    """Loads each texture once per import; records images it created and warnings."""

    def __init__(self, x_file_dir: str | Path | None, folders: tuple[str | Path, ...] = ()) -> None:
        self.x_file_dir = x_file_dir
        self.folders = folders
        self._images: dict[str, bpy.types.Image] = {}
        self.created: list[bpy.types.Image] = []
        self.warnings: list[str] = []

    def image(self, written: str) -> bpy.types.Image:
        """The image for a TextureFilename; a placeholder (with a warning) when not found."""
        path, refusal = locate_texture(written, self.x_file_dir, self.folders)
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
        elif refusal is not None:
            self.warnings.append(f"texture {written!r}: {refusal} (placeholder image used)")
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
        """A file image of the bare name beside the .blend: Blender shows it as missing
        (magenta) and File > External Data > Find Missing Files can relink it. Never the path
        as written, which may point anywhere."""
        parts = _split_written_path(written)
        name = parts[-1] if parts else "texture"
        image = bpy.data.images.new(name, 1, 1)
        image.source = "FILE"
        image.filepath = "//" + name
        return image
