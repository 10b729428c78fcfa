"""Shared test set-up.

Pure layers (``addon.xfile``, ``addon.sim``) are imported as ``addon.*`` from the repository
root. Blender-side code is imported as the package ``xof`` (see ``xof_package``), the way
Blender imports the extension, so its relative imports resolve.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "xcorpus"

_link_dir = Path(tempfile.mkdtemp(prefix="xof-pkg-"))
(_link_dir / "xof").symlink_to(ROOT, target_is_directory=True)
sys.path.insert(0, str(_link_dir))


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The shared corpus of real files; tests that need it skip when it is absent."""
    if not CORPUS.is_dir():
        pytest.skip("../shared/xcorpus is absent")
    return CORPUS
