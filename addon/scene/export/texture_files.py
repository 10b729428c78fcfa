"""Where an exported file's textures are, as the path mode says (FBX's ``path_mode``).

- ``AUTO``: relative to the file when the image lies in the file's folder or below it, else
  copied beside the file (plain name): what the importer takes (it reads textures only from
  the model's folder tree) and what travels when the folder is shared;
- ``COPY``: every image copied beside the file, plain names;
- ``RELATIVE``: relative to the file wherever the image lies (``../../maps/a.png``);
- ``ABSOLUTE``: the full path;
- ``STRIP``: the plain name, nothing copied.

A copy never overwrites another file: an image of the same name but other bytes beside the
file is copied as ``name_1.ext`` (``_2``...). A copy that fails leaves the path relative, with
a warning. No bpy here.
"""

from __future__ import annotations

import contextlib
import filecmp
import os
import shutil
import tempfile
from collections.abc import Callable
from typing import BinaryIO

PATH_MODES = ("AUTO", "COPY", "RELATIVE", "ABSOLUTE", "STRIP")


def _inside(path: str, folder: str) -> bool:
    try:
        return os.path.commonpath([path, folder]) == folder
    except ValueError:  # another drive on Windows
        return False


def _relative(path: str, folder: str) -> str:
    try:
        return os.path.relpath(path, folder).replace(os.sep, "/")
    except ValueError:  # another drive on Windows
        return path


class TextureFiles:
    """The written name of each image file, copies made as the mode says (once per image)."""

    def __init__(self, folder: str, mode: str = "AUTO") -> None:
        if mode not in PATH_MODES:
            raise ValueError(f"path mode {mode!r}: one of {', '.join(PATH_MODES)}")
        self.folder = os.path.realpath(folder)
        self.mode = mode
        self.copied: list[str] = []  # files written beside the export
        self.warnings: list[str] = []
        self._names: dict[str, str] = {}  # real source path -> written name
        self._taken: set[str] = set()  # names given to copies in this export

    @property
    def copies(self) -> bool:
        return self.mode in ("AUTO", "COPY")

    def name_for(self, path: str) -> str:
        """The TextureFilename for the image file at ``path`` (copied first if need be)."""
        real = os.path.realpath(path)
        found = self._names.get(real)
        if found is None:
            found = self._names[real] = self._name_for(real)
        return found

    def _name_for(self, real: str) -> str:
        if self.mode == "ABSOLUTE":
            return real
        if self.mode == "STRIP":
            return os.path.basename(real)
        if self.mode == "RELATIVE" or (self.mode == "AUTO" and _inside(real, self.folder)):
            return _relative(real, self.folder)
        if os.path.dirname(real) == self.folder:
            return os.path.basename(real)  # beside the file already
        try:
            return self._copy(real)
        except OSError as exc:
            self.warnings.append(f"texture {real}: not copied beside the file ({exc}); "
                                 "written relative to it")  # fmt: skip
            return _relative(real, self.folder)

    def _free_name(self, name: str, same: Callable[[str], bool]) -> tuple[str, bool]:
        """A name beside the file for ``name``: ``(name, True)`` when a file there already
        holds the same bytes."""
        stem, ext = os.path.splitext(name)
        k = 0
        while True:
            candidate = name if k == 0 else f"{stem}_{k}{ext}"
            target = os.path.join(self.folder, candidate)
            if candidate not in self._taken:
                if not os.path.lexists(target):
                    return candidate, False
                if os.path.isfile(target) and not os.path.islink(target) and same(target):
                    return candidate, True
            k += 1

    def _copy(self, real: str) -> str:
        name, present = self._free_name(
            os.path.basename(real), lambda t: filecmp.cmp(real, t, shallow=False)
        )
        self._taken.add(name)
        if not present:
            self._write(os.path.join(self.folder, name), lambda f: _copy_into(real, f))
        return name

    def unpacked(self, data: bytes, name: str) -> str | None:
        """The name of a packed image's bytes written beside the file (None if that fails)."""
        name = os.path.basename(name.replace("\\", "/")) or "texture.png"
        chosen, present = self._free_name(name, lambda t: _same_bytes(t, data))
        self._taken.add(chosen)
        if present:
            return chosen
        try:
            self._write(os.path.join(self.folder, chosen), lambda f: f.write(data))
        except OSError as exc:
            self.warnings.append(f"texture {name}: packed image not written ({exc})")
            return None
        return chosen

    def _write(self, target: str, fill: Callable[[BinaryIO], object]) -> None:
        """Write ``target`` through a temporary file beside it (never a half-written image),
        with the permissions a new file gets."""
        fd, temp = tempfile.mkstemp(prefix=".xof-", dir=self.folder)
        try:
            with os.fdopen(fd, "wb") as f:
                fill(f)
            os.chmod(temp, 0o666 & ~_umask())
            os.replace(temp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise
        self.copied.append(target)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _copy_into(source: str, f: BinaryIO) -> None:
    with open(source, "rb") as src:
        shutil.copyfileobj(src, f)


def _same_bytes(path: str, data: bytes) -> bool:
    try:
        if os.path.getsize(path) != len(data):
            return False
        with open(path, "rb") as f:
            return f.read() == data
    except OSError:
        return False
