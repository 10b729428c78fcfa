"""Text files: members, arrays, nested templates, faces, references, sloppy separators."""

from __future__ import annotations

import numpy as np
import pytest

from addon.xfile import Ragged, XFileError, read, scene_of

CUBE = b"""xof 0303txt 0032
// a comment
# another comment
Material Red {
  1.0;0.0;0.0;1.0;;
  12.5;
  0.5;0.5;0.5;;
  0.0;0.0;0.0;;
  TextureFilename { "red.png"; }
}
Frame Root {
  FrameTransformMatrix {
    1.0,0.0,0.0,0.0, 0.0,1.0,0.0,0.0, 0.0,0.0,1.0,0.0, 5.0,6.0,7.0,1.0;;
  }
  Mesh Quad {
    5;
    0.0;0.0;0.0;,
    1.0;0.0;0.0;,
    1.0;1.0;0.0;,
    0.0;1.0;0.0;,
    2.0;2.0;0.0;;
    2;
    4;0,1,2,3;,
    3;1,4,2;;
    MeshMaterialList { 1; 1; 0;; {Red} }
    MeshNormals { 1; 0.0;0.0;1.0;; 2; 4;0,0,0,0;, 3;0,0,0;; }
  }
}
"""


def test_cube_members_are_arrays_with_the_template_shapes() -> None:
    doc = read(CUBE)
    assert (doc.format, doc.version, doc.float_bits) == ("txt", "0303", 32)
    frame = next(doc.top("Frame"))
    mesh = next(frame.objects("Mesh"))
    assert mesh.name == "Quad"
    assert mesh["nVertices"] == 5
    assert mesh["vertices"].shape == (5, 3)
    assert mesh["vertices"].dtype == np.float64
    assert mesh["vertices"][4].tolist() == [2.0, 2.0, 0.0]
    faces = mesh["faces"]
    assert isinstance(faces, Ragged)
    assert faces.flat.tolist() == [4, 0, 1, 2, 3, 3, 1, 4, 2]
    assert faces.starts.tolist() == [0, 5]
    matrix = next(frame.objects("FrameTransformMatrix"))["frameMatrix"]["matrix"]
    assert matrix.tolist()[12:15] == [5.0, 6.0, 7.0]


def test_cube_scene_view() -> None:
    scene = scene_of(read(CUBE))
    (frame,) = scene.frames
    assert frame.matrix[3].tolist() == [5.0, 6.0, 7.0, 1.0]
    (mesh,) = frame.meshes
    assert mesh.face_sizes.tolist() == [4, 3]
    assert mesh.corners.tolist() == [0, 1, 2, 3, 1, 4, 2]
    assert mesh.material_indices is not None and mesh.material_indices.tolist() == [0, 0]
    (mat,) = mesh.materials
    assert mat.name == "Red" and mat.texture == "red.png" and mat.power == 12.5
    assert mat.face_color.tolist() == [1.0, 0.0, 0.0, 1.0]
    assert mesh.normal_corners is not None and mesh.normal_corners.tolist() == [0] * 7


def test_truncated_text_names_line_and_column() -> None:
    with pytest.raises(XFileError) as info:
        read(CUBE[:-40])  # cut inside MeshNormals, on line 26
    assert str(info.value).startswith("<data>:26:")
    assert "MeshNormals.normals" in str(info.value)
