"""The import's options: one dataclass per concern, each default in one place (no bpy).

``ImportOptions`` nests ``files``, ``transform``, ``mesh``, ``armature``, ``animation``,
``morphs`` and ``cloth``. The import operators read their properties' defaults from these
dataclasses, so a default changes here only. A new option: add a field (with its default and
a comment) to the dataclass of its concern; a property to ``operators/import_x.py`` with
``default=DEFAULTS.<concern>.<field>``, passed on in the operator's ``import_options``; the step
reads ``ctx.options.<concern>.<field>``.

Scripts may also pass the fields flat: ``ImportOptions(global_scale=0.01, use_uvs=False)``
sets that field of the nested dataclass that owns the name.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any

from ...xfile import MAX_INFLATED, MAX_RATIO
from ..anim.key_sampling import DEFAULT_MAX_STEP
from ..morph.phonemes import DEFAULT_PHONEME_TARGETS
from .convert import Conversion


@dataclass
class FileOptions:
    # how names inside files are decoded: "auto", "utf-8", "shift_jis", "cp1252" (see
    # addon.xfile.ENCODINGS); auto takes UTF-8 when valid, else guesses a legacy code page
    names_encoding: str = "auto"
    # more folders to take textures from; else only the .x file's folder tree is searched
    texture_folders: tuple[str, ...] = ()
    # what a compressed file may decompress to: bytes, and (past 64 MiB) times its own size
    max_inflated: int = MAX_INFLATED
    max_inflate_ratio: float = MAX_RATIO


@dataclass
class TransformOptions:
    axis_forward: str = "Z"  # file axis that becomes Blender +Y (D3D: +Z, into the screen)
    axis_up: str = "Y"  # file axis that becomes Blender +Z
    global_scale: float = 1.0  # multiplies positions and translations


@dataclass
class MeshOptions:
    use_custom_normals: bool = True  # MeshNormals as custom split normals
    shading: str = "SMOOTH"  # "SMOOTH" or "FLAT" for meshes without (or ignoring) normals
    use_uvs: bool = True
    use_colors: bool = True
    use_materials: bool = True
    keep_empty_frames: bool = True  # frames holding no mesh become empties (else dropped)


@dataclass
class ArmatureOptions:
    # every frame a bone, not only the skinning ones, the animated ones and their ancestors
    every_frame: bool = False


@dataclass
class AnimationOptions:
    enabled: bool = True  # every AnimationSet as an action
    scene_timing: bool = True  # the scene's frame rate (when whole) and range from the file
    # radians: rotation spans wider than this get extra keys so Blender's interpolation follows
    # the file's slerp; 0 keeps exactly the file's key times
    slerp_step: float = float(DEFAULT_MAX_STEP)
    # "AUTO" (the file's, else 4800 unless the longest set would last under a second: then
    # ticks are frames at the scene rate), "FILE" (the file's, else 4800) or "CUSTOM"
    ticks_per_second: str = "AUTO"
    custom_ticks_per_second: float = 4800.0  # with ticks_per_second "CUSTOM"
    # "AUTO": sets that key disjoint bones play together (unmuted NLA tracks), else as
    # "SEPARATE": one action each, the first playing, the others on muted NLA tracks
    animation_sets: str = "AUTO"
    # animation-only files: strip this from frame names before matching bones (names that
    # end in a bone's name after a separator match anyway when unambiguous)
    strip_prefix: str = ""

    def tick_choice(self) -> str | float:
        """What :func:`..anim.timing.resolve_ticks_per_second` takes."""
        return self.custom_ticks_per_second if self.ticks_per_second == "CUSTOM" else (
            self.ticks_per_second)  # fmt: skip


@dataclass
class MorphImportOptions:
    keep_targets: bool = False  # keep the meshes that became shape keys as objects too
    loop_all: bool = False  # cycle every morph set, not only those whose file says Loop = 1
    # a file without morph sets whose meshes share a vertex count (facial targets): one mesh,
    # the others its shape keys
    targets_as_shape_keys: bool = False
    # lip-sync files: the targets (shape keys) of phonemes 0..37, comma-separated
    phoneme_map: str = ",".join(DEFAULT_PHONEME_TARGETS)


@dataclass
class ClothOptions:
    enable: bool = True  # turn on xof's simulation for meshes with ClothMasses / ClothSprings


_GROUPS: dict[str, type] = {
    "files": FileOptions,
    "transform": TransformOptions,
    "mesh": MeshOptions,
    "armature": ArmatureOptions,
    "animation": AnimationOptions,
    "morphs": MorphImportOptions,
    "cloth": ClothOptions,
}
#: flat keyword -> the group that owns it (the names are unique across groups)
_FLAT: dict[str, str] = {f.name: g for g, cls in _GROUPS.items() for f in fields(cls)}


@dataclass(init=False)
class ImportOptions:
    """Every import option, by concern; see the module docstring for flat keywords."""

    files: FileOptions = field(default_factory=FileOptions)
    transform: TransformOptions = field(default_factory=TransformOptions)
    mesh: MeshOptions = field(default_factory=MeshOptions)
    armature: ArmatureOptions = field(default_factory=ArmatureOptions)
    animation: AnimationOptions = field(default_factory=AnimationOptions)
    morphs: MorphImportOptions = field(default_factory=MorphImportOptions)
    cloth: ClothOptions = field(default_factory=ClothOptions)

    def __init__(
        self,
        transform: TransformOptions | None = None,
        mesh: MeshOptions | None = None,
        armature: ArmatureOptions | None = None,
        animation: AnimationOptions | None = None,
        morphs: MorphImportOptions | None = None,
        cloth: ClothOptions | None = None,
        files: FileOptions | None = None,
        **flat: Any,
    ) -> None:
        self.files = files or FileOptions()
        self.transform = transform or TransformOptions()
        self.mesh = mesh or MeshOptions()
        self.armature = armature or ArmatureOptions()
        self.animation = animation or AnimationOptions()
        self.morphs = morphs or MorphImportOptions()
        self.cloth = cloth or ClothOptions()
        for name, value in flat.items():
            if name not in _FLAT:
                raise TypeError(f"ImportOptions: unknown option {name!r}")
            group = _FLAT[name]
            setattr(self, group, replace(getattr(self, group), **{name: value}))

    def conversion(self) -> Conversion:
        t = self.transform
        return Conversion.from_options(t.axis_forward, t.axis_up, t.global_scale)


#: What the operators' properties start at.
DEFAULTS = ImportOptions()
