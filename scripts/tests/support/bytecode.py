"""The package's bytecode, written once before the tests when Python may not write it itself.

Under PYTHONDONTWRITEBYTECODE (set on some machines, CI's among them) every `ll-loop` process
a test starts compiles each module it imports from source again: about 0.1 s of CPU a
process, thousands of times a run. Compiled once here, they read it instead (a file edited
since is compiled from source again, as always). Without the variable Python writes it on
first import anyway.
"""

from __future__ import annotations

import compileall
import os
import sys
from pathlib import Path

import little_loops


def compile_package() -> None:
    """Write `__pycache__` for the package, if Python will not and its folder is writable."""
    package = Path(little_loops.__file__).parent
    if sys.dont_write_bytecode and os.access(package, os.W_OK):
        compileall.compile_dir(package, quiet=1)
