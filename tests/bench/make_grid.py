"""Benchmark inputs: one N x N grid mesh written as text, binary and compressed .X, OBJ and glTF.

Deterministic (no randomness), so every run and machine measures the same bytes. The grid is
a gentle height field in D3D space (left-handed, Y up) with per-vertex normals and UVs, one
quad per grid cell; the OBJ and GLB files hold the same surface converted to their right-handed
convention, so every importer should build the same Blender mesh.

    python tests/bench/make_grid.py                 # 1000 x 1000 (1M vertices) -> tests/bench/data
    python tests/bench/make_grid.py --n 100 --cloth # the 10k-vertex cloth grid with ClothMasses

Text is written with one C-level ``%`` format call per chunk of rows ("%f" like real
exporters), binary and OBJ/GLB straight from numpy buffers: the 1M grid takes seconds.
"""

from __future__ import annotations

import argparse
import json
import struct
import sys
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent / "data"
CHUNK = 65536  # rows per format call: bounds the temporary Python objects
MSZIP_BLOCK = 32768

CLOTH_MASSES_TEMPLATE = (
    "template ClothMasses {\n"
    " <F5AD0F93-9BF2-4bcf-B7CF-D68CD6B54156>\n"
    " DWORD NumPoints;\n"
    " array FLOAT Mass[NumPoints];\n"
    "}\n\n"
)


@dataclass(frozen=True)
class Grid:
    """An N x N vertex grid in D3D conventions; vertex ``r * n + c`` sits at row r, column c."""

    n: int
    positions: np.ndarray  # (n*n, 3) float64, rounded to 6 decimals ("%f" loses nothing)
    normals: np.ndarray  # (n*n, 3) float64, unit, per vertex
    uvs: np.ndarray  # (n*n, 2) float64, v down (D3D)
    quads: np.ndarray  # ((n-1)^2, 4) int64, clockwise seen from the normal side (D3D front)

    @property
    def vertex_count(self) -> int:
        return len(self.positions)

    @property
    def face_count(self) -> int:
        return len(self.quads)


def make_grid(n: int) -> Grid:
    """The height field y = A sin(6 pi x) cos(4 pi z) over [-1, 1]^2, with analytic normals."""
    if n < 2:
        raise ValueError("a grid needs at least 2 x 2 vertices")
    t = np.linspace(-1.0, 1.0, n)
    z, x = np.meshgrid(t, t, indexing="ij")  # row r runs along z, column c along x
    amp = 0.05
    y = amp * np.sin(6 * np.pi * x) * np.cos(4 * np.pi * z)
    dydx = amp * 6 * np.pi * np.cos(6 * np.pi * x) * np.cos(4 * np.pi * z)
    dydz = -amp * 4 * np.pi * np.sin(6 * np.pi * x) * np.sin(4 * np.pi * z)
    normals = np.stack([-dydx, np.ones_like(y), -dydz], axis=-1).reshape(-1, 3)
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    positions = np.stack([x, y, z], axis=-1).reshape(-1, 3)
    u, v = np.meshgrid(np.linspace(0.0, 1.0, n), np.linspace(0.0, 1.0, n), indexing="xy")
    uvs = np.stack([u, 1.0 - v], axis=-1).reshape(-1, 2)  # far edge (z = 1) at v = 0
    r, c = np.meshgrid(np.arange(n - 1), np.arange(n - 1), indexing="ij")
    a = (r * n + c).reshape(-1)
    # Seen from above (+Y) in a left-handed frame, z points up the screen: clockwise is
    # (c, r+1) -> (c+1, r+1) -> (c+1, r) -> (c, r).
    quads = np.stack([a + n, a + n + 1, a + 1, a], axis=1).astype(np.int64)
    return Grid(n, np.round(positions, 6), np.round(normals, 6), np.round(uvs, 6), quads)


# --- text ------------------------------------------------------------------------------------


