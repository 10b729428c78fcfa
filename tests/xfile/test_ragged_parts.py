"""Face records to (sizes, corners): records of one size are read as columns, mixed ones
record by record; both give the sizes and the corners the test lists itself."""

from __future__ import annotations

import numpy as np
import pytest

from addon.xfile.document import Ragged
from addon.xfile.views.values import ragged_parts


def _ragged(faces: list[list[int]]) -> Ragged:
    flat = [v for face in faces for v in [len(face), *face]]
    starts = np.cumsum([0] + [len(face) + 1 for face in faces[:-1]])
    return Ragged(np.array(flat, dtype=np.int64), np.array(starts, dtype=np.int64))


@pytest.mark.parametrize(
    "faces",
    [
        [[0, 1, 2, 3], [3, 2, 4, 5], [5, 4, 6, 7]],  # quads: the columns
        [[0, 1, 2]] * 5,  # triangles
        [[0, 1, 2, 3], [3, 2, 4], [5, 4, 6, 7]],  # mixed
        [[0, 1, 2, 3, 4], [1, 2, 3]],  # mixed, the flat length a multiple of the count
        [[7]],
    ],
)
def test_sizes_and_corners(faces: list[list[int]]) -> None:
    sizes, corners = ragged_parts(_ragged(faces))
    assert sizes.tolist() == [len(face) for face in faces]
    assert corners.tolist() == [v for face in faces for v in face]
    assert corners.flags.c_contiguous and sizes.flags.c_contiguous
