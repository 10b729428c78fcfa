"""What to export and how, and what came out (the report line)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...imp.convert import Conversion


@dataclass
class ExportOptions:
    axis_forward: str = "Z"  # file axis that is Blender +Y (the importer's option, inverted)
    axis_up: str = "Y"  # file axis that is Blender +Z
    global_scale: float = 1.0  # the importer's scale: file units = Blender units / scale
    use_selection: bool = False
    use_visible: bool = False
    apply_modifiers: bool = False  # Armature modifiers are never applied (skins stay skins)
    format: str = "txt"  # txt, bin, tzip, bzip
    #: D3DX9 (xof 0303, every template declared that is not standard) or LEGACY (xof 0302,
    #: standard templates only and no declarations, triangles, <= 4 weights a vertex, ASCII)
    compatibility: str = "D3DX9"
    float_bits: int = 32
    use_normals: bool = True
    use_uvs: bool = True
    use_colors: bool = True
    use_materials: bool = True
    use_skin: bool = True
    use_animation: bool = True
    use_morphs: bool = True
    use_cloth: bool = True
    bake_step: int = 1  # a baked simulation's morph set: one key mesh every N baked frames
    #: AnimTicksPerSecond written; 0: the scene's rate when every key is on a whole frame
    #: (so a re-import gets the rate back), else 4800 (D3DX's own default)
    ticks_per_second: int = 0
    #: where TextureFilenames point: AUTO, COPY, RELATIVE, ABSOLUTE or STRIP
    #: (:mod:`..texture_files`; AUTO: relative inside the file's folder, else copied beside it)
    path_mode: str = "AUTO"
    #: zlib level of tzip/bzip: 1 is several times faster than 6 for files a little larger
    #: (figures in tests/bench/README.md)
    compress_level: int = 1

    @property
    def legacy(self) -> bool:
        return self.compatibility == "LEGACY"

    def conversion(self) -> Conversion:
        return Conversion.from_options(self.axis_forward, self.axis_up, self.global_scale)


@dataclass(eq=False)
class ExportResult:
    filepath: str = ""
    frames: int = 0
    meshes: int = 0
    vertices: int = 0
    bones: int = 0
    animation_sets: int = 0
    morph_sets: int = 0
    ticks_per_second: int = 0  # AnimTicksPerSecond written (when there is animation)
    copied: list[str] = field(default_factory=list)  # textures copied beside the file
    size: int = 0
    warnings: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """The one report line."""
        text = (
            f"Exported {self.meshes} meshes ({self.vertices} vertices), {self.frames} frames, "
            f"{self.bones} bones, {self.animation_sets} animation sets, "
            f"{self.morph_sets} morph sets: {self.size} bytes"
        )
        if self.copied:
            text += f"; {len(self.copied)} texture(s) copied beside it"
        if self.warnings:
            text += f"; {len(self.warnings)} warnings (first: {self.warnings[0]})"
        return text
