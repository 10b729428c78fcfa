"""Entry point of ``python -m addon.xfile`` (see ``cli.py``)."""

import os
import sys

from .cli import main

try:
    code = main()
    sys.stdout.flush()
except BrokenPipeError:
    # the reader of our output left (``info FILE | head``): end quietly, as a pipe tool does;
    # stdout goes to devnull so the interpreter's own flush at exit cannot fail again
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    code = 0
sys.exit(code)
