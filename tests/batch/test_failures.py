"""What the batch does when things go wrong, and when it is run again.

Each case checks the documented report and exit code and that nothing else is lost: the
other files convert, no half-written output is left, a rerun resumes.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from addon.batch import cli
from tests.scene.skin_fixtures import character_text

from .batch_fixtures import ROOT

pytestmark = [pytest.mark.blender, pytest.mark.slow]


def _files(folder: Path, names: list[str]) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    text = character_text()
    paths = []
    for name in names:
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "ascii")
        paths.append(path)
    return paths


def _convert(args: list[str], report: Path) -> tuple[int, dict[str, dict]]:
    code = cli.main(["convert", *args, "--report", str(report)])
    doc = json.loads(report.read_text())
    assert doc["exit_code"] == code
    return code, {f["relative"] or f["source"]: f for f in doc["files"]}


@pytest.fixture
def crash_env(monkeypatch: pytest.MonkeyPatch):
    def set_hook(spec: str) -> None:
        monkeypatch.setenv("XOF_BATCH_TEST_CRASH", spec)

    return set_hook


def test_workers_that_exit_or_hang_are_replaced(tmp_path: Path, crash_env) -> None:
    crash_env("exit:a.x,hang:b.x")
    _files(tmp_path / "in", ["a.x", "b.x", "c.x", "d.x"])
    start = time.monotonic()
    code, files = _convert(
        [str(tmp_path / "in"), "--to", "glb", "--out", str(tmp_path / "out"), "--workers", "1",
         "--timeout", "3"],
        tmp_path / "report.json",
    )  # fmt: skip
    assert code == 1
    assert files["a.x"]["status"] == "crashed"
    assert files["a.x"]["error"].startswith("the worker exited with code 70 during the conversion")
    assert files["b.x"]["status"] == "crashed"
    assert files["b.x"]["error"] == "no result after 3 s; the worker was stopped"
    assert files["c.x"]["status"] == files["d.x"]["status"] == "converted"
    assert files["c.x"]["worker_pid"] == files["d.x"]["worker_pid"]  # one new worker, kept
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["c.glb", "d.glb"]
    assert time.monotonic() - start < 120


def test_an_output_folder_that_cannot_be_written(tmp_path: Path) -> None:
    _files(tmp_path / "in", ["ok.x", "blocked/a.x"])
    out = tmp_path / "out"
    out.mkdir()
    (out / "blocked").write_text("a file where the folder must go")
    code, files = _convert(
        [str(tmp_path / "in"), "--to", "glb", "--out", str(out), "--workers", "1"],
        tmp_path / "report.json",
    )
    assert code == 1
    assert files["blocked/a.x"]["status"] == "failed"
    assert files["blocked/a.x"]["error"].startswith("cannot write the output: ")
    assert files["ok.x"]["status"] == "converted"
    assert (out / "blocked").read_text() == "a file where the folder must go"
    assert sorted(p.name for p in out.iterdir()) == ["blocked", "ok.glb"]


@pytest.mark.skipif(
    os.geteuid() == 0, reason="root writes into read-only folders: run as another user to test this"
)
def test_a_read_only_output_folder_is_refused_before_any_work(tmp_path: Path, capsys) -> None:
    _files(tmp_path / "in", ["a.x"])
    out = tmp_path / "out"
    out.mkdir()
    out.chmod(0o500)
    try:
        code = cli.main(["convert", str(tmp_path / "in"), "--to", "glb", "--out", str(out)])
    finally:
        out.chmod(0o700)
    assert code == 2
    assert "cannot use the output folder" in capsys.readouterr().err


def test_an_interrupted_run_resumes(tmp_path: Path) -> None:
    _files(tmp_path / "in", ["a.x", "b.x", "c.x", "d.x"])
    out, report = tmp_path / "out", tmp_path / "report.json"
    args = [sys.executable, "-m", "addon.batch", "convert", str(tmp_path / "in"), "--to", "glb",
            "--out", str(out), "--workers", "1", "--report", str(report)]  # fmt: skip
    env = dict(os.environ, XOF_BATCH_TEST_CRASH="hang:c.x")
    proc = subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not (out / "b.glb").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(1.0)  # the worker is now in c.x, hanging
    proc.send_signal(signal.SIGINT)
    stdout, _ = proc.communicate(timeout=180)  # generous: a loaded machine starts bpy slowly
    assert proc.returncode == 130, stdout
    assert "interrupted: finished files are kept; run again to resume" in stdout
    doc = json.loads(report.read_text())
    assert doc["interrupted"] is True and doc["exit_code"] == 130
    status = {f["relative"]: f["status"] for f in doc["files"]}
    assert status == {"a.x": "converted", "b.x": "converted", "c.x": "not run", "d.x": "not run"}
    assert sorted(p.name for p in out.iterdir()) == ["a.glb", "b.glb"]  # no staging left
    a_time = (out / "a.glb").stat().st_mtime_ns

    resumed = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    status = {f["relative"]: f["status"] for f in json.loads(report.read_text())["files"]}
    assert status == {"a.x": "skipped", "b.x": "skipped", "c.x": "converted", "d.x": "converted"}
    assert (out / "a.glb").stat().st_mtime_ns == a_time


def test_up_to_date_outputs_are_skipped_unless_forced(tmp_path: Path) -> None:
    (src,) = _files(tmp_path / "in", ["a.x"])
    args = [str(src), "--to", "glb", "--out", str(tmp_path / "out"), "--workers", "1"]
    assert _convert(args, tmp_path / "r.json")[1]["a.x"]["status"] == "converted"
    assert _convert(args, tmp_path / "r.json")[1]["a.x"]["status"] == "skipped"
    assert _convert([*args, "--force"], tmp_path / "r.json")[1]["a.x"]["status"] == "converted"
    later = time.time() + 10
    os.utime(src, (later, later))  # the input changed after its conversion
    code, files = _convert(args, tmp_path / "r.json")
    assert code == 0 and files["a.x"]["status"] == "converted"


def test_new_import_options_pass_through_or_are_refused(tmp_path: Path, capsys) -> None:
    """--ticks-per-second reaches the operator when it has the property, else exit 2."""
    bpy = pytest.importorskip("bpy")  # before addon_utils, which comes with it
    import addon_utils

    addon_utils.enable("xof", default_set=True)
    try:
        has = "animation_ticks_per_second" in bpy.ops.import_scene.x.get_rna_type().properties
    finally:
        addon_utils.disable("xof", default_set=True)
    (src,) = _files(tmp_path / "in", ["a.x"])
    args = ["convert", str(src), "--to", "glb", "--out", str(tmp_path / "out"), "--workers", "1",
            "--ticks-per-second", "4800", "--scale", "2"]  # fmt: skip
    code = cli.main(args)
    err = capsys.readouterr().err
    if has:
        assert code == 0, err
    else:
        assert code == 2
        assert "--ticks-per-second is not supported by this version of the importer" in err
        assert not (tmp_path / "out" / "a.glb").exists()


# --- hostile and unlucky libraries (issue 34, items 11 to 15; issue 35, item 8) ----------------


def test_links_out_of_the_tree_and_hostile_names(tmp_path: Path, capsys) -> None:
    """A link to a file outside the input folder stopped the batch (a traceback, exit 1,
    nothing converted); a broken link is a line of the report; a name holding ESC [2J reached
    the terminal raw and its error named it three times."""
    lib = tmp_path / "lib"
    _files(lib, ["a.x"])
    (outside,) = _files(tmp_path / "elsewhere", ["model.x"])
    (lib / "ext.x").symlink_to(outside)
    (lib / "gone.x").symlink_to(tmp_path / "nothing.x")
    bad = lib / "bad\x1b[2J.x"
    bad.write_text("xof 0303txt 0032\nFrame Broken {\n FrameTransformMatrix { 1.0;")
    out = tmp_path / "out"
    code, files = _convert([str(lib), "--to", "glb", "--out", str(out), "--workers", "1"],
                           tmp_path / "report.json")  # fmt: skip
    assert code == 1  # the bad file failed; the others are fine
    assert files["a.x"]["status"] == files["ext.x"]["status"] == "converted"
    assert (out / "ext.glb").is_file() and (out / "a.glb").is_file()
    gone = files[str(lib / "gone.x")]
    assert gone["status"] == "skipped" and gone["reason"] == "a broken link: nothing to read"
    shown = str(bad).replace("\x1b", "\\x1b")
    error = files["bad\x1b[2J.x"]["error"]
    assert error.startswith(f"{shown}:3:") and error.count(str(tmp_path)) == 1
    text = capsys.readouterr().out
    assert "\x1b" not in text
    (line,) = [ln for ln in text.splitlines() if ln.startswith("FAILED:")]
    assert line == f"FAILED: {error}"
    assert f"SKIPPED: {lib / 'gone.x'}: a broken link: nothing to read" in text


def test_an_output_folder_inside_the_input_is_left_out(tmp_path: Path, capsys) -> None:
    """``convert lib --to x --out lib/out``: each run converted the last run's outputs one
    level deeper (lib/out/out/a.x on the second run)."""
    lib = tmp_path / "lib"
    _files(lib, ["a.x"])
    out = lib / "out"
    args = [str(lib), "--to", "x", "--out", str(out), "--workers", "1"]
    assert _convert(args, tmp_path / "r.json")[1]["a.x"]["status"] == "converted"
    code, files = _convert(args, tmp_path / "r.json")
    assert code == 0 and list(files) == ["a.x"] and files["a.x"]["status"] == "skipped"
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == ["a.x"]
    note = f"note: the output folder {out} is inside the input {lib}: not searched"
    assert note in capsys.readouterr().err
    assert json.loads((tmp_path / "r.json").read_text())["notes"] == [note[len("note: ") :]]


def _state(pid: int) -> str | None:
    """The process's state letter (``Z``: a zombie), None when there is no such process."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def _workers_of(parent: int) -> list[int]:
    """Batch worker processes whose parent is ``parent`` (read from /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            command = (stat.parent / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if ppid == parent and b"addon.batch.worker" in command:
            found.append(int(stat.parent.name))
    return found


def _running(pid: int) -> bool:
    return _state(pid) not in (None, "Z")


def _start_and_kill(tmp_path: Path, hook: str, ready) -> int:
    """Start a batch of a.x and b.x whose worker hangs on b.x (``hook``), SIGKILL the parent
    once ``ready()``; the worker's pid."""
    _files(tmp_path / "in", ["a.x", "b.x"])
    args = [sys.executable, "-m", "addon.batch", "convert", str(tmp_path / "in"), "--to", "glb",
            "--out", str(tmp_path / "out"), "--workers", "1"]  # fmt: skip
    env = dict(os.environ, XOF_BATCH_TEST_CRASH=hook)
    proc = subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while not ready() and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1.0)  # the worker is now in b.x, hanging
        workers = _workers_of(proc.pid)
    finally:
        proc.kill()
        proc.wait()
    assert len(workers) == 1, workers
    return workers[0]


@pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="finds workers through /proc")
def test_a_hung_worker_ends_when_its_parent_is_killed(tmp_path: Path) -> None:
    """A worker hanging on a file outlived its killed parent: still running 10 s later, 271 MB.
    It watches its parent and ends within a second or so of it."""
    out = tmp_path / "out"
    worker = _start_and_kill(tmp_path, "hang:b.x", lambda: (out / "a.glb").exists())
    try:
        deadline = time.monotonic() + 5
        while _running(worker) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _running(worker)
    finally:
        if _running(worker):
            os.kill(worker, signal.SIGKILL)


@pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="finds workers through /proc")
def test_a_killed_runs_staging_folder_is_removed_by_the_next_run(tmp_path: Path, capsys) -> None:
    """A run killed while its worker wrote b's output left the hidden staging folder
    ``.b.XXXXXXXX`` in the output for good; the next run removes it (its worker is gone)."""
    out = tmp_path / "out"
    worker = _start_and_kill(tmp_path, "hang-export:b.x", lambda: any(out.glob(".b.*")))
    try:
        deadline = time.monotonic() + 5
        while _running(worker) and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        if _running(worker):
            os.kill(worker, signal.SIGKILL)
    (left,) = out.glob(".b.*")
    assert left.is_dir()  # what the killed run leaves
    code, files = _convert([str(tmp_path / "in"), "--to", "glb", "--out", str(out),
                            "--workers", "1"], tmp_path / "r.json")  # fmt: skip
    assert code == 0 and files["b.x"]["status"] == "converted"
    assert sorted(p.name for p in out.iterdir()) == ["a.glb", "b.glb"]
    err = capsys.readouterr().err
    assert f"note: removed 1 staging folder(s) that killed runs left in {out}: {left.name}" in err


def test_animation_only_files_are_skipped_with_the_reason(tmp_path: Path, capsys) -> None:
    """An animation-only file was reported "converted" into a 132-byte glb holding nothing."""
    from tests.scene.skin_fixtures import anim_only_text

    _files(tmp_path / "in", ["a.x"])
    (tmp_path / "in" / "nod.x").write_text(anim_only_text(), "ascii")
    out = tmp_path / "out"
    code, files = _convert([str(tmp_path / "in"), "--to", "glb", "--out", str(out),
                            "--workers", "1"], tmp_path / "r.json")  # fmt: skip
    assert code == 0
    assert files["a.x"]["status"] == "converted"
    nod = files["nod.x"]
    assert nod["status"] == "skipped"
    assert nod["reason"].startswith("an animation-only file (1 animation set(s), no mesh)")
    assert sorted(p.name for p in out.iterdir()) == ["a.glb"]
    assert (
        f"SKIPPED: {tmp_path / 'in' / 'nod.x'}: an animation-only file" in capsys.readouterr().out
    )
