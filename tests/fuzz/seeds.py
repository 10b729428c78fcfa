"""Seed files: the project's fixtures, ``examples/*.x``, the shared corpus, and a few
hand-written files that reach every grammar corner (declared templates of every primitive
type, nested and multi-dimensional arrays, restrictions, references by name and GUID, the
project's custom templates), each lexed once into tokens for the mutators."""

from __future__ import annotations

import functools
import os
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

from .encodings import FORMATS, encode, split_file
from .xtokens import LexError, Tok

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(os.environ.get("XOF_CORPUS") or ROOT.parent / "shared" / "xcorpus").expanduser()

GRAMMAR = b"""xof 0303txt 0064
template Pair { <11111111-2222-3333-4444-555555555555> WORD a; SWORD b; }
template Everything {
 <A1B2C3D4-0000-1111-2222-333344445555>
 DWORD n; CHAR c; UCHAR u; BYTE y; SDWORD s; FLOAT f; DOUBLE d; STRING t; CSTRING ct;
 array FLOAT grid[n][2]; array Pair pairs[n]; array STRING names[2]; Vector v;
 [...]
}
template OnlyFrames { <00000000-1111-2222-3333-444444444444> DWORD k;
 [Frame, Mesh <3D82AB44-62DA-11cf-AB39-0020AF71E433>] }
Material Red { 1.0;0.0;0.0;1.0;; 5.0; 0.1;0.1;0.1;; 0.0;0.0;0.0;; TextureFilename { "red.png"; } }
Everything E1 { <01234567-89AB-CDEF-0123-456789ABCDEF>
 2; 65; 200; 7; -5; 1.5; 2.25; "text"; "c";
 0.0, 1.0, 2.0, 3.0; 1;-1;, 2;-2;; "a", "b"; 1.0;2.0;3.0;;
 { Red } { <01234567-89AB-CDEF-0123-456789ABCDEF> } { Red <01234567-89AB-CDEF-0123-456789ABCDEF> }
 OnlyFrames { 3; Frame Inner { } }
}
Frame Root {
 FrameTransformMatrix { 1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1;; }
 Frame Child {
  FrameTransformMatrix { 1,0,0,0, 0,1,0,0, 0,0,1,0, 1,2,3,1;; }
  Mesh Tri {
   3; 0;0;0;, 1;0;0;, 0;1;0;; 1; 3;0,1,2;;
   MeshNormals { 1; 0;0;1;; 1; 3;0,0,0;; }
   MeshTextureCoords { 3; 0;0;, 1;0;, 0;1;; }
   MeshVertexColors { 3; 0;1;0;0;1;;, 1;0;1;0;1;;, 2;0;0;1;1;;; }
   MeshMaterialList { 1; 1; 0;; { Red } }
   VertexDuplicationIndices { 3; 3; 0,1,2;; }
   XSkinMeshHeader { 1; 1; 1; }
   SkinWeights { "Child"; 3; 0,1,2; 1.0,1.0,1.0;
     1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1;; }
   DeclData { 1; 2;0;3;0;; 9; 0,0,1065353216, 0,0,1065353216, 0,0,1065353216; }
  }
 }
}
ClothMasses { 3; 0.0, 1.0, 1.0; }
ClothSprings { 2; 4; 0,1, 1,2; }
AnimTicksPerSecond { 30; }
AnimationSet Walk {
 Animation { { Child }
  AnimationKey { 0; 2; 0;4;1,0,0,0;;, 30;4;0,0,1,0;;; }
  AnimationKey { 2; 2; 0;3;0,0,0;;, 30;3;1,2,3;;; }
  AnimationKey { 4; 1; 0;16;1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1;;; }
  AnimationOptions { 1; 0; }
 }
}
MorphAnimationSet Dance { 2; 0; "Tri";, 500; "Tri";; }
"""

MORPH_LOOP = b"""xof 0303txt 0032
template MorphAnimationKey { <2746B58A-B375-4cc3-8D23-7D094D3C7C67> DWORD Time; STRING MeshName; }
template MorphAnimationSet { <0892DE81-915A-4f34-B503-F7C397CB9E06>
 DWORD Loop; DWORD NumKeys; array MorphAnimationKey Keys[NumKeys]; }
template Mesh { <3D82AB44-62DA-11cf-AB39-0020AF71E433>
 DWORD nVertices; array Vector vertices[nVertices];
 DWORD nFaces; array MeshFace faces[nFaces]; [...] }
Mesh A { 4; 0;0;0;, 1;0;0;, 1;1;0;, 0;1;0;; 2; 3;0,1,2;, 3;0,2,3;; }
Mesh B { 4; 0;0;1;, 1;0;1;, 1;1;1;, 0;1;1;; 1; 4;0,1,2,3;; }
MorphAnimationSet M { 1; 3; 0; "A";, 100; "B";, 200; "A";; }
"""


@dataclass
class Seed:
    name: str
    data: bytes  # a well-formed file in its own container
    toks: list[Tok] | None  # None when our lexer cannot read it (kept for byte mutations)
    float_bits: int
    version: str


def _fixture_files() -> dict[str, bytes]:
    files: dict[str, bytes] = {"grammar.x": GRAMMAR, "morph_loop.x": MORPH_LOOP}
    from tests.xfile.test_containers import TEXT_BODY, binary_body

    files["quad.txt"] = b"xof 0303txt 0032" + TEXT_BODY
    files["quad.bin"] = b"xof 0303bin 0032" + binary_body()
    files["quad64.bin"] = b"xof 0302bin 0064" + binary_body(64)
    try:
        from tests.scene import morph_fixtures, skin_fixtures

        files["character.x"] = skin_fixtures.character_text().encode()
        files["anim_only.x"] = skin_fixtures.anim_only_text().encode()
        files["dance.x"] = morph_fixtures.dance().text().encode()
        files["dance_loop.x"] = morph_fixtures.dance(True, True).text().encode()
    except ImportError:  # the scene fixtures moved: the other seeds still cover the grammar
        pass
    for path in sorted((ROOT / "examples").glob("*.x")):
        files[path.name] = path.read_bytes()
    if CORPUS.is_dir():
        for path in sorted(CORPUS.iterdir()):
            data = path.read_bytes()
            if data[:4] == b"xof ":
                files["corpus/" + path.name] = data
    return files


@functools.lru_cache(maxsize=2)
def load_seeds(max_bytes: int | None = None) -> list[Seed]:
    """Every seed (up to ``max_bytes``) once, lexed; unreadable ones (the corrupt corpus
    file) kept as raw bytes."""
    seeds = []
    for name, data in _fixture_files().items():
        if max_bytes is not None and len(data) > max_bytes:
            continue
        try:
            _, bits, version, toks = split_file(data)
        except (LexError, ValueError, IndexError, OverflowError, struct.error, zlib.error) as exc:
            del exc
            seeds.append(Seed(name, data, None, int(data[12:16] or 32), "0303"))
            continue
        seeds.append(Seed(name, data, toks, bits, version))
    return seeds


def all_encodings(seed: Seed) -> dict[str, bytes]:
    """The seed in txt, bin, tzip and bzip (its own bytes for its own container)."""
    if seed.toks is None:
        return {}
    return {fmt: encode(seed.toks, fmt, seed.float_bits, seed.version) for fmt in FORMATS}
