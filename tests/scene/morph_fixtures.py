"""Writers for morph test files: meshes plus MorphAnimationSets in either template variant.

Each fixture can write itself as a text .X file and as the SceneData the reader should give,
so the builders are testable before (and independently of) the reader. Expected shapes are
computed here by a plain blend of the file meshes, not by the code under test.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from xof.addon.xfile.views.model import MeshData, MorphKeyData, MorphSetData, SceneData

KEY_TEMPLATE = (
    "template MorphAnimationKey {\n <2746B58A-B375-4cc3-8D23-7D094D3C7C67>\n"
    " DWORD Time;\n STRING MeshName;\n}\n"
)
SET_TEMPLATE = (
    "template MorphAnimationSet {\n <0892DE81-915A-4f34-B503-F7C397CB9E06>\n"
    " DWORD NumKeys;\n array MorphAnimationKey Keys[NumKeys];\n}\n"
)
LOOP_SET_TEMPLATE = (
    "template MorphAnimationSet {\n <0892DE81-915A-4f34-B503-F7C397CB9E06>\n"
    " DWORD Loop;\n DWORD NumKeys;\n array MorphAnimationKey Keys[NumKeys];\n}\n"
)

# A 3x2 grid of quads split into triangles: 12 vertices, enough to see a blend.
GRID_FACES = [
    [0, 1, 5, 4],
    [1, 2, 6, 5],
    [2, 3, 7, 6],
    [4, 5, 9, 8],
    [5, 6, 10, 9],
    [6, 7, 11, 10],
]


def grid_positions(seed: int, count: int = 12) -> np.ndarray:
    """Deterministic, distinct positions per seed (values of order 1: float32-exact enough)."""
    rng = np.random.default_rng(seed)
    base = np.array([[i % 4, 0.0, i // 4] for i in range(count)], dtype=np.float64)
    return np.round(base + rng.uniform(-0.5, 0.5, size=(count, 3)), 4)


@dataclass
class MorphFixture:
    meshes: dict[str, np.ndarray]  # name -> (n, 3) file-space positions
    sets: list[tuple[str, bool, list[tuple[int, str]]]]  # (name, loop, [(ms, mesh)])
    loop_variant: bool = False  # declare the template with the Loop member
    faces: dict[str, list[list[int]]] = field(default_factory=dict)
    declare_templates: bool = True  # False: rely on the reader's built-in morph templates

    def faces_of(self, name: str) -> list[list[int]]:
        if name in self.faces:
            return self.faces[name]
        n = len(self.meshes[name])
        return GRID_FACES if n == 12 else [[i, i + 1, i + 2] for i in range(0, n - 2, 3)]

    # --- as a file ---------------------------------------------------------------------
    def text(self) -> str:
        out = ["xof 0303txt 0032\n"]
        if self.declare_templates:
            out += [KEY_TEMPLATE, LOOP_SET_TEMPLATE if self.loop_variant else SET_TEMPLATE]
        for name, positions in self.meshes.items():
            faces = self.faces_of(name)
            verts = ",\n".join(f"  {x:.4f};{y:.4f};{z:.4f};" for x, y, z in positions)
            polys = ",\n".join(f"  {len(f)};{','.join(str(i) for i in f)};" for f in faces)
            out.append(
                f"Mesh {name} {{\n {len(positions)};\n{verts};\n {len(faces)};\n{polys};\n}}\n"
            )
        for name, loop, keys in self.sets:
            head = f" {int(loop)};\n" if self.loop_variant else ""
            body = ",\n".join(f'  {t}; "{mesh}";' for t, mesh in keys)
            out.append(f"MorphAnimationSet {name} {{\n{head} {len(keys)};\n{body};\n}}\n")
        return "".join(out)

    def write(self, path: Path) -> Path:
        path.write_text(self.text(), encoding="ascii")
        return path

    # --- as the reader's view ------------------------------------------------------------
    def scene_data(self) -> SceneData:
        meshes = []
        for name, positions in self.meshes.items():
            faces = self.faces_of(name)
            meshes.append(
                MeshData(
                    name=name,
                    positions=np.asarray(positions, dtype=np.float64),
                    face_sizes=np.array([len(f) for f in faces], dtype=np.int64),
                    corners=np.array([i for f in faces for i in f], dtype=np.int64),
                )
            )
        sets = [
            MorphSetData(
                name=name,
                loop=bool(loop) if self.loop_variant else False,
                keys=[MorphKeyData(time_ms=float(t), mesh_name=m) for t, m in keys],
            )
            for name, loop, keys in self.sets
        ]
        return SceneData(meshes=meshes, morph_sets=sets)

    # --- the independent expectation ---------------------------------------------------------
    def expected(self, set_name: str, t_ms: float, loop: bool) -> np.ndarray:
        """The file's blend at ``t_ms`` in Blender space ((x, y, z) -> (x, z, y))."""
        keys = next(k for n, _, k in self.sets if n == set_name)
        times = np.array([t for t, _ in keys], dtype=np.float64)
        if loop and t_ms >= times[-1]:
            t_ms = t_ms % times[-1]
        if t_ms <= times[0]:
            shape = self.meshes[keys[0][1]]
        elif t_ms >= times[-1]:
            shape = self.meshes[keys[-1][1]]
        else:
            i = int(np.searchsorted(times, t_ms, side="right")) - 1
            s = (t_ms - times[i]) / (times[i + 1] - times[i])
            shape = (1 - s) * self.meshes[keys[i][1]] + s * self.meshes[keys[i + 1][1]]
        return np.asarray(shape)[:, [0, 2, 1]]


def dance(loop_variant: bool = False, loop: bool = False) -> MorphFixture:
    """Adams' example shape: Figure1 -> Figure2 -> Figure1 (the Basis comes back)."""
    return MorphFixture(
        meshes={"Figure1": grid_positions(1), "Figure2": grid_positions(2)},
        sets=[("Dance", loop, [(0, "Figure1"), (500, "Figure2"), (1000, "Figure1")])],
        loop_variant=loop_variant,
    )


def four_keys() -> MorphFixture:
    """Four meshes, uneven key spacing, starting after 0 ms, a repeated non-basis mesh."""
    return MorphFixture(
        meshes={f"Pose{i}": grid_positions(10 + i) for i in range(4)},
        sets=[
            (
                "Walk",
                False,
                [(125, "Pose0"), (375, "Pose1"), (1000, "Pose2"), (1250, "Pose1"), (2000, "Pose3")],
            )
        ],
    )


def shared_sets() -> MorphFixture:
    """Two sets over common meshes (one object, shared keys) plus a separate third set."""
    return MorphFixture(
        meshes={
            "Rest": grid_positions(20),
            "Smile": grid_positions(21),
            "Frown": grid_positions(22),
            "Other": grid_positions(23),
            "OtherB": grid_positions(24),
        },
        sets=[
            ("Happy", False, [(0, "Rest"), (400, "Smile"), (800, "Rest")]),
            ("Sad", True, [(0, "Smile"), (300, "Frown"), (900, "Rest")]),
            ("Lone", False, [(0, "Other"), (600, "OtherB")]),
        ],
        loop_variant=True,
    )


def mismatched() -> MorphFixture:
    """A target with fewer vertices: it is skipped with a warning, the rest plays."""
    return MorphFixture(
        meshes={
            "Base": grid_positions(30),
            "Bad": grid_positions(31, count=9),
            "Good": grid_positions(32),
        },
        sets=[("Mixed", False, [(0, "Base"), (500, "Bad"), (1000, "Good")])],
    )
