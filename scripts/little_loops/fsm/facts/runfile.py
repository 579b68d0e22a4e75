"""Files under `.loops/.running/` opened as ours alone: never through a link, only regular files.

A cloned or shared project can plant a symbolic link, a FIFO or a device where a run file
goes (`.loops/.running/fix.events.jsonl -> ~/.bashrc`). Every run file is opened with
O_NOFOLLOW (a link is refused, never followed) and O_NONBLOCK (a FIFO cannot hang the
open), and what was opened must be a regular file; anything else is a NotOurFile naming it.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

from little_loops.fsm.facts.errors import LoopRuntimeError

_SAFE = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


class NotOurFile(LoopRuntimeError):
    """A run file's path holds a symbolic link or something other than a regular file."""


def display_path(path: Path | str) -> str:
    """`path` relative to the current directory when it is inside it, as users typed it."""
    try:
        return str(Path(path).relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def refused(path: Path | str, what: str) -> NotOurFile:
    """The one-line error for a run-file path that is *what* (a link, a FIFO ...), not ours."""
    return NotOurFile(
        f"{display_path(path)}: is {what}, not a file ll-loop wrote; ll-loop does not follow"
        " or use such paths among its run files (remove it)"
    )


def open_run_file(
    path: Path | str, flags: int, mode: int = 0o644, *, regular_only: bool = True
) -> int:
    """`os.open` of a run file; NotOurFile for a symbolic link, a FIFO nobody reads, or
    (with *regular_only*) a device or a directory at *path*. FileNotFoundError and other
    OSErrors pass through. An action's output file that a caller of the runner names
    itself (`/dev/null`) may be a device: *regular_only* False."""
    try:
        fd = os.open(path, flags | _SAFE, mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise refused(path, "a symbolic link") from None
        if exc.errno in (errno.EISDIR, errno.ENXIO):  # ENXIO: a FIFO nobody reads
            raise refused(path, "a directory" if exc.errno == errno.EISDIR else "a FIFO") from None
        raise
    mode_bits = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode_bits) and (regular_only or stat.S_ISFIFO(mode_bits)):
        os.close(fd)
        raise refused(path, kind_of(mode_bits))
    return fd


def kind_of(mode: int) -> str:
    """What a file that is not a regular one is, by its *mode* (`a FIFO`, `a directory`)."""
    return next((name for test, name in _KINDS if test(mode)), "a special file")


def open_run_stream(path: Path | str) -> BinaryIO:
    """A run file opened for reading, as a buffered binary stream."""
    return os.fdopen(open_run_file(path, os.O_RDONLY), "rb")


def read_run_file(path: Path | str) -> bytes:
    """The whole of a (small) run file; FileNotFoundError when there is none."""
    with open_run_stream(path) as handle:
        return handle.read()
