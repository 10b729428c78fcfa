"""Build steps: how skinning, animation, morphs and cloth plug into the import.

After meshes, materials and the frame hierarchy exist, the importer runs every build step
in ``order`` with a :class:`~.importer.BuildContext` (the SceneData, the options, the maps
MeshData -> object and FrameData -> object, the conversion, the report). To add one, put a
module in this package that defines ``BUILD_STEP = BuildStep(name, order, run)`` (or a
``BUILD_STEPS`` list): it is found by name, no edit of the importer needed. Code outside the
package calls :func:`register_step`. Suggested orders: armatures 100, skin 200, animation
300, morphs 400, cloth 500, extras 900 (last, so it sees what others consumed).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .importer import BuildContext


@dataclass(frozen=True)
class BuildStep:
    name: str
    order: float
    run: Callable[[BuildContext], None]


_registered: dict[str, BuildStep] = {}


def register_step(step: BuildStep) -> None:
    """Add (or replace, by name) a step from outside this package."""
    _registered[step.name] = step


def unregister_step(name: str) -> None:
    _registered.pop(name, None)


def _package_modules() -> list[str]:
    package = importlib.import_module(__package__ or "")
    return sorted(info.name for info in pkgutil.iter_modules(package.__path__))


def discover_steps() -> list[BuildStep]:
    """Every step of this package's modules plus registered ones, sorted by order then name."""
    found: dict[str, BuildStep] = {}
    for name in _package_modules():
        module = importlib.import_module(f"{__package__}.{name}")
        steps = list(getattr(module, "BUILD_STEPS", []))
        single = getattr(module, "BUILD_STEP", None)
        if single is not None:
            steps.append(single)
        for step in steps:
            if isinstance(step, BuildStep):
                found[step.name] = step
    found.update(_registered)
    return sorted(found.values(), key=lambda s: (s.order, s.name))
