"""The typed import options: nested defaults, flat keywords for scripts (no bpy needed)."""

from __future__ import annotations

import math

import pytest
from xof.addon.scene.imp.options import (
    DEFAULTS,
    AnimationOptions,
    ImportOptions,
    MeshOptions,
    TransformOptions,
)


def test_defaults_by_concern():
    o = ImportOptions()
    assert (o.transform.axis_forward, o.transform.axis_up, o.transform.global_scale) == (
        "Z", "Y", 1.0,
    )  # fmt: skip
    assert o.mesh == MeshOptions(True, "SMOOTH", True, True, True, True)
    assert not o.armature.every_frame
    assert o.animation.enabled and o.animation.scene_timing
    assert o.animation.slerp_step == pytest.approx(math.radians(4.0), abs=1e-15)
    assert not o.morphs.keep_targets and not o.morphs.loop_all
    assert o.cloth.enable
    assert o == DEFAULTS


def test_flat_keywords_fill_their_group():
    o = ImportOptions(global_scale=0.01, axis_up="Z", use_uvs=False, keep_targets=True)
    assert o.transform == TransformOptions("Z", "Z", 0.01)
    assert not o.mesh.use_uvs and o.mesh.use_colors
    assert o.morphs.keep_targets
    assert o.animation == AnimationOptions()


def test_flat_keywords_do_not_change_a_given_group():
    mesh = MeshOptions()
    o = ImportOptions(mesh=mesh, use_colors=False)
    assert mesh.use_colors and not o.mesh.use_colors


def test_unknown_keyword_is_an_error():
    with pytest.raises(TypeError, match="slerp_step_degrees"):
        ImportOptions(slerp_step_degrees=4.0)


def test_conversion_uses_the_transform():
    conv = ImportOptions(global_scale=2.0).conversion()
    assert conv.scale == 2.0
