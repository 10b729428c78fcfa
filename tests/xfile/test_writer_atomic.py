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

from addon.xfile import XFileError, XObject, read, scene_of
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
    assert len(scene_of(read(fresh)).all_meshes()[0].positions) == 9


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


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_symlink_is_written_through_and_stays_a_link(fmt: str, tmp_path: Path) -> None:
    """Issue 34 item 5: an export to a symlink replaced the link with a file and left the
    linked asset old. As Blender's OBJ exporter does, the linked file gets the new bytes (its
    temporary file beside it, in its own folder) and the link stays."""
    assets = tmp_path / "assets"
    assets.mkdir()
    kept = assets / "kept.x"
    write_file(kept, grid_doc(2), fmt)
    kept.chmod(0o640)
    work = tmp_path / "work"
    work.mkdir()
    link = work / "model.x"
    link.symlink_to(kept)
    write_file(link, grid_doc(4), fmt)
    assert link.is_symlink() and os.readlink(link) == str(kept)
    assert len(scene_of(read(kept)).all_meshes()[0].positions) == 16  # 4 x 4, was 2 x 2
    assert kept.stat().st_mode & 0o777 == 0o640
    assert _leftovers(assets, "kept.x") == [] and _leftovers(work, "model.x") == []
    chain = work / "chain.x"  # a link to a link: the final file
    chain.symlink_to(link)
    write_file(chain, grid_doc(3), fmt)
    assert chain.is_symlink() and link.is_symlink()
    assert len(scene_of(read(kept)).all_meshes()[0].positions) == 9


def test_a_dangling_symlink_creates_its_target(tmp_path: Path) -> None:
    link = tmp_path / "model.x"
    link.symlink_to(tmp_path / "made.x")
    write_file(link, grid_doc(2))
    assert link.is_symlink() and len(scene_of(read(tmp_path / "made.x")).all_meshes()) == 1


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_read_only_file_is_refused_and_kept(fmt: str, tmp_path: Path) -> None:
    """Issue 34 item 5: an export over a read-only file replaced it (the rename needs only
    the folder's permission; root passes every permission check, so the mode bits decide)."""
    target = tmp_path / "model.x"
    target.write_bytes(b"read-only asset")
    target.chmod(0o444)
    with pytest.raises(XFileError, match=r"model\.x: cannot write: the file is read-only"):
        write_file(target, grid_doc(3), fmt)
    assert target.read_bytes() == b"read-only asset"
    assert target.stat().st_mode & 0o777 == 0o444
    assert _leftovers(tmp_path, "model.x") == []
    link = tmp_path / "link.x"  # through a link: the message names both
    link.symlink_to(target)
    with pytest.raises(XFileError, match=r"link\.x -> .*model\.x: cannot write: .*read-only"):
        write_file(link, grid_doc(3), fmt)
    assert target.read_bytes() == b"read-only asset" and link.is_symlink()


def test_a_document_deeper_than_the_reader_reads_is_refused(tmp_path: Path) -> None:
    """Issue 34 item 6: the writer wrote hierarchies the reader refused (255 levels and
    more); now what it writes reads back, and past the reader's 10,000 levels it refuses."""
    from addon.xfile.parser import MAX_DEPTH
    from addon.xfile.writer import nesting_depth, write

    assert MAX_DEPTH == 10_000
    root = tip = xo.frame("f0", np.eye(4))  # its FrameTransformMatrix is one level deeper
    for i in range(1, MAX_DEPTH - 1):
        child = xo.frame(f"f{i}", np.eye(4))
        tip.children.append(child)
        tip = child
    doc = xo.document([root])
    assert nesting_depth(doc) == MAX_DEPTH  # 9,999 frames and the last one's matrix
    target = tmp_path / "rope.x"
    write_file(target, doc, "bin")
    assert nesting_depth(read(target)) == MAX_DEPTH
    tip.children.append(xo.frame("one_more", np.eye(4)))
    for fmt in FORMATS:
        with pytest.raises(XFileError, match=r"rope\.x: objects nested 10,001 levels deep: the "
                           r"reader reads at most 10,000 .*Clear Parent"):  # fmt: skip
            write_file(target, doc, fmt)
    with pytest.raises(XFileError, match=r"^<data>: objects nested 10,001 levels deep"):
        write(doc, "txt")
    assert nesting_depth(read(target)) == MAX_DEPTH  # the file is as it was
