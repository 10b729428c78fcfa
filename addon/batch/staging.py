"""Staging folders: where a worker writes one output before moving it into place.

Each is a hidden folder beside the output, named ``.STEM.xof-staging-HOST-PID-RANDOM`` after
the host and the process that writes into it. A worker killed mid-export leaves its folder;
the next run removes such folders when their process is gone on this host (a folder of a
process still running, here or on another host of a cluster, is left alone).
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import tempfile
from pathlib import Path

MARK = "xof-staging-"
_WORKER_MODULE = b"addon.batch.worker"


def host_tag() -> str:
    """This host's name as a folder name holds it."""
    return re.sub(r"[^A-Za-z0-9.]", "_", socket.gethostname())[:40] or "host"


def make(folder: Path, stem: str) -> Path:
    """A new staging folder in ``folder`` for an output named ``stem``."""
    prefix = f".{stem}.{MARK}{host_tag()}-{os.getpid()}-"
    return Path(tempfile.mkdtemp(prefix=prefix, dir=folder))


def owner(name: str) -> tuple[str, int] | None:
    """``(host, pid)`` of a staging folder's name; None for any other name."""
    at = name.rfind("." + MARK)
    if not name.startswith(".") or at < 0:
        return None
    parts = name[at + 1 + len(MARK) :].rsplit("-", 2)
    if len(parts) != 3 or not all(parts) or not parts[1].isdigit():
        return None
    return parts[0], int(parts[1])


def running(pid: int) -> bool:
    """Whether ``pid`` is a batch worker still running on this host (in doubt: yes)."""
    if pid == os.getpid():
        return True
    if os.name == "nt":  # os.kill would end the process there: cannot ask, so keep
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: it exists
        return True
    cmdline = Path(f"/proc/{pid}/cmdline")
    try:  # where /proc tells, a reused pid of another program does not keep the folder
        return _WORKER_MODULE in cmdline.read_bytes()
    except OSError:
        return True


def remove_stale(out: Path) -> tuple[list[Path], list[Path]]:
    """Remove the staging folders under ``out`` whose worker is gone; ``(removed, left)``,
    ``left`` being those made on another host (whose processes cannot be checked from here)."""
    removed: list[Path] = []
    left: list[Path] = []
    here = host_tag()
    for dirpath, dirnames, _files in os.walk(out):
        for name in list(dirnames):
            who = owner(name)
            if who is None:
                continue
            dirnames.remove(name)  # never search inside a staging folder
            folder = Path(dirpath) / name
            if folder.is_symlink():
                continue
            if who[0] != here:
                left.append(folder)
            elif not running(who[1]):
                shutil.rmtree(folder, ignore_errors=True)
                if not folder.exists():
                    removed.append(folder)
    return removed, left