def _rows(fmt: str, values: np.ndarray, last_sep: str = ";") -> Iterator[str]:
    """``fmt`` applied to every row of ``values``; rows end with ``,`` except the last."""
    flat = values.reshape(len(values), -1)
    for start in range(0, len(flat), CHUNK):
        chunk = flat[start : start + CHUNK]
        text = (fmt + ",\n") * len(chunk) % tuple(chunk.ravel().tolist())
        if start + CHUNK >= len(flat):
            text = text[:-2] + last_sep + "\n"
        yield text


def _faces_with_counts(quads: np.ndarray) -> np.ndarray:
    return np.hstack([np.full((len(quads), 1), 4, np.int64), quads])


def _mesh_text(g: Grid, name: str) -> Iterator[str]:
    faces = _faces_with_counts(g.quads)
    yield f"Mesh {name} {{\n{g.vertex_count};\n"
    yield from _rows("%f;%f;%f;", g.positions)
    yield f"{g.face_count};\n"
    yield from _rows("%d;%d,%d,%d,%d;", faces)
    yield f"\nMeshNormals {{\n{g.vertex_count};\n"
    yield from _rows("%f;%f;%f;", g.normals)
    yield f"{g.face_count};\n"
    yield from _rows("%d;%d,%d,%d,%d;", faces)
    yield f"}}\n\nMeshTextureCoords {{\n{g.vertex_count};\n"
    yield from _rows("%f;%f;", g.uvs)
    yield "}\n}\n"


def write_text(path: Path, g: Grid, name: str = "Grid") -> None:
    with path.open("w", encoding="ascii", newline="\n") as f:
        f.write("xof 0303txt 0032\n\n")
        f.writelines(_mesh_text(g, name))


def cloth_masses(g: Grid) -> np.ndarray:
    """1 everywhere, 0 (pinned) at the two corners of row 0 (the far edge, z = -1)."""
    masses = np.ones(g.vertex_count)
    masses[[0, g.n - 1]] = 0.0
    return masses


def write_cloth_text(path: Path, g: Grid, name: str = "Cloth") -> None:
    """The grid with a top-level ClothMasses (declared in the file, as the project writes it)."""
    with path.open("w", encoding="ascii", newline="\n") as f:
        f.write("xof 0303txt 0032\n\n")
        f.write(CLOTH_MASSES_TEMPLATE)
        f.write(f"Frame {name}Frame {{\n")
        f.writelines(_mesh_text(g, name))
        f.write("}\n\n")
        f.write(f"ClothMasses {{\n{g.vertex_count};\n")
        f.writelines(_rows("%f", cloth_masses(g)[:, None]))
        f.write("}\n")


# --- binary (token stream, see ../shared/notes/xformat.md) ----------------------------------

_NAME, _INTEGER_LIST, _FLOAT_LIST, _OBRACE, _CBRACE = 1, 6, 7, 10, 11


def _name(text: str) -> bytes:
    data = text.encode("ascii")
    return struct.pack("<HI", _NAME, len(data)) + data


def _ints(values: np.ndarray) -> bytes:
    flat = np.ascontiguousarray(values, dtype="<u4").ravel()
    return struct.pack("<HI", _INTEGER_LIST, flat.size) + flat.tobytes()


def _floats(values: np.ndarray, float_bits: int) -> bytes:
    flat = np.ascontiguousarray(values, dtype="<f4" if float_bits == 32 else "<f8").ravel()
    return struct.pack("<HI", _FLOAT_LIST, flat.size) + flat.tobytes()


def _open(template: str, name: str | None = None) -> bytes:
    head = _name(template) + (_name(name) if name else b"")
    return head + struct.pack("<H", _OBRACE)


_CLOSE = struct.pack("<H", _CBRACE)


