"""The .X writer: a document -> the bytes of a text, binary or MSZIP-compressed file.

    from addon.xfile.writer import write, write_file
    data = write(doc, "bzip", float_bits=32)

Readers of every era read what this writes: D3DX punctuation in text, list tokens in binary,
declarations for every template outside Microsoft's standard set.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
import threading
from collections.abc import Iterable

from ..document import XDocument, XObject
from ..errors import XFileError
from ..parser import MAX_DEPTH
from .binary_encoder import binary_parts, encode_binary
from .mszip_writer import compress
from .pieces import Piece, piece_bytes, spelled_ahead
from .text_digits import THREADS
from .text_encoder import encode_text, text_parts

FORMATS = ("txt", "bin", "tzip", "bzip")

__all__ = ["FORMATS", "header", "nesting_depth", "writable_target", "write", "write_file"]


def header(fmt: str, float_bits: int, version: str = "0303") -> bytes:
    """The 16-byte header: ``xof 0303txt 0032``."""
    if fmt not in FORMATS:
        raise XFileError(f"unknown format {fmt!r}, expected one of {', '.join(FORMATS)}")
    if float_bits not in (32, 64):
        raise XFileError(f"float size {float_bits} is not 32 or 64")
    name = {"txt": "txt ", "bin": "bin ", "tzip": "tzip", "bzip": "bzip"}[fmt]
    return f"xof {version}{name}{float_bits:04d}".encode("ascii")


def nesting_depth(doc: XDocument) -> int:
    """Levels of nested objects in ``doc``, as the reader counts them (a top-level one: 1)."""
    deepest = 0
    todo = [(obj, 1) for obj in doc.objects if isinstance(obj, XObject)]
    while todo:
        obj, depth = todo.pop()
        deepest = max(deepest, depth)
        todo.extend((c, depth + 1) for c in obj.children if isinstance(c, XObject))
    return deepest


def _choices(doc: XDocument, fmt: str | None, float_bits: int | None) -> tuple[str, int, bytes]:
    """Format, float size (the document's own unless given) and the header they make; a
    document nested deeper than the reader reads is refused (what is written reads back)."""
    depth = nesting_depth(doc)
    if depth > MAX_DEPTH:
        raise XFileError(
            f"objects nested {depth:,} levels deep: the reader reads at most {MAX_DEPTH:,} "
            "(a hierarchy of frames, bones and the mesh data inside them); flatten the "
            "hierarchy (Clear Parent) to export it"
        )
    fmt = fmt or doc.format or "txt"
    bits = float_bits or doc.float_bits or 32
    version = doc.version if doc.version in ("0302", "0303") else "0303"
    return fmt, bits, header(fmt, bits, version)


def write(
    doc: XDocument,
    fmt: str | None = None,
    float_bits: int | None = None,
    *,
    level: int = 1,
) -> bytes:
    """The whole file for ``doc``; format and float size default to the document's own."""
    fmt, bits, head = _choices(doc, fmt, float_bits)
    if fmt == "txt":
        return encode_text(doc, bits, head)
    if fmt == "bin":
        return encode_binary(doc, bits, head)
    body = encode_binary(doc, bits) if fmt == "bzip" else encode_text(doc, bits)
    return head + compress(body, level)


def write_file(
    path: str | os.PathLike[str],
    doc: XDocument,
    fmt: str | None = None,
    float_bits: int | None = None,
    *,
    level: int = 1,
) -> int:
    """Write ``doc`` to ``path``; returns the number of bytes written.

    The bytes go to a temporary file beside ``path`` that replaces it only when complete, so
    a failed write (a full disk, a lost folder) leaves the previous file as it was; the
    error is an :class:`XFileError` that names the path and the cause.
    """
    try:
        fmt, bits, head = _choices(doc, fmt, float_bits)
    except XFileError as exc:
        raise exc.located(os.fspath(path)) from None
    parts: list[Piece]
    if fmt == "txt":  # the pieces go to the file as they are: 100 MB are not joined first
        with spelled_ahead(THREADS):  # and each is written while the next ones are spelled
            parts = list(text_parts(doc, bits, head))
            return replace_file(path, parts)
    if fmt == "bin":  # arrays go to the file from their own buffers
        parts = list(binary_parts(doc, bits, head))
    else:
        parts = [write(doc, fmt, bits, level=level)]
    return replace_file(path, parts)


def replace_file(path: str | os.PathLike[str], parts: Iterable[Piece]) -> int:
    """Write ``parts`` (bytes-like, or futures of them) to a temporary file beside ``path``,
    then rename it over ``path``; returns the bytes written. On any failure the temporary file
    is removed and ``path`` is untouched.

    A symlink is written through: the file it points to is replaced (its temporary file beside
    it) and the link stays, as Blender's own exporters do. A read-only file is refused, though
    the rename would need only the folder's permission."""
    given = os.fspath(path)
    target = writable_target(given)
    folder = os.path.dirname(target)
    try:
        fd, temporary = tempfile.mkstemp(
            prefix=f".{os.path.basename(target)}.", suffix=".tmp", dir=folder
        )
    except OSError as exc:
        raise XFileError(f"cannot write: {_cause(exc)}", given) from exc
    written = 0
    try:
        with os.fdopen(fd, "wb") as handle:
            for part in parts:
                data = piece_bytes(part)
                handle.write(data)
                written += memoryview(data).nbytes
        os.chmod(temporary, _mode_for(target))
        old = _hold(target)
        try:
            os.replace(temporary, target)
        finally:
            _let_go(old)
    except BaseException as exc:  # a piece that failed to spell, too: no file left behind
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(exc, OSError):
            raise XFileError(f"cannot write: {_cause(exc)}", given) from exc
        raise
    return written


def writable_target(path: str | os.PathLike[str]) -> str:
    """The absolute path a write to ``path`` replaces: a symlink's final target (the link
    stays and the linked file gets the new bytes). Raises :class:`XFileError` naming ``path``
    when that file exists and is read-only (no write permission bit, or none for this user):
    replacing it by a rename would need only the folder's permission."""
    given = os.fspath(path)
    target = os.path.realpath(given)
    try:
        st = os.stat(target)
    except OSError:
        return target  # nothing there yet (or a dangling link): the write creates it
    if stat.S_ISREG(st.st_mode) and (
        not st.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)
        or not os.access(target, os.W_OK)
    ):
        shown = given if target == os.path.abspath(given) else f"{given} -> {target}"
        raise XFileError(
            "cannot write: the file is read-only; make it writable or export to another name",
            shown,
        )
    return target


def _hold(target: str) -> int | None:
    """An ``O_PATH`` descriptor of the file a rename is about to replace (Linux; None elsewhere
    or when there is none). The replaced file's inode is freed at its last close: inside the
    rename, that waits for its pages to leave the cache and its blocks to be freed (~25 ms
    for 72 MB on ext4, waiting on its write-out); held, it is freed by :func:`_let_go`'s
    thread. The rename itself is the same, so a crash still leaves the old file or the new."""
    flag = getattr(os, "O_PATH", 0)
    if not flag:
        return None
    try:
        return os.open(target, flag | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None


def _let_go(fd: int | None) -> None:
    """Close ``fd`` (from :func:`_hold`) in a thread: the old file is freed beside the caller."""
    if fd is None:
        return
    try:
        threading.Thread(target=os.close, args=(fd,), name="xof-old-file", daemon=True).start()
    except RuntimeError:  # no thread to be had: close it here
        os.close(fd)


def _cause(exc: OSError) -> str:
    return exc.strerror or str(exc) or type(exc).__name__


def _mode_for(target: str) -> int:
    """The permissions of the file being replaced, else what ``open`` would give a new one."""
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
