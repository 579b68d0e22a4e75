"""What an agent's readiness check looks at: this machine's environment, PATH, home and versions."""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from little_loops.fsm.processes.containment import CONTAINMENT

VERSION_TIMEOUT = (
    30.0  # seconds for `PROGRAM --version` (a node CLI starts slowly on a busy machine)
)
VERSION_BYTES = 64 * 1024  # of `PROGRAM --version`'s output: a version is its first line


def _version_of(program: str) -> str | None:
    """The first line `PROGRAM --version` prints, or None when it does not run or fails.
    At most VERSION_BYTES are read: one that prints without end is ended there."""
    streams = (subprocess.DEVNULL, subprocess.PIPE, subprocess.DEVNULL)
    try:
        child = CONTAINMENT.start([program, "--version"], env=None, streams=streams, session=True)
    except (OSError, ValueError):
        return None
    deadline = time.monotonic() + VERSION_TIMEOUT
    with child.process as proc:
        try:
            out = _read_capped(proc.stdout, deadline) if proc.stdout is not None else None
            if out is not None and len(out) < VERSION_BYTES:  # it ended its output: and itself?
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            out = None
        except BaseException:  # e.g. Ctrl-C: never leave it running
            child.end(0.0)
            raise
        if out is None or len(out) >= VERSION_BYTES:  # too slow, or printing without end
            child.end(0.0)
        elif proc.returncode != 0:
            return None
    if out is None:
        return None
    lines = [line.strip() for line in out.decode("utf-8", "replace").splitlines() if line.strip()]
    return lines[0] if lines else None


def _read_capped(stream: IO[bytes], deadline: float) -> bytes | None:
    """What *stream* gives until its end or VERSION_BYTES; None at *deadline* (monotonic)."""
    out = b""
    while len(out) < VERSION_BYTES:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([stream], [], [], left)[0]:
            return None
        chunk = os.read(stream.fileno(), VERSION_BYTES - len(out))
        if not chunk:
            break
        out += chunk
    return out


def version_numbers(said: str | None) -> tuple[int, int, int] | None:
    """The first `x.y.z` in what a program's `--version` said, as numbers to compare with an
    agent's oldest supported version; None when it said none."""
    import re  # here: validate compiles no pattern at import

    found = re.search(r"(\d+)\.(\d+)\.(\d+)", said or "")
    if found is None:
        return None
    major, minor, patch = (int(part) for part in found.groups())
    return major, minor, patch


def shown_version(numbers: tuple[int, ...]) -> str:
    """`0.171.0`."""
    return ".".join(map(str, numbers))


@dataclass(frozen=True)
class Machine:
    """What the checks look at: the environment, whether this process is root, how a
    program is found on PATH, the home folder (where CLIs keep their logins) and how a
    program's version is read; the folder the agent runs in, and the arguments a run adds
    to its command line (`extra_args`: `--skip-trust` ...). The real ones by default; a
    test may give its own."""

    env: Mapping[str, str]
    root: bool
    which: Callable[[str], str | None]
    home: Path = field(default_factory=Path.home)
    version: Callable[[str], str | None] = _version_of
    cwd: Path = field(default_factory=Path.cwd)
    args: tuple[str, ...] = ()

    @classmethod
    def here(cls) -> Machine:
        root = hasattr(os, "geteuid") and os.geteuid() == 0
        return cls(dict(os.environ), root, shutil.which)
