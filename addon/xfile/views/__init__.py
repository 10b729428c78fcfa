"""Typed views of a document (see ``model.py``): ``scene_of(doc)`` is the entry point.

The views import ``document``; ``document`` never imports them at module level
(``XDocument.scene()`` calls ``scene_of`` through an import inside the method).
"""

from __future__ import annotations

from ..document import XDocument
from .model import SceneData
from .scene import scene_data

__all__ = ["SceneData", "scene_data", "scene_of"]


def scene_of(doc: XDocument) -> SceneData:
    """The typed views of ``doc`` (frames, meshes, skins, animation, cloth, morphs), built on
    the first call and cached on the document."""
    if doc._scene is None:
        doc._scene = scene_data(doc)
    return doc._scene
