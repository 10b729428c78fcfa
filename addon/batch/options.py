"""What the command line can ask of a conversion: target formats and import options.

Pure data (no bpy): the parent process parses the command line with it, and the worker
turns the chosen values into keywords of ``bpy.ops.import_scene.x``, coercing them to the
operator property's own type (so options another version of the operator types differently
still pass through).
"""

from __future__ import annotations

from dataclasses import dataclass

# Target -> (extension of the main output file, how textures travel).
TARGETS: dict[str, tuple[str, str]] = {
    "glb": (".glb", "embedded"),
    "gltf": (".gltf", "copied"),
    "blend": (".blend", "embedded"),
    "fbx": (".fbx", "copied"),
    "x": (".x", "copied"),
}


@dataclass(frozen=True)
class ImportFlag:
    """One command-line option that sets one property of the import operator."""

    flag: str  # e.g. "--scale"
    prop: str  # the operator property, e.g. "global_scale"
    kind: str  # "float", "int", "str", "true" (store_true), "false" (store_false)
    help: str
    choices: tuple[str, ...] = ()


_AXES = ("X", "Y", "Z", "-X", "-Y", "-Z")

IMPORT_FLAGS: tuple[ImportFlag, ...] = (
    ImportFlag("--scale", "global_scale", "float", "multiply positions by this (default 1)"),
    ImportFlag(
        "--axis-forward", "axis_forward", "str", "the file's forward axis (default Z)", _AXES
    ),
    ImportFlag("--axis-up", "axis_up", "str", "the file's up axis (default Y)", _AXES),
    ImportFlag(
        "--ticks-per-second",
        "animation_ticks_per_second",
        "ticks",
        "auto (default), file (the file's, else 4800), or the number of ticks a second",
    ),
    ImportFlag(
        "--animation-sets",
        "animation_sets",
        "str",
        "AUTO: sets keying disjoint bones play together (default); SEPARATE: one action each",
        ("AUTO", "SEPARATE"),
    ),
    ImportFlag("--no-custom-normals", "use_custom_normals", "false", "ignore the file's normals"),
    ImportFlag("--shading", "shading", "str", "shading without file normals", ("SMOOTH", "FLAT")),
    ImportFlag("--no-uvs", "use_uvs", "false", "skip UV sets"),
    ImportFlag("--no-colors", "use_colors", "false", "skip vertex colours"),
    ImportFlag("--no-materials", "use_materials", "false", "skip materials and textures"),
    ImportFlag("--no-empty-frames", "keep_empty_frames", "false", "drop frames holding no mesh"),
    ImportFlag(
        "--keep-morph-targets",
        "morph_keep_targets",
        "true",
        "keep meshes that became shape keys as objects too",
    ),
    ImportFlag("--loop-morphs", "morph_loop", "true", "cycle every morph animation set"),
    ImportFlag("--no-cloth", "cloth_enable", "false", "do not turn on xof's cloth simulation"),
    ImportFlag(
        "--bones-from-every-frame", "armature_every_frame", "true", "make every frame a bone"
    ),
    ImportFlag("--no-animation", "animation_enabled", "false", "skip AnimationSets"),
    ImportFlag(
        "--no-scene-timing",
        "animation_scene_timing",
        "false",
        "leave the scene's frame rate and range alone",
    ),
    ImportFlag(
        "--slerp-step",
        "animation_slerp_step",
        "float",
        "degrees between extra rotation keys (0: only the file's keys)",
    ),
)

# Properties given in degrees on the command line and in radians to the operator.
DEGREE_PROPS = frozenset({"animation_slerp_step"})


def ticks_choice(text: str) -> str:
    """``--ticks-per-second``: ``AUTO``, ``FILE`` or a positive number (as text)."""
    word = text.strip().upper()
    if word in ("AUTO", "FILE"):
        return word
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0.0 or value == float("inf"):
        raise ValueError(f"--ticks-per-second takes auto, file or a positive number, not {text!r}")
    return repr(value)


def ticks_keywords(choice: str) -> dict[str, object]:
    """The operator properties one ``--ticks-per-second`` choice sets."""
    if choice in ("AUTO", "FILE"):
        return {"animation_ticks_per_second": choice}
    custom = float(choice)
    return {"animation_ticks_per_second": "CUSTOM", "animation_custom_ticks_per_second": custom}


def coerce(value: object, rna_type: str, is_flag: bool) -> object:
    """``value`` (a command-line value) as the operator property of RNA type ``rna_type`` takes it.

    Raises ``ValueError`` when it does not convert.
    """
    if rna_type == "BOOLEAN":
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in ("1", "true", "yes", "on"):
            return True
        if text in ("0", "false", "no", "off"):
            return False
        raise ValueError(f"not a boolean: {value!r}")
    if rna_type == "INT":
        return int(str(value))
    if rna_type == "FLOAT":
        return float(str(value))
    if rna_type == "ENUM" and is_flag:
        return {part.strip() for part in str(value).split(",") if part.strip()}
    if rna_type in ("STRING", "ENUM"):
        return str(value)
    raise ValueError(f"an option of RNA type {rna_type} cannot be set from the command line")
