"""The parts of the batch tool that need no Blender: inputs, outputs, options, progress."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from addon.batch import cli
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
    pairs, problems = expand([str(lib)])
    assert problems == []
    assert pairs == [(a.resolve(), Path("a.x")), (b.resolve(), Path("deep/er/B.X"))]


def test_globs_keep_the_tree_below_their_fixed_part(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    a = _touch(lib / "one" / "a.x")
    b = _touch(lib / "two" / "b.x")
    _touch(lib / "two" / "c.txt")
    pairs, problems = expand([str(lib / "*" / "*.x")])
    assert problems == []
    assert pairs == [(a.resolve(), Path("one/a.x")), (b.resolve(), Path("two/b.x"))]
    pairs, _ = expand([str(lib / "**")])  # a recursive glob reaching folders
    assert sorted(r for _, r in pairs) == [Path("one/a.x"), Path("two/b.x")]


def test_a_named_file_goes_to_the_top_and_is_kept_once(tmp_path: Path) -> None:
    a = _touch(tmp_path / "x" / "y" / "a.x")
    pairs, problems = expand([str(a), str(tmp_path / "x" / "y"), str(a)])
    assert problems == []
    assert pairs == [(a.resolve(), Path("a.x"))]


def test_inputs_naming_nothing_are_problems(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    _, problems = expand([str(tmp_path / "missing.x"), str(tmp_path / "empty"),
                          str(tmp_path / "*.x")])  # fmt: skip
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
