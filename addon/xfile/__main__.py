"""Entry point of ``python -m addon.xfile`` (see ``cli.py``)."""

import sys

from .cli import main

sys.exit(main())
