"""A failed write leaves the previous file whole: ``write_file`` writes a temporary file
beside the target and renames it over the target only when complete; the error names the
path and the cause; no temporary file is left behind. Failures: an OSError injected at the
write, and a real full disk (a small tmpfs, when this process may mount one)."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from addon.xfile import XFileError, XObject, read
from addon.xfile.writer import objects as xo
from addon.xfile.writer import write_file

FORMATS = ["txt", "bin", "tzip", "bzip"]


def grid_doc(n: int) -> object:
    """A mesh of ``n`` x ``n`` vertices (quads), big enough to fill a small disk."""
    xs, ys = np.meshgrid(np.arange(n, dtype=np.float64), np.arange(n, dtype=np.float64))
    positions = np.column_stack([xs.ravel(), ys.ravel(), np.zeros(n * n)])
    i, j = np.meshgrid(np.arange(n - 1), np.arange(n - 1))
    a = (j * n + i).ravel()
    quads = np.column_stack([a, a + 1, a + n + 1, a + n]).reshape(-1)
    mesh: XObject = xo.mesh("Grid", positions, np.full(len(a), 4), quads)
    return xo.document([mesh])


def _leftovers(folder: Path, keep: str) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name != keep)


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_error_at_write_keeps_the_old_file(
    fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "model.x"
    write_file(target, grid_doc(3), fmt)
    before = target.read_bytes()
    real_fdopen = os.fdopen

    class Full:
        def __init__(self, handle: object) -> None:
            self.handle = handle

        def __enter__(self) -> Full:
            return self

        def __exit__(self, *exc: object) -> None:
            self.handle.close()  # type: ignore[attr-defined]

        def write(self, data: object) -> None:
            self.handle.write(b"xof 0303txt 0032 partial")  # type: ignore[attr-defined]
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fdopen", lambda fd, mode: Full(real_fdopen(fd, mode)))
    with pytest.raises(XFileError) as caught:
        write_file(target, grid_doc(20), fmt)
    message = str(caught.value)
    assert str(target) in message and os.strerror(errno.ENOSPC) in message
    assert target.read_bytes() == before  # the previous file, whole
    assert _leftovers(tmp_path, "model.x") == []  # no temporary file left


def test_a_piece_that_fails_to_spell_keeps_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # big arrays are spelled by threads while the first pieces are written: a failure in a
    # later piece must still leave the previous file whole and no temporary file behind
    from addon.xfile.writer import text_digits

    target = tmp_path / "model.x"
    write_file(target, grid_doc(3), "txt")
    before = target.read_bytes()
    real_rows, calls = text_digits._rows, [0]

    def failing(*args: object) -> object:
        calls[0] += 1
        if calls[0] == 3:
            raise MemoryError("spelling failed")
        return real_rows(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(text_digits, "_rows", failing)
    with pytest.raises(MemoryError):
        write_file(target, grid_doc(200), "txt")  # 120k values: several steps, in threads
    assert calls[0] >= 3
    assert target.read_bytes() == before
    assert _leftovers(tmp_path, "model.x") == []


def test_a_new_file_gets_normal_permissions_and_a_replaced_one_keeps_its_own(
    tmp_path: Path,
) -> None:
    fresh = tmp_path / "new.x"
    write_file(fresh, grid_doc(2))
    umask = os.umask(0)
    os.umask(umask)
    assert fresh.stat().st_mode & 0o777 == 0o666 & ~umask
    fresh.chmod(0o640)
    write_file(fresh, grid_doc(3))
    assert fresh.stat().st_mode & 0o777 == 0o640
    assert len(read(fresh).scene().all_meshes()[0].positions) == 9


def test_a_missing_folder_is_named(tmp_path: Path) -> None:
    target = tmp_path / "gone" / "model.x"
    with pytest.raises(XFileError, match=r"gone.*model\.x: cannot write: No such file"):
        write_file(target, grid_doc(2))


@pytest.fixture
def small_disk(tmp_path: Path):
    """A 256 KiB tmpfs (needs root and a kernel that lets this process mount)."""
    mount = shutil.which("mount")
    point = tmp_path / "disk"
    point.mkdir()
    if mount is None or os.geteuid() != 0:
        pytest.skip("a full disk needs root to mount a small tmpfs; the injected error covers it")
    done = subprocess.run(
        [mount, "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(point)],
        capture_output=True, text=True,
    )  # fmt: skip
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip()}); the injected error "
                    "covers the full disk")  # fmt: skip
    try:
        yield point
    finally:
        subprocess.run(["umount", str(point)], check=False)


@pytest.mark.parametrize("fmt", ["txt", "bin"])
def test_a_full_disk_keeps_the_old_file(fmt: str, small_disk: Path) -> None:
    target = small_disk / "model.x"
    write_file(target, grid_doc(10), fmt)
    before = target.read_bytes()
    with pytest.raises(XFileError) as caught:
        write_file(target, grid_doc(300), fmt)  # megabytes: more than the disk holds
    assert str(target) in str(caught.value)
    assert os.strerror(errno.ENOSPC) in str(caught.value)
    assert target.read_bytes() == before
    assert _leftovers(small_disk, "model.x") == []


def test_pieces_spelled_ahead_give_the_joined_text(tmp_path: Path) -> None:
    # the file written piece by piece (futures from the threads) is the one-piece text
    from addon.xfile.writer import write

    doc = grid_doc(200)
    target = tmp_path / "model.x"
    size = write_file(target, doc, "txt")
    data = target.read_bytes()
    assert size == len(data)
    assert data == write(doc, "txt")


def _fds_on(inode: tuple[int, int]) -> list[int]:
    """This process's descriptors open on the file ``(st_dev, st_ino)``."""
    out = []
    for name in os.listdir("/proc/self/fd"):
        try:
            st = os.stat(int(name))
        except OSError:
            continue
        if (st.st_dev, st.st_ino) == inode:
            out.append(int(name))
    return out


