"""The scene tests' shared set-up: xof enabled as Blender enables an extension, and an empty
file. A test module takes them with ``pytestmark = [..., pytest.mark.usefixtures(...)]`` or
asks for them by name."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="module")
def xof_enabled() -> Iterator[None]:
    """xof enabled (operators, menus, handlers registered) for the whole module."""
    pytest.importorskip("bpy")
    import addon_utils

    addon_utils.enable("xof", default_set=True)
    yield
    addon_utils.disable("xof", default_set=True)


@pytest.fixture
def empty_scene() -> None:
    """An empty file (no objects, no data but the scene), as each test starts from."""
    bpy = pytest.importorskip("bpy")
    bpy.ops.wm.read_homefile(use_empty=True)
