"""Typed views of a document (see ``model.py``); ``scene_data(doc)`` builds them all."""

from __future__ import annotations

from .scene import scene_data

__all__ = ["scene_data"]
