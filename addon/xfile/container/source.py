"""The bytes of a file to read: a regular file read whole into memory, bounded by its size.

Read, not memory-mapped: a mapped file that another program truncates during the parse
ends the process (SIGBUS), and exporters empty their target before writing it. A file that
changes while it is read (size or modification time) is an :class:`XFileError`, as are
FIFOs, devices and directories (``/dev/zero`` would never end).
"""

from __future__ import annotations

import os
import stat

from ..errors import XFileError

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def file_kind(mode: int) -> str:
    for test, kind in _KINDS:
        if test(mode):
            return kind
    return "not a regular file"


def read_file(path: str) -> bytes:
    """The whole file; raises XFileError (naming ``path``) for anything but a regular file
    that stays the same while it is read."""
    try:
        # O_NONBLOCK (POSIX): opening a FIFO with no writer would otherwise wait forever
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
        fd = os.open(path, flags)
    except OSError as exc:
        raise XFileError(f"cannot open: {exc.strerror or exc}", path) from None
    try:
        before = os.fstat(fd)
        if not stat.S_ISREG(before.st_mode):
            raise XFileError(f"cannot read {file_kind(before.st_mode)}, only files", path)
        size = before.st_size
        with open(fd, "rb", closefd=False) as handle:
            data = read_exactly(handle, size)
            grew = bool(handle.read(1))
        after = os.fstat(fd)
    except OSError as exc:
        raise XFileError(f"cannot read: {exc.strerror or exc}", path) from None
    finally:
        os.close(fd)
    same = (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    if len(data) != size or grew or not same:
        raise XFileError(
            f"the file changed while it was read ({size} bytes when opened, "
            f"{after.st_size} after); is another program writing it?",
            path,
        )
    return data


def read_exactly(handle: object, size: int) -> bytes:
    """Up to ``size`` bytes from a buffered binary file (fewer only at its end)."""
    return handle.read(size)  # type: ignore[attr-defined]
