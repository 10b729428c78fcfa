"""``python -m addon.batch``: the batch converter's command line."""

import sys

from .cli import main

sys.exit(main())
