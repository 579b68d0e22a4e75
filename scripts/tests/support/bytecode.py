"""Bytecode is written during the tests, even when PYTHONDONTWRITEBYTECODE says not to.

Under that variable (set on some machines, CI's among them) each pytest process rewrites the
asserts of every test module again (a third of collecting, twice with two workers), and every
`ll-loop` process a test starts compiles each module it imports from source again: about
0.1 s of CPU a process, thousands of times a run. The `__pycache__` folders are the ones
Python writes without the variable (git ignores them); a file edited since is compiled from
source again, as always.
"""

from __future__ import annotations

import compileall
import os
import sys
from pathlib import Path

import little_loops


def write_bytecode() -> None:
    """Let this process write bytecode (pytest's rewritten test modules too), and write the
    package's now, for the processes the tests start, which may not."""
    if not sys.dont_write_bytecode:
        return
    sys.dont_write_bytecode = False
    package = Path(little_loops.__file__).parent
    if os.access(package, os.W_OK):
        compileall.compile_dir(package, quiet=1)