def binary_body(g: Grid, float_bits: int = 32, name: str = "Grid") -> bytes:
    """The token stream after the 16-byte header: lists span members, as real files do."""
    faces = np.concatenate([[g.face_count], _faces_with_counts(g.quads).ravel()])
    count = np.array([g.vertex_count])
    return b"".join(
        [
            _open("Mesh", name),
            _ints(count),
            _floats(g.positions, float_bits),
            _ints(faces),
            _open("MeshNormals"),
            _ints(count),
            _floats(g.normals, float_bits),
            _ints(faces),
            _CLOSE,
            _open("MeshTextureCoords"),
            _ints(count),
            _floats(g.uvs, float_bits),
            _CLOSE,
            _CLOSE,
        ]
    )


def _header(fmt: str, float_bits: int) -> bytes:
    return f"xof 0303{fmt}{float_bits:04d}".encode("ascii")


def write_binary(path: Path, g: Grid, float_bits: int = 32) -> None:
    path.write_bytes(_header("bin ", float_bits) + binary_body(g, float_bits))


def mszip(body: bytes, level: int = 6) -> bytes:
    """MSZIP: the total size (with the header), then 32 KiB blocks, each a raw DEFLATE stream
    whose window is the previous 32 KiB of output (so blocks reference across boundaries)."""
    out = [struct.pack("<I", len(body) + 16)]
    for start in range(0, len(body), MSZIP_BLOCK):
        block = body[start : start + MSZIP_BLOCK]
        history = body[max(0, start - MSZIP_BLOCK) : start]
        if history:
            comp = zlib.compressobj(level, zlib.DEFLATED, -15, zdict=history)
        else:
            comp = zlib.compressobj(level, zlib.DEFLATED, -15)
        packed = b"CK" + comp.compress(block) + comp.flush(zlib.Z_FINISH)
        out.append(struct.pack("<HH", len(block), len(packed)) + packed)
    return b"".join(out)


def write_compressed(path: Path, g: Grid, float_bits: int = 32) -> None:
    path.write_bytes(_header("bzip", float_bits) + mszip(binary_body(g, float_bits)))


# --- OBJ and glTF (right-handed, Y up): z negated, winding reversed ---------------------------


def _right_handed(g: Grid) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    flip = np.array([1.0, 1.0, -1.0])
    return g.positions * flip, g.normals * flip, g.quads[:, ::-1]


def write_obj(path: Path, g: Grid) -> None:
    positions, normals, quads = _right_handed(g)
    uvs = np.column_stack([g.uvs[:, 0], 1.0 - g.uvs[:, 1]])  # OBJ's v points up
    corners = np.repeat(quads + 1, 3, axis=1)  # v/vt/vn share the vertex index
    with path.open("w", encoding="ascii", newline="\n") as f:
        f.write(f"# xof benchmark grid {g.n} x {g.n}\no Grid\n")
        for fmt, values in (
            ("v %f %f %f\n", positions),
            ("vn %f %f %f\n", normals),
            ("vt %f %f\n", uvs),
            ("f %d/%d/%d %d/%d/%d %d/%d/%d %d/%d/%d\n", corners),
        ):
            for start in range(0, len(values), CHUNK):
                chunk = values[start : start + CHUNK]
                f.write(fmt * len(chunk) % tuple(chunk.ravel().tolist()))


