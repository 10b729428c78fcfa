"""Mutated files: only XFileError, never another exception, a hang or a big allocation."""

from __future__ import annotations

import random

import numpy as np

from addon.xfile import XFileError, read, scene_of

from .test_containers import TEXT_BODY, binary_body
from .xenc import Bin, compressed_file

SEEDS = {
    "txt": b"xof 0303txt 0032" + TEXT_BODY,
    "bin": b"xof 0303bin 0032" + binary_body(),
    "bzip": compressed_file(binary_body(), "bzip"),
}


def _mutations(data: bytes, rng: random.Random, count: int):
    for _ in range(count):
        b = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(16, len(b))
            op = rng.random()
            if op < 0.5:
                b[i] = rng.randrange(256)
            elif op < 0.75:
                del b[i]
            else:
                b.insert(i, rng.randrange(256))
        yield bytes(b)


def test_random_mutations_raise_only_xfileerror() -> None:
    rng = random.Random(1234)
    for data in SEEDS.values():
        for mutated in _mutations(data, rng, 150):
            try:
                doc = read(mutated)
                scene_of(doc)
            except XFileError:
                pass


def test_binary_faces_split_across_two_integer_lists() -> None:
    b = Bin().name("Mesh").p("{").ints([4]).floats(np.zeros(12).tolist())
    b.ints([2, 4, 0, 1]).ints([2, 3, 3, 1, 2, 3]).p("}")  # the first face spans both lists
    mesh = scene_of(read(b.file())).meshes[0]
    assert mesh.face_sizes.tolist() == [4, 3]
    assert mesh.corners.tolist() == [0, 1, 2, 3, 1, 2, 3]


def test_signalling_nan_floats_read_as_nan_without_warnings() -> None:
    """Regression: float32 sNaN bit patterns raised 'invalid value encountered in cast'."""
    import struct
    import warnings

    b = Bin().name("Mesh").p("{").ints([1])
    b.raw(struct.pack("<HI", 7, 3) + struct.pack("<I", 0x7F800001) * 3).ints([0]).p("}")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        positions = scene_of(read(b.file())).meshes[0].positions
    assert np.isnan(positions).all()
