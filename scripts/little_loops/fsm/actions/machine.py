"""What an agent's readiness check looks at: this machine's environment, PATH, home and versions."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from little_loops.fsm.processes.containment import CONTAINMENT

VERSION_TIMEOUT = (
    30.0  # seconds for `PROGRAM --version` (a node CLI starts slowly on a busy machine)
)


def _version_of(program: str) -> str | None:
    """The first line `PROGRAM --version` prints, or None when it does not run or fails."""
    streams = (subprocess.DEVNULL, subprocess.PIPE, subprocess.DEVNULL)
    try:
        child = CONTAINMENT.start([program, "--version"], env=None, streams=streams, session=True)
    except (OSError, ValueError):
        return None
    with child.process as proc:
        try:
            out, _ = proc.communicate(timeout=VERSION_TIMEOUT)
        except subprocess.TimeoutExpired:
            child.end(0.0)
            return None
        except BaseException:  # e.g. Ctrl-C: never leave it running
            child.end(0.0)
            raise
    if proc.returncode != 0:
        return None
    lines = [line.strip() for line in out.decode("utf-8", "replace").splitlines() if line.strip()]
    return lines[0] if lines else None


@dataclass(frozen=True)
class Machine:
    """What the checks look at: the environment, whether this process is root, how a
    program is found on PATH, the home folder (where CLIs keep their logins) and how a
    program's version is read. The real ones by default; a test may give its own."""

    env: Mapping[str, str]
    root: bool
    which: Callable[[str], str | None]
    home: Path = field(default_factory=Path.home)
    version: Callable[[str], str | None] = _version_of

    @classmethod
    def here(cls) -> Machine:
        root = hasattr(os, "geteuid") and os.geteuid() == 0
        return cls(dict(os.environ), root, shutil.which)
