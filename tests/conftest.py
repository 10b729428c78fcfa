"""Shared test set-up.

Blender-side code is imported as the package ``xof`` (the repository linked as ``xof`` on
``sys.path``), the way Blender imports the extension, so its relative imports resolve; the
tests under ``tests/scene`` import everything, ``xfile`` and ``sim`` too, through ``xof.``. The
pure layers' own tests (``tests/xfile``, ``tests/sim``) import ``addon.xfile`` / ``addon.sim``
from the repository root. ``addon.scene`` is never imported as ``addon.*``: a second copy of
its module state (the cloth runtimes, the frame handler's registry) would be a different
module from the one Blender's operators use. The session fails if one appears.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: Real .X files written by other tools (README.md, "The real-file corpus"): the folder named
#: by ``XOF_CORPUS``, else ``../shared/xcorpus`` beside the clone. Tests that need it skip
#: without it, with ``CORPUS_HELP`` in their message.
CORPUS = Path(os.environ.get("XOF_CORPUS") or ROOT.parent / "shared" / "xcorpus").expanduser()
CORPUS_HELP = 'see README.md, "The real-file corpus"'

_link_dir = Path(tempfile.mkdtemp(prefix="xof-pkg-"))
(_link_dir / "xof").symlink_to(ROOT, target_is_directory=True)
sys.path.insert(0, str(_link_dir))


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The corpus of real files; tests that need it skip when it is absent."""
    if not CORPUS.is_dir():
        pytest.skip(f"the real-file corpus is absent ({CORPUS}): {CORPUS_HELP}")
    return CORPUS


def scene_imported_twice() -> list[str]:
    """Modules of ``addon/scene`` loaded as ``addon.scene.*`` (they belong under ``xof.``)."""
    return sorted(m for m in sys.modules if m == "addon.scene" or m.startswith("addon.scene."))


def pytest_collection_finish(session: pytest.Session) -> None:
    twice = scene_imported_twice()
    if twice:
        raise pytest.UsageError(f"imported as addon.scene.*, import them as xof.addon.*: {twice}")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    twice = scene_imported_twice()
    if twice:
        print(f"\nerror: imported as addon.scene.*, import them as xof.addon.*: {twice}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
