"""Write ``examples/cape.x``: the demo's cloth, a cape held out flat by five points of one edge.

A 33 x 25 vertex sheet (1.6 m wide, 1.2 m deep), level at 2 m, in D3D conventions
(left-handed, Y up; the sheet reaches toward -Z, which becomes Blender's -Y, the viewer's side),
with normals, UVs, one material, a ``ClothMasses`` object whose zero masses pin five points
of the top edge, and a ``ClothSprings`` object listing the sheet's grid edges. Run it again
after changing the numbers below; the output is committed so ``make demo`` needs nothing.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

COLS, ROWS = 33, 25
WIDTH, HEIGHT = 1.6, 1.2
TOP_Y = 2.0
PINNED_COLUMNS = (0, 8, 16, 24, 32)

TEMPLATES = """\
template ClothMasses {
 <F5AD0F93-9BF2-4bcf-B7CF-D68CD6B54156>
 DWORD NumPoints;
 array FLOAT Mass[NumPoints];
}

template ClothSprings {
 <8C08B088-728E-46c8-BE87-72672B81DB11>
 DWORD NumSprings;
 DWORD NumVertices;
 array DWORD Vertex[NumVertices];
}
"""


def grid() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Positions, UVs, quads (clockwise seen from above, D3D's front) and spring pairs."""
    u, v = np.meshgrid(np.linspace(0, 1, COLS), np.linspace(0, 1, ROWS))
    x = (u - 0.5) * WIDTH
    y = np.full_like(x, TOP_Y)
    z = -v * HEIGHT
    positions = np.stack([x, y, z], axis=-1).reshape(-1, 3)
    uvs = np.stack([u, v], axis=-1).reshape(-1, 2)
    idx = np.arange(COLS * ROWS).reshape(ROWS, COLS)
    a, b = idx[:-1, :-1], idx[:-1, 1:]
    c, d = idx[1:, 1:], idx[1:, :-1]
    quads = np.stack([a, b, c, d], axis=-1).reshape(-1, 4)
    horizontal = np.stack([idx[:, :-1], idx[:, 1:]], axis=-1).reshape(-1, 2)
    vertical = np.stack([idx[:-1, :], idx[1:, :]], axis=-1).reshape(-1, 2)
    return positions, uvs, quads, np.concatenate([horizontal, vertical])


def rows(values: np.ndarray, fmt: str, last: str = ";") -> str:
    lines = [";".join(fmt % x for x in row) + ";" for row in values]
    return ",\n".join("  " + line for line in lines) + last


def cape_text() -> str:
    positions, uvs, quads, springs = grid()
    n = len(positions)
    masses = np.ones(n)
    masses[list(PINNED_COLUMNS)] = 0.0  # row 0 is the held edge
    faces = ",\n".join(f"  4;{a},{b},{c},{d};" for a, b, c, d in quads) + ";"
    normal_faces = ",\n".join(f"  4;{a},{b},{c},{d};" for a, b, c, d in quads) + ";"
    normals = np.tile([0.0, 1.0, 0.0], (n, 1))
    spring_list = ", ".join(f"{i},{j}" for i, j in springs)
    mass_list = ", ".join(f"{m:.1f}" for m in masses)
    return f"""xof 0303txt 0032
// The xof demo cape: {COLS} x {ROWS} vertices, level, pinned at {len(PINNED_COLUMNS)} points
// of its far edge. Written by examples/make_cape.py.

{TEMPLATES}
Material CapeCloth {{
 0.120000;0.230000;0.550000;1.000000;;
 12.000000;
 0.150000;0.150000;0.150000;;
 0.000000;0.000000;0.000000;;
}}

Frame Cape {{
 FrameTransformMatrix {{
  1.000000,0.000000,0.000000,0.000000,
  0.000000,1.000000,0.000000,0.000000,
  0.000000,0.000000,1.000000,0.000000,
  0.000000,0.000000,0.000000,1.000000;;
 }}

 Mesh CapeMesh {{
  {n};
{rows(positions, "%.6f")};
  {len(quads)};
{faces}

  MeshNormals {{
   {n};
{rows(normals, "%.6f")};
   {len(quads)};
{normal_faces}
  }}

  MeshTextureCoords {{
   {n};
{rows(uvs, "%.6f")};
  }}

  MeshMaterialList {{
   1;
   1;
   0;;
   {{ CapeCloth }}
  }}

  ClothMasses {{
   {n};
   {mass_list};
  }}

  ClothSprings {{
   {len(springs)};
   {2 * len(springs)};
   {spring_list};
  }}
 }}
}}
"""


if __name__ == "__main__":
    out = Path(__file__).with_name("cape.x")
    out.write_text(cape_text(), encoding="ascii")
    print(f"wrote {out}")
