"""Typed views of a document (see ``model.py``): ``scene_of(doc)`` is the entry point.

The views import ``document``; ``document`` never imports them. ``scene_of`` is the one way
in to a document's scene data: it builds the views once and keeps them in the document.
"""

from __future__ import annotations

from ..document import XDocument
from .model import SceneData
from .scene import scene_data

__all__ = ["SceneData", "scene_of"]


def scene_of(doc: XDocument) -> SceneData:
    """The typed views of ``doc`` (frames, meshes, skins, animation, cloth, morphs), built on
    the first call and cached on the document."""
    scene = doc.views_cache.get("scene")
    if not isinstance(scene, SceneData):
        scene = doc.views_cache["scene"] = scene_data(doc)
    return scene
