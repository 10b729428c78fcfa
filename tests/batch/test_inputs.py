"""The parts of the batch tool that need no Blender: inputs, outputs, options, progress."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from addon.batch import cli, staging
from addon.batch.inputs import Source, expand, plan, up_to_date
from addon.batch.job import warnings_in
from addon.batch.options import IMPORT_FLAGS, coerce
from addon.batch.progress import Progress
from addon.batch.report import summary_table, totals


def _touch(path: Path, text: str = "xof 0303txt 0032\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_folders_are_searched_recursively_and_suffixes_in_any_case(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    a = _touch(lib / "a.x")
    b = _touch(lib / "deep" / "er" / "B.X")
    _touch(lib / "notes.txt")
    _touch(lib / "deep" / "model.xx")
    found = expand([str(lib)])
    assert found.problems == []
    assert found.pairs == [(a.resolve(), Path("a.x")), (b.resolve(), Path("deep/er/B.X"))]


def test_globs_keep_the_tree_below_their_fixed_part(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    a = _touch(lib / "one" / "a.x")
    b = _touch(lib / "two" / "b.x")
    _touch(lib / "two" / "c.txt")
    found = expand([str(lib / "*" / "*.x")])
    assert found.problems == []
    assert found.pairs == [(a.resolve(), Path("one/a.x")), (b.resolve(), Path("two/b.x"))]
    found = expand([str(lib / "**")])  # a recursive glob reaching folders
    assert sorted(r for _, r in found.pairs) == [Path("one/a.x"), Path("two/b.x")]


def test_a_named_file_goes_to_the_top_and_is_kept_once(tmp_path: Path) -> None:
    a = _touch(tmp_path / "x" / "y" / "a.x")
    found = expand([str(a), str(tmp_path / "x" / "y"), str(a)])
    assert found.problems == []
    assert found.pairs == [(a.resolve(), Path("a.x"))]


def test_inputs_naming_nothing_are_problems(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    problems = expand([str(tmp_path / "missing.x"), str(tmp_path / "empty"),
                       str(tmp_path / "*.x")]).problems  # fmt: skip
    assert len(problems) == 3
    assert "no such file" in problems[0]
    assert "no .x files" in problems[1]
    assert "matches no .x file" in problems[2]


def test_outputs_mirror_the_tree_and_collisions_are_named(tmp_path: Path) -> None:
    a = _touch(tmp_path / "in" / "sub" / "a.x")
    b = _touch(tmp_path / "other" / "sub" / "A.X")
    out = tmp_path / "out"
    sources, problems = plan([(a, Path("sub/a.x")), (b, Path("sub/A.X"))], out, ".glb")
    assert sources == [Source(a, Path("sub/a.x"), out.resolve() / "sub" / "a.glb")]
    assert len(problems) == 1 and str(b) in problems[0] and f"also {a}" in problems[0]


def test_up_to_date_compares_modification_times(tmp_path: Path) -> None:
    src = _touch(tmp_path / "a.x")
    out = tmp_path / "a.glb"
    source = Source(src, Path("a.x"), out)
    assert not up_to_date(source)  # no output yet
    out.write_bytes(b"glb")
    os.utime(src, (1000, 1000))
    os.utime(out, (2000, 2000))
    assert up_to_date(source)
    os.utime(src, (3000, 3000))  # the input changed after the conversion
    assert not up_to_date(source)


def test_values_take_the_operator_property_type() -> None:
    assert coerce("4800", "INT", False) == 4800
    assert coerce(0.01, "FLOAT", False) == 0.01
    assert coerce("Walk, Run", "ENUM", True) == {"Walk", "Run"}
    assert coerce("Walk,Run", "STRING", False) == "Walk,Run"
    assert coerce("yes", "BOOLEAN", False) is True
    with pytest.raises(ValueError):
        coerce("maybe", "BOOLEAN", False)
    with pytest.raises(ValueError):
        coerce("x", "POINTER", False)


def test_command_line_options_map_to_operator_properties() -> None:
    args = cli.build_parser().parse_args(
        ["convert", "a.x", "--to", "glb", "--out", "o", "--scale", "0.01", "--axis-up", "Z",
         "--no-materials", "--loop-morphs", "--ticks-per-second", "4800"]
    )  # fmt: skip
    assert cli.requested_options(args) == {
        "global_scale": 0.01,
        "axis_up": "Z",
        "use_materials": False,
        "morph_loop": True,
        "animation_ticks_per_second": "CUSTOM",
        "animation_custom_ticks_per_second": 4800.0,
    }
    props = {"global_scale": ("FLOAT", False), "axis_up": ("ENUM", False)}
    missing = cli.unsupported(cli.requested_options(args), props)
    assert {m.split(" ", 1)[0] for m in missing} == {
        "--no-materials", "--loop-morphs", "--ticks-per-second"
    }  # fmt: skip
    assert all("is not supported by this version of the importer" in m for m in missing)
    assert {f.prop for f in IMPORT_FLAGS} >= {"global_scale", "animation_sets"}


def test_usage_errors_exit_2_before_any_work(tmp_path: Path, capsys) -> None:
    assert cli.main(["convert", str(tmp_path / "nothing.x"), "--to", "glb", "--out",
                     str(tmp_path / "o")]) == 2  # fmt: skip
    assert "no such file" in capsys.readouterr().err
    src = _touch(tmp_path / "a.x")
    blocker = _touch(tmp_path / "file", "not a folder")
    assert cli.main(["convert", str(src), "--to", "glb", "--out", str(blocker)]) == 2
    assert "cannot use the output folder" in capsys.readouterr().err


def test_warnings_are_picked_from_what_the_stages_printed() -> None:
    text = (
        "xof: warning: Column: weights normalised\n"
        "Warning: Imported 4 objects, 3 meshes; 1 warnings (first: ...)\n"
        "21:35:41 | INFO: Starting glTF 2.0 export\n"
        "21:35:41 | WARNING: Animation target does not exist\n"
        "Warning: something Blender said\n"
    )
    assert warnings_in(text, "import") == [
        "import: Column: weights normalised",
        "import: Animation target does not exist",
        "import: something Blender said",
    ]


def test_progress_lines_without_a_terminal() -> None:
    stream = io.StringIO()
    with Progress(4, stream) as progress:
        progress.add("converted")
        progress.add("failed")
        progress.add("skipped")
        progress.add("crashed")
    last = stream.getvalue().strip().splitlines()[-1]
    assert last.startswith("progress: 4/4 files, failed 1 crashed 1 skipped 1")
    assert last.endswith("done")
    assert "\r" not in stream.getvalue()


def test_summary_table_counts_every_status() -> None:
    files = [
        {"source": "a.x", "status": "converted", "seconds": 1.5},
        {"source": "b.x", "status": "converted", "seconds": 0.5},
        {"source": "c.x", "status": "crashed", "seconds": 3.0, "error": "killed by SIGSEGV"},
        {"source": "d.x", "status": "not run"},
    ]
    assert totals(files)["converted"] == {"files": 2, "seconds": 2.0}
    stream = io.StringIO()
    summary_table(files, 4.25, stream)
    text = stream.getvalue()
    assert "converted       2      2.00" in text
    assert "not run         1" in text
    assert "total           4      4.25 (wall)" in text
    assert "CRASHED: c.x: killed by SIGSEGV" in text


def test_ticks_per_second_takes_the_import_operators_three_ways() -> None:
    def parsed(value: str) -> dict:
        base = ["convert", "a.x", "--to", "glb", "--out", "o", "--ticks-per-second", value]
        return cli.requested_options(cli.build_parser().parse_args(base))

    assert parsed("auto") == {"animation_ticks_per_second": "AUTO"}
    assert parsed("File") == {"animation_ticks_per_second": "FILE"}
    assert parsed("24") == {"animation_ticks_per_second": "CUSTOM",
                            "animation_custom_ticks_per_second": 24.0}  # fmt: skip
    for bad in ("-5", "0", "soon", "inf"):
        with pytest.raises(SystemExit):
            parsed(bad)


# --- hostile and unlucky inputs (issue 34, items 11, 12, 14, 15) -------------------------------


def test_a_link_out_of_the_tree_is_placed_by_its_link_path(tmp_path: Path) -> None:
    """One link to a file outside the folder stopped the whole batch: a ValueError traceback
    from ``relative_to``, exit 1, nothing converted. It is placed where the link is."""
    lib = tmp_path / "lib"
    a = _touch(lib / "a.x")
    model = _touch(tmp_path / "elsewhere" / "model.x")
    (lib / "sub").mkdir()
    (lib / "sub" / "ext.x").symlink_to(model)
    (lib / "sub" / "broken.x").symlink_to(tmp_path / "nothing.x")
    (lib / "linked").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    found = expand([str(lib)])
    assert found.problems == []
    assert found.pairs == [(a.resolve(), Path("a.x")), (model.resolve(), Path("sub/ext.x"))]
    assert found.left_out == [
        (str(lib / "linked"), "a link to a folder: not followed (name its target to convert it)"),
        (str(lib / "sub" / "broken.x"), "a broken link: nothing to read"),
    ]
    sources, problems = plan(found.pairs, tmp_path / "out", ".glb")
    assert problems == []
    assert [s.output for s in sources] == [
        (tmp_path / "out" / "a.glb").resolve(), (tmp_path / "out" / "sub" / "ext.glb").resolve()
    ]  # fmt: skip


def test_a_glob_that_climbs_out_is_left_out_with_a_line(tmp_path: Path, capsys) -> None:
    """``lib/*/../../*.x`` matched files above the pattern's fixed part ``lib``: a traceback."""
    _touch(tmp_path / "lib" / "one" / "a.x")
    top = _touch(tmp_path / "top.x")
    inside = expand([str(tmp_path / "lib" / "*" / ".." / "one" / "*.x")])
    assert [r for _, r in inside.pairs] == [Path("one/a.x")]  # climbs back in: kept
    pattern = str(tmp_path / "lib" / "*" / ".." / ".." / "*.x")
    found = expand([pattern])
    assert found.pairs == []
    ((path, why),) = found.left_out
    assert Path(path).resolve() == top.resolve()
    assert why == f"outside {tmp_path / 'lib'} (the pattern climbs out with ..): name it directly"
    assert cli.main(["convert", pattern, "--to", "glb", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert f"left out: {path}: outside" in err and "error: no input files" in err


def test_the_output_folder_inside_the_input_is_not_searched(tmp_path: Path) -> None:
    """``convert lib --to x --out lib/out`` converted lib/out/a.x into lib/out/out/a.x on the
    second run, lib/out/out/out/a.x on the third: the output folder is left out."""
    lib = tmp_path / "lib"
    a = _touch(lib / "a.x")
    _touch(lib / "out" / "a.x")
    _touch(lib / "out" / "out" / "a.x")
    out = lib / "out"
    for inputs in ([str(lib)], [str(lib / "**" / "*.x")]):
        found = expand(inputs, out)
        assert found.pairs == [(a.resolve(), Path("a.x"))], inputs
        assert found.notes == [f"the output folder {out} is inside the input {inputs[0]}: not "
                               "searched"]  # fmt: skip
    # the output folder itself named as the input is searched (the user asked for it)
    assert len(expand([str(out)], out).pairs) == 2
    # an output that would replace its input is refused
    sources, problems = plan([(a.resolve(), Path("a.x"))], lib, ".x")
    assert sources == [] and problems == [f"{a.resolve()}: its output would replace it; left out"]


def _staging_of(pid_source: list[str], folder: Path) -> Path:
    """A staging folder made by a process started with ``pid_source`` (a command line)."""
    code = "import sys; from pathlib import Path; from addon.batch import staging; "
    code += "print(staging.make(Path(sys.argv[1]), 'a'), flush=True); sys.stdin.read()"
    proc = subprocess.Popen([sys.executable, "-c", code, str(folder), *pid_source],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            cwd=Path(__file__).resolve().parents[2])  # fmt: skip
    assert proc.stdout is not None
    path = Path(proc.stdout.readline().strip())
    _STARTED.append(proc)
    return path


_STARTED: list[subprocess.Popen] = []


def test_only_stale_staging_folders_are_removed(tmp_path: Path) -> None:
    """A killed run left ``.a.XXXXXXXX`` in the output for good; the next run removes the
    staging folders whose worker is gone, and only those."""
    out = tmp_path / "out"
    (out / "sub").mkdir(parents=True)
    try:
        dead = _staging_of([], out / "sub")
        worker = _staging_of(["addon.batch.worker"], out)  # a running worker's command line
        other = _staging_of(["something.else"], out)  # a live pid that is no batch worker
        _STARTED[0].communicate("")  # the first one ends: its folder is stale
        (dead / "a.glb").write_bytes(b"half")
        mine = staging.make(out, "b")  # this process: running
        foreign = out / f".c.{staging.MARK}otherhost-{os.getpid()}-abcd1234"
        foreign.mkdir()
        (out / ".git").mkdir()
        removed, left = staging.remove_stale(out)
        assert sorted(removed) == sorted([dead, other])
        assert left == [foreign]
        assert not dead.exists() and not other.exists()
        assert worker.is_dir() and mine.is_dir() and foreign.is_dir() and (out / ".git").is_dir()
        assert staging.owner(worker.name) == (staging.host_tag(), _STARTED[1].pid)
        assert staging.owner(".a.xof-staging-x") is None and staging.owner("a.glb") is None
    finally:
        for proc in _STARTED:
            proc.communicate("")
        _STARTED.clear()


def test_names_are_escaped_and_said_once(tmp_path: Path) -> None:
    """A name holding ESC [2J cleared the screen, and a failed file's line named it three
    times: ``FAILED: P: P: P\\x1b[2J...:3:25: ...`` (raw twice, escaped once)."""
    raw = str(tmp_path / "a\x1b[2Jb.x")
    shown = raw.replace("\x1b", "\\x1b")
    files = [
        {"source": raw, "status": "failed", "error": f"{shown}:3:25: 16 values wanted"},
        {"source": str(tmp_path / "c\udcff.x"), "status": "crashed", "error": "killed"},
        {"source": raw, "status": "skipped", "reason": "an animation-only file"},
        {"source": "up.x", "status": "skipped", "reason": "up to date"},
    ]
    stream = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    summary_table(files, 1.0, stream)
    stream.seek(0)
    text = stream.read()
    assert "\x1b" not in text
    lines = text.splitlines()
    assert f"FAILED: {shown}:3:25: 16 values wanted" in lines
    assert f"CRASHED: {tmp_path}/c\\xff.x: killed" in lines
    assert f"SKIPPED: {shown}: an animation-only file" in lines
    assert not any("up.x" in line for line in lines)  # up to date: no news
