"""What a path may be: a file that changes while it is read, FIFOs and devices, names that
are not UTF-8, memory running out. Each ends in one XFileError, never a crash or a hang."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from addon.xfile import XFileError, read
from addon.xfile.container import source as source_module

from .test_read_big import grid_text

ROOT = Path(__file__).resolve().parents[2]

# Run in a child: on a memory-mapped read this truncation ended the process with SIGBUS.
_TRUNCATE_BEFORE_PARSE = textwrap.dedent(
    """
    import subprocess, sys
    sys.path.insert(0, sys.argv[2])
    from addon.xfile import XFileError, read, reader
    path, real = sys.argv[1], reader.open_container

    def truncated_by_another_process(*args, **kwargs):
        subprocess.run(["truncate", "-s", "100", path], check=True)
        return real(*args, **kwargs)

    reader.open_container = truncated_by_another_process
    try:
        doc = read(path)
        print("read", [o.template for o in doc.objects])
    except XFileError as exc:
        print("error", exc)
    """
)


@pytest.fixture(scope="module")
def big_text() -> bytes:
    return grid_text(200)[0]  # ~1.3 MB: files this big were memory-mapped


def test_file_truncated_by_another_process_during_the_read_does_not_crash(
    big_text: bytes, tmp_path: Path
) -> None:
    path = tmp_path / "shrinking.x"
    path.write_bytes(big_text)
    child = subprocess.run(
        [sys.executable, "-c", _TRUNCATE_BEFORE_PARSE, str(path), str(ROOT)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert child.returncode == 0, (child.returncode, child.stderr[-2000:])  # -7: SIGBUS
    # the bytes were in memory before the truncation: the document is the file as opened
    assert child.stdout.strip() == "read ['Mesh', 'Frame']"
    assert path.stat().st_size == 100


@pytest.mark.parametrize("change", ["shrinks", "grows"])
def test_file_that_changes_while_it_is_read_is_an_xfileerror(
    big_text: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    path = tmp_path / "changing.x"
    path.write_bytes(big_text)
    real = source_module.read_exactly

    def changed_by_another_process(handle: object, size: int) -> bytes:
        if change == "shrinks":
            subprocess.run(["truncate", "-s", str(size // 2), str(path)], check=True)
        else:
            subprocess.run(["sh", "-c", f"printf 'Frame more {{}}' >> '{path}'"], check=True)
        return real(handle, size)

    monkeypatch.setattr(source_module, "read_exactly", changed_by_another_process)
    with pytest.raises(XFileError) as caught:
        read(path)
    assert caught.value.path == str(path)
    assert "changed while it was read" in caught.value.reason
    assert f"({len(big_text)} bytes when opened" in caught.value.reason


def test_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.x"
    os.mkfifo(fifo)
    with pytest.raises(XFileError) as caught:
        read(fifo)  # opening a FIFO for reading waits for a writer: O_NONBLOCK
    assert caught.value.reason == "cannot read a FIFO (named pipe), only files"
    assert caught.value.path == str(fifo)


@pytest.mark.parametrize(
    ("path", "kind"), [("/dev/zero", "a character device"), ("/tmp", "a directory")]
)
def test_devices_and_directories_are_refused(path: str, kind: str) -> None:
    with pytest.raises(XFileError) as caught:
        read(path)
    assert caught.value.reason == f"cannot read {kind}, only files"


def test_cli_refuses_dev_zero_at_once() -> None:
    child = subprocess.run(
        [sys.executable, "-m", "addon.xfile", "info", "/dev/zero"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert child.returncode == 1
    assert child.stderr == "error: /dev/zero: cannot read a character device, only files\n"


NON_UTF8 = os.fsdecode(b"mod\xe8le \xff.x")  # a Latin-1 name: surrogates for \xe8 and \xff


def test_file_name_that_is_not_utf8_reads_and_its_errors_print(tmp_path: Path) -> None:
    good = tmp_path / NON_UTF8
    good.write_bytes(b"xof 0303txt 0032\nFrame a { }\n")
    assert [o.name for o in read(good).objects] == ["a"]
    bad = tmp_path / ("bad " + NON_UTF8)
    bad.write_bytes(b"xof 0303txt 0032\nFrame a { }}\n")
    with pytest.raises(XFileError) as caught:
        read(bad)
    text = str(caught.value)
    assert text.encode("utf-8")  # printable on a UTF-8 terminal: the raw name is not
    assert (
        text == f"{tmp_path}/bad mod\\xe8le \\xff.x:2:12: expected a template or a data "
        "object, found '}'"
    )
    assert caught.value.path == str(bad)  # the real name, for callers that open it again


class _BytesPath:
    def __init__(self, path: bytes) -> None:
        self.path = path

    def __fspath__(self) -> bytes:
        return self.path


def test_bytes_path_like_is_a_path(tmp_path: Path) -> None:
    name = os.fsencode(tmp_path) + b"/\xff.x"
    Path(os.fsdecode(name)).write_bytes(b"xof 0303txt 0032\nFrame b { }\n")
    doc = read(_BytesPath(name))
    assert doc.path == os.fsdecode(name) and [o.name for o in doc.objects] == ["b"]


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "addon.xfile", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=60, errors="surrogateescape",
        env={**os.environ, "PYTHONIOENCODING": "utf-8", **(env or {})},
    )  # fmt: skip


def test_cli_with_a_non_utf8_file_name_prints_and_exits_1(tmp_path: Path) -> None:
    good = tmp_path / NON_UTF8
    good.write_bytes(b"xof 0303txt 0032\nFrame a { }\n")
    shown = f"{tmp_path}/mod\\xe8le \\xff.x"
    ok = run_cli("info", str(good))  # strict UTF-8 stdout: the raw name cannot be printed
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.splitlines()[0] == f"{shown}: .X 0303 txt, 32-bit floats"
    good.write_bytes(b"xof 0303txt 0032\nFrame a { }}\n")
    bad = run_cli("info", str(good))
    assert bad.returncode == 1 and "Traceback" not in bad.stderr
    assert bad.stderr.startswith(f"error: {shown}:2:12: expected a template")
    as_json = run_cli("info", str(good), "--json")
    assert as_json.returncode == 1
    assert json.loads(as_json.stdout)["error"]["file"] == str(good)


def test_cli_out_of_memory_is_one_clear_error(big_text: bytes, tmp_path: Path) -> None:
    path = tmp_path / "big.x"
    body = big_text.split(b"\n", 1)[1]  # one header, then the objects 8 times: a valid file
    path.write_bytes(big_text + body * 7)  # ~10 MB of numbers: ~80 MB of arrays
    script = textwrap.dedent(
        """
        import resource, sys
        sys.path.insert(0, sys.argv[2])
        from addon.xfile import cli
        usage = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
        resource.setrlimit(resource.RLIMIT_AS, (usage + (24 << 20), resource.RLIM_INFINITY))
        sys.exit(cli.main(["info", sys.argv[1], *sys.argv[3:]]))
        """
    )
    for extra in ([], ["--json"]):
        child = subprocess.run(
            [sys.executable, "-c", script, str(path), str(ROOT), *extra],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert child.returncode == 1, (child.returncode, child.stderr[-2000:])
        assert "Traceback" not in child.stderr and "MemoryError" not in child.stderr
        if extra:
            error = json.loads(child.stdout)["error"]
            assert error["message"] == "not enough memory to read the file"
        else:
            assert child.stderr == f"error: {path}: not enough memory to read the file\n"