def write_glb(path: Path, g: Grid) -> None:
    """A binary glTF 2.0: one mesh, triangles (two per quad), glTF's UVs are v down like D3D."""
    positions, normals, quads = _right_handed(g)
    triangles = np.concatenate([quads[:, [0, 1, 2]], quads[:, [0, 2, 3]]], axis=1).reshape(-1, 3)
    arrays = [
        (positions.astype("<f4"), 5126, "VEC3", 34962),
        (normals.astype("<f4"), 5126, "VEC3", 34962),
        (g.uvs.astype("<f4"), 5126, "VEC2", 34962),
        (triangles.astype("<u4").ravel(), 5125, "SCALAR", 34963),
    ]
    views, accessors, blobs, offset = [], [], [], 0
    for i, (data, component, kind, target) in enumerate(arrays):
        raw = data.tobytes()
        views.append({"buffer": 0, "byteOffset": offset, "byteLength": len(raw), "target": target})
        accessor: dict = {
            "bufferView": i,
            "componentType": component,
            "count": len(data),
            "type": kind,
        }
        if i == 0:
            accessor["min"] = data.min(axis=0).tolist()
            accessor["max"] = data.max(axis=0).tolist()
        accessors.append(accessor)
        blobs.append(raw)
        offset += len(raw)  # every array is 4-byte aligned already
    doc = {
        "asset": {"version": "2.0", "generator": "xof tests/bench/make_grid.py"},
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": [{"mesh": 0, "name": "Grid"}],
        "meshes": [
            {
                "name": "Grid",
                "primitives": [
                    {"attributes": {"POSITION": 0, "NORMAL": 1, "TEXCOORD_0": 2}, "indices": 3}
                ],
            }
        ],
        "buffers": [{"byteLength": offset}],
        "bufferViews": views,
        "accessors": accessors,
    }
    js = json.dumps(doc, separators=(",", ":")).encode("ascii")
    js += b" " * (-len(js) % 4)
    body = b"".join(blobs)
    total = 12 + 8 + len(js) + 8 + len(body)
    with path.open("wb") as f:
        f.write(struct.pack("<4sII", b"glTF", 2, total))
        f.write(struct.pack("<I4s", len(js), b"JSON") + js)
        f.write(struct.pack("<I4s", len(body), b"BIN\x00"))
        f.write(body)


# --- command line ----------------------------------------------------------------------------

WRITERS: dict[str, tuple[str, Callable[[Path, Grid], None]]] = {
    "txt": ("txt.x", write_text),
    "bin": ("bin.x", write_binary),
    "bzip": ("bzip.x", write_compressed),
    "obj": ("obj", write_obj),
    "glb": ("glb", write_glb),
}


def output_path(out: Path, n: int, fmt: str) -> Path:
    """``grid_<n>.<fmt>...`` e.g. ``grid_1000.txt.x``; the benchmarks find their inputs here."""
    return out / f"grid_{n}.{WRITERS[fmt][0]}"


def cloth_path(out: Path, n: int) -> Path:
    return out / f"cloth_{n}.x"


def _fresh(path: Path) -> bool:
    """Already written by this version of the generator (deterministic: no need to redo)."""
    return path.exists() and path.stat().st_mtime >= Path(__file__).stat().st_mtime


def generate(
    n: int, out: Path, formats: list[str], cloth: bool = False, force: bool = False
) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    g = make_grid(n)
    jobs: list[tuple[Path, Callable[[Path, Grid], None]]] = [
        (output_path(out, n, fmt), WRITERS[fmt][1]) for fmt in formats
    ]
    if cloth:
        jobs.append((cloth_path(out, n), write_cloth_text))
    for path, write in jobs:
        if not force and _fresh(path):
            print(f"up to date  {path}")
            continue
        start = time.perf_counter()
        tmp = path.with_name(path.name + ".part")
        write(tmp, g)
        tmp.replace(path)
        size = path.stat().st_size / 1e6
        print(f"wrote {path} ({size:.1f} MB, {time.perf_counter() - start:.1f} s)")
    return [path for path, _ in jobs]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=1000, help="vertices per side (default 1000)")
    parser.add_argument("--out", type=Path, default=DATA, help="output folder")
    parser.add_argument(
        "--formats",
        default=",".join(WRITERS),
        help=f"comma-separated subset of {','.join(WRITERS)} (default: all)",
    )
    parser.add_argument(
        "--cloth", action="store_true", help="only the cloth grid (text, with ClothMasses)"
    )
    parser.add_argument("--force", action="store_true", help="rewrite files that are up to date")
    args = parser.parse_args(argv)
    formats = [] if args.cloth else [f for f in args.formats.split(",") if f]
    unknown = sorted(set(formats) - set(WRITERS))
    if unknown:
        parser.error(f"unknown formats: {', '.join(unknown)}")
    generate(args.n, args.out, formats, cloth=args.cloth, force=args.force)
    return 0


if __name__ == "__main__":
    sys.exit(main())