def _wait_until(check: object, seconds: float = 10.0) -> bool:
    import time

    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if check():  # type: ignore[operator]
            return True
        time.sleep(0.01)
    return False


@pytest.mark.skipif(not hasattr(os, "O_PATH"), reason="O_PATH is Linux's")
@pytest.mark.parametrize("fmt", FORMATS)
def test_the_replaced_file_is_held_over_the_rename_and_let_go(
    fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the old file is still open (an O_PATH descriptor) when the rename replaces it, so the
    # rename does not free it; a thread closes that descriptor afterwards, and none is left
    target = tmp_path / "model.x"
    target.write_bytes(b"old file")
    st = os.stat(target)
    old = (st.st_dev, st.st_ino)
    real_replace = os.replace
    held: list[list[int]] = []

    def replace(src: object, dst: object) -> None:
        held.append(_fds_on(old))
        real_replace(src, dst)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "replace", replace)
    write_file(target, grid_doc(4), fmt)
    assert len(held) == 1 and len(held[0]) == 1  # held while renamed
    assert read(target).objects[0].template == "Mesh"
    assert _wait_until(lambda: not _fds_on(old))  # and let go
    assert _leftovers(tmp_path, "model.x") == []
    fresh = tmp_path / "new.x"  # nothing to replace: nothing held
    write_file(fresh, grid_doc(4), fmt)
    assert held[-1] == [] and fresh.is_file()


@pytest.mark.skipif(not hasattr(os, "O_PATH"), reason="O_PATH is Linux's")
def test_a_failed_rename_lets_go_of_the_old_file_and_keeps_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "model.x"
    target.write_bytes(b"old file")
    st = os.stat(target)

    def refuse(src: object, dst: object) -> None:
        raise OSError(errno.EXDEV, os.strerror(errno.EXDEV))

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(XFileError):
        write_file(target, grid_doc(4), "bin")
    assert target.read_bytes() == b"old file"
    assert _wait_until(lambda: not _fds_on((st.st_dev, st.st_ino)))
    assert _leftovers(tmp_path, "model.x") == []


@pytest.mark.skipif(not hasattr(os, "O_PATH"), reason="O_PATH is Linux's")
def test_a_symlink_is_replaced_and_its_target_kept(tmp_path: Path) -> None:
    # as before: the rename replaces the link itself (the descriptor is the link's own)
    kept = tmp_path / "kept.x"
    kept.write_bytes(b"kept")
    link = tmp_path / "model.x"
    link.symlink_to(kept)
    write_file(link, grid_doc(4), "txt")
    assert not link.is_symlink() and kept.read_bytes() == b"kept"
    assert read(link).objects[0].template == "Mesh"
