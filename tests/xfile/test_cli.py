"""The command-line contract: ``python -m addon.xfile info FILE [--json]``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .test_containers import TEXT_BODY

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "addon.xfile", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def test_json_summary(tmp_path: Path) -> None:
    path = tmp_path / "quad.x"
    path.write_bytes(b"xof 0302txt 0064" + TEXT_BODY + b"Frame F { Frame G {} }")
    result = run("info", str(path), "--json")
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    assert info["format"] == "txt" and info["version"] == "0302" and info["float_bits"] == 64
    assert info["objects"] == {"Mesh": 1, "MeshTextureCoords": 1, "Frame": 2}
    assert info["meshes"] == [{"name": "Quad", "vertices": 5, "faces": 2, "corners": 7}]
    assert info["warnings"] == [] and info["unresolved"] == []


def test_human_summary(tmp_path: Path) -> None:
    path = tmp_path / "quad.x"
    path.write_bytes(b"xof 0303txt 0032" + TEXT_BODY)
    result = run("info", str(path))
    assert result.returncode == 0
    assert "mesh Quad: 5 vertices, 2 faces, 7 corners" in result.stdout


def test_unreadable_file_one_line_exit_1(tmp_path: Path) -> None:
    path = tmp_path / "bad.x"
    path.write_bytes(b"xof 0303txt 0032\nMesh {\n  3;\n  oops\n}")
    result = run("info", str(path))
    assert result.returncode == 1
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and f"{path}:4:3:" in lines[0] and "Traceback" not in result.stderr
    missing = run("info", str(tmp_path / "missing.x"))
    assert missing.returncode == 1 and len(missing.stderr.strip().splitlines()) == 1


def test_json_error_is_one_object_on_stdout(tmp_path: Path) -> None:
    path = tmp_path / "bad.x"
    path.write_bytes(b"xof 0303txt 0032\nMesh {\n  3;\n  oops\n}")
    result = run("info", str(path), "--json")
    assert result.returncode == 1 and result.stderr == ""
    error = json.loads(result.stdout)["error"]
    assert error["file"] == str(path) and error["place"] == "4:3"
    assert error["message"].startswith("Mesh.vertices: 9 values wanted")
    missing = run("check", str(tmp_path / "missing.x"), "--json", "--strict")
    assert missing.returncode == 1
    assert json.loads(missing.stdout)["error"] == {
        "file": str(tmp_path / "missing.x"), "place": None,
        "message": "cannot open: No such file or directory",
    }  # fmt: skip


def test_control_characters_from_the_file_are_escaped(tmp_path: Path) -> None:
    path = tmp_path / "esc.x"
    # a name holding ESC (then "[2J": clear screen) and a bell: the error quotes the name
    path.write_bytes(b"xof 0303txt 0032\nFrame a\x07\x1b[2J { }\n")
    result = run("info", str(path))
    assert result.returncode == 1
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr
    escaped = "Frame a\\x07\\x1b"
    assert result.stderr == f"error: {path}:2:10: expected '{{' after {escaped}, found '['\n"
    path.write_bytes(b"xof 0303txt 0032\nMesh m\x1bx { 0;; 0;; }\n")
    ok = run("info", str(path))
    assert ok.returncode == 0 and "\x1b" not in ok.stdout
    assert "  mesh m\\x1bx: 0 vertices, 0 faces, 0 corners\n" in ok.stdout


def test_info_piped_into_a_reader_that_leaves_ends_quietly(tmp_path: Path) -> None:
    """``info FILE | head -1`` printed a BrokenPipeError traceback."""
    path = tmp_path / "many.x"
    meshes = b"".join(
        b"Mesh M%d { 3; 0;0;0;, 1;0;0;, 0;1;0;; 1; 3;0,1,2;; }\n" % i for i in range(3000)
    )
    path.write_bytes(b"xof 0303txt 0032" + meshes)  # more output than a pipe's buffer
    proc = subprocess.Popen(
        [sys.executable, "-m", "addon.xfile", "info", str(path), "--json"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.read(1)
    proc.stdout.close()  # the reader leaves after one byte
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 0
    assert err == ""
