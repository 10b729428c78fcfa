"""Files of a few MB read from a path read like their bytes: same document, same errors.

The expected values are the numbers the test writes itself; ``read(bytes)`` must agree with
``read(path)`` in every member.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from addon.xfile import XFileError, read


def grid_text(n: int) -> tuple[bytes, np.ndarray, np.ndarray]:
    """A text Mesh of n x n vertices (quads): its bytes, positions and faces."""
    i, j = np.divmod(np.arange(n * n), n)
    pos = np.stack([i * 0.25, (i * j % 7) * 0.5, j * -0.125], axis=1)
    corner = (i * n + j)[(i < n - 1) & (j < n - 1)]
    quads = np.stack([corner, corner + 1, corner + n + 1, corner + n], axis=1)
    lines = [b"xof 0303txt 0032\n// a comment\nMesh grid {\n", b"%d;\n" % len(pos)]
    lines += [b"%f;%f;%f;,\n" % tuple(p) for p in pos.tolist()]
    lines.append(b"%d;\n" % len(quads))
    lines += [b"4;%d,%d,%d,%d;,\n" % tuple(q) for q in quads.tolist()]
    lines.append(b"}\nFrame after { }\n")
    return b"".join(lines), pos, quads


@pytest.fixture(scope="module")
def grid() -> tuple[bytes, np.ndarray, np.ndarray]:
    return grid_text(200)  # ~1.3 MB


def test_big_text_file_reads_like_bytes(
    grid: tuple[bytes, np.ndarray, np.ndarray], tmp_path: Path
) -> None:
    text, pos, quads = grid
    path = tmp_path / "grid.x"
    path.write_bytes(text)
    from_path = read(path)
    from_bytes = read(text)
    for doc in (from_path, from_bytes):
        mesh = doc.objects[0]
        assert np.array_equal(mesh["vertices"], pos)
        faces = mesh["faces"]
        assert np.array_equal(faces.flat.reshape(-1, 5)[:, 1:], quads)
        assert [o.template for o in doc.objects] == ["Mesh", "Frame"]
    # places come from the map as from bytes: line 4 holds the vertex count, the Frame after
    assert from_path.objects[0].where == from_bytes.objects[0].where == "3:1"
    frame_line = text[: text.index(b"Frame after")].count(b"\n") + 1
    assert from_path.objects[1].where == f"{frame_line}:1"
    os.remove(path)


@pytest.mark.parametrize("case", ["bad number", "end of file"])
def test_errors_in_a_big_file_name_the_same_place(
    grid: tuple[bytes, np.ndarray, np.ndarray], tmp_path: Path, case: str
) -> None:
    text, pos, _ = grid
    if case == "bad number":  # deep in the vertex run: the vectorised path finds it
        line = b"%f;%f;%f;,\n" % tuple(pos[20000])
        at = text.index(line)
        broken = text[:at] + b"0.2x" + text[at + 4 :]
        expected_line = text[:at].count(b"\n") + 1
    else:  # the file ends inside the last object
        broken = text[: text.rindex(b"}")]
        expected_line = broken.count(b"\n") + 1
    path = tmp_path / "broken.x"
    path.write_bytes(broken)
    with pytest.raises(XFileError) as from_path:
        read(path)
    with pytest.raises(XFileError) as from_bytes:
        read(broken)
    where = from_path.value.where
    assert where is not None and where.startswith(f"{expected_line}:")
    assert (where, from_path.value.reason) == (from_bytes.value.where, from_bytes.value.reason)
    assert from_path.value.path == str(path)
    os.remove(path)


def binary_grid(n: int, float_bits: int) -> tuple[bytes, np.ndarray, np.ndarray]:
    """A binary Mesh (one INTEGER_LIST count, one FLOAT_LIST, faces in one INTEGER_LIST) and,
    after it, an object of a template the file does not declare holding a float list."""
    from .xenc import Bin

    i, j = np.divmod(np.arange(n * n), n)
    pos = np.stack([i * 0.25, j * 0.5, (i + j) * -0.125], axis=1)
    corner = (i * n + j)[(i < n - 1) & (j < n - 1)]
    quads = np.stack([corner, corner + 1, corner + n + 1, corner + n], axis=1)
    faces = np.concatenate([np.full((len(quads), 1), 4), quads], axis=1).ravel()
    b = Bin(float_bits).name("Mesh").name("grid").p("{").ints([len(pos)])
    b.floats(pos.ravel().tolist()).ints([len(quads), *faces.tolist()]).p("}")
    b.name("Unknown").p("{").floats([0.5, 1.5, 2.5]).p("}")
    return b.file(), pos, quads


@pytest.mark.parametrize("float_bits", [32, 64])
def test_big_binary_file_reads_like_bytes(float_bits: int, tmp_path: Path) -> None:
    data, pos, quads = binary_grid(260, float_bits)
    path = tmp_path / "grid.x"
    path.write_bytes(data)
    doc = read(path)
    mesh = doc.objects[0]
    assert np.array_equal(mesh["vertices"], pos)
    assert np.array_equal(mesh["faces"].flat.reshape(-1, 5)[:, 1:], quads)
    unknown = doc.objects[1]
    assert [v.tolist() for v in unknown["_values"]] == [[0.5, 1.5, 2.5]]
    del doc, unknown
    assert np.array_equal(read(data).objects[0]["vertices"], pos)


def test_truncated_big_binary_file_fails_with_xfileerror(tmp_path: Path) -> None:
    data = binary_grid(260, 32)[0]
    broken = data[: len(data) * 2 // 3]
    path = tmp_path / "broken.x"
    path.write_bytes(broken)
    with pytest.raises(XFileError) as from_path:
        read(path)
    with pytest.raises(XFileError) as from_bytes:
        read(broken)
    assert (from_path.value.where, from_path.value.reason) == (
        from_bytes.value.where,
        from_bytes.value.reason,
    )
