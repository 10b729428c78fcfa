"""The benchmark inputs are what they claim: same surface in every format, readable by Assimp."""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import numpy as np
import pytest

from tests.bench import make_grid as mg

N = 60  # 3,600 vertices: the binary body spans several 32 KiB MSZIP blocks


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("grid")
    paths = mg.generate(N, out, list(mg.WRITERS), cloth=True)
    return {p.name.split(".", 1)[1] if p.name.startswith("grid") else "cloth": p for p in paths}


def _msz_decode(data: bytes) -> bytes:
    """MSZIP as the notes describe it, written independently of the encoder."""
    total = struct.unpack_from("<I", data, 16)[0]
    pos, out = 20, bytearray()
    while pos < len(data):
        raw_size, packed_size = struct.unpack_from("<HH", data, pos)
        assert data[pos + 4 : pos + 6] == b"CK"
        packed = data[pos + 6 : pos + 4 + packed_size]
        d = zlib.decompressobj(-15, zdict=bytes(out[-32768:])) if out else zlib.decompressobj(-15)
        block = d.decompress(packed)
        assert d.eof and len(block) == raw_size
        out += block
        pos += 4 + packed_size
    assert len(out) + 16 == total
    return bytes(out)


def test_grid_shape_and_winding() -> None:
    g = mg.make_grid(5)
    assert g.positions.shape == (25, 3) and g.quads.shape == (16, 4)
    assert np.allclose(np.linalg.norm(g.normals, axis=1), 1.0, atol=1e-5)
    p = g.positions[g.quads]
    # D3D front faces are clockwise: the plain cross product points along the normal.
    face_n = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
    assert (np.einsum("ij,ij->i", face_n, g.normals[g.quads[:, 0]]) > 0).all()
    pos, nrm, quads = mg._right_handed(g)
    q = pos[quads]
    face_n = np.cross(q[:, 1] - q[:, 0], q[:, 2] - q[:, 0])  # counter-clockwise front
    assert (np.einsum("ij,ij->i", face_n, nrm[quads[:, 0]]) > 0).all()


def test_text_layout(files: dict[str, Path]) -> None:
    lines = files["txt.x"].read_text().splitlines()
    assert lines[0] == "xof 0303txt 0032"
    v, f = N * N, (N - 1) ** 2
    assert lines[2] == "Mesh Grid {" and lines[3] == f"{v};"
    assert lines[4].endswith(";,") and lines[3 + v].endswith(";;")
    first = [float(x) for x in lines[4].split(";")[:3]]
    assert first == pytest.approx(mg.make_grid(N).positions[0].tolist())
    assert lines[4 + v] == f"{f};"
    assert lines[5 + v] == "4;{},{},{},{};,".format(*mg.make_grid(N).quads[0])


def test_binary_tokens(files: dict[str, Path]) -> None:
    data = files["bin.x"].read_bytes()
    assert data[:16] == b"xof 0303bin 0032"
    g = mg.make_grid(N)
    pos = 16
    token, length = struct.unpack_from("<HI", data, pos)
    assert (token, data[pos + 6 : pos + 6 + length]) == (1, b"Mesh")
    pos = data.index(struct.pack("<HII", 6, 1, N * N))
    pos += 10
    token, count = struct.unpack_from("<HI", data, pos)
    assert (token, count) == (7, 3 * N * N)
    floats = np.frombuffer(data, "<f4", count, pos + 6).reshape(-1, 3)
    assert np.allclose(floats, g.positions, atol=1e-6)


def test_compressed_is_multi_block_mszip_of_the_binary(files: dict[str, Path]) -> None:
    data = files["bzip.x"].read_bytes()
    assert data[:16] == b"xof 0303bzip0032"
    body = _msz_decode(data)
    assert body == files["bin.x"].read_bytes()[16:]
    assert len(body) > 3 * mg.MSZIP_BLOCK
    # Back-references across blocks: the second block does not decode on its own.
    packed = struct.unpack_from("<HH", data, 20)[1]
    second = 20 + 4 + packed
    packed2 = struct.unpack_from("<HH", data, second)[1]
    with pytest.raises(zlib.error):
        zlib.decompressobj(-15).decompress(data[second + 6 : second + 4 + packed2])


def test_obj_and_glb_hold_the_same_surface(files: dict[str, Path]) -> None:
    g = mg.make_grid(N)
    obj = files["obj"].read_text().splitlines()
    vs = np.array([[float(x) for x in ln.split()[1:]] for ln in obj if ln.startswith("v ")])
    assert np.allclose(vs, g.positions * [1, 1, -1], atol=1e-6)
    assert sum(ln.startswith("f ") for ln in obj) == (N - 1) ** 2
    glb = files["glb"].read_bytes()
    magic, version, total = struct.unpack_from("<4sII", glb, 0)
    assert (magic, version, total) == (b"glTF", 2, len(glb))
    js_len = struct.unpack_from("<I", glb, 12)[0]
    doc = json.loads(glb[20 : 20 + js_len])
    assert doc["accessors"][0]["count"] == N * N
    assert doc["accessors"][3]["count"] == 6 * (N - 1) ** 2


def test_cloth_grid_declares_and_pins(files: dict[str, Path]) -> None:
    text = files["cloth"].read_text()
    assert "template ClothMasses {" in text
    masses = text.split("ClothMasses {\n", 2)[2]
    values = [float(x) for x in masses.replace(";", ",").split(",")[1:] if x.strip("}\n ")]
    assert len(values) == N * N
    assert values[0] == values[N - 1] == 0.0 and sum(values) == N * N - 2


@pytest.mark.skipif(
    shutil.which("assimp") is None,
    reason="assimp (assimp-utils) not installed: `make reference-readers`",
)
@pytest.mark.parametrize("kind", ["txt.x", "bin.x", "bzip.x"])
def test_assimp_reads_it(files: dict[str, Path], kind: str) -> None:
    result = subprocess.run(
        ["assimp", "info", str(files[kind]), "-r"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stdout + result.stderr
    faces = (N - 1) ** 2
    assert f"Faces:              {faces}" in result.stdout
    assert f"Vertices:           {4 * faces}" in result.stdout  # Assimp unrolls corners


@pytest.mark.parametrize("kind", ["txt.x", "bin.x", "bzip.x", "cloth"])
def test_our_reader_reads_it(files: dict[str, Path], kind: str) -> None:
    from addon.xfile import read

    doc = read(str(files[kind]))
    meshes = [o for o in doc.walk() if o.template == "Mesh"]
    assert len(meshes) == 1
    assert np.allclose(meshes[0]["vertices"], mg.make_grid(N).positions, atol=1e-6)
