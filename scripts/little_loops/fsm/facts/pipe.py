"""A pipe (a FIFO, bash's `<(...)`) read whole within a deadline and a size cap, the one way.

Someone else's command writes a pipe: it may write nothing for ever (a FIFO nobody writes
to, `<(sleep 1000)`) or never end (`<(yes)`). What it gives is copied into an unnamed
temporary file, a chunk at a time, until its writer ends (a FIFO no writer has opened
yet is waited on, as `cat` would); never past the deadline (the Deadline
`read_deadline()` gives: READ_SECONDS from now, or as many as the environment variable
LL_LOOP_READ_SECONDS says, read once) and never past the caller's cap.
"""

from __future__ import annotations

import math
import os
import select
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import IO

from little_loops.fsm.facts.errors import LoopRuntimeError
from little_loops.fsm.facts.safetext import one_line

READ_SECONDS = 300.0  # reading what the user named (a report's files, a context file), at most
READ_SECONDS_ENV = "LL_LOOP_READ_SECONDS"
_CHUNK = 64 * 1024


class PipeRefused(Exception):
    """Why a pipe was not read whole (the caller names the pipe): *late* when the deadline
    passed, else it gave more than the cap."""

    def __init__(self, why: str, *, late: bool) -> None:
        super().__init__(why)
        self.late = late


class NoTempFile(Exception):
    """No temporary file could hold the copy (none could be made, or its disk is full); the
    message says why, the caller names what was copied."""

    def __init__(self, exc: OSError) -> None:
        why = one_line(exc.strerror or exc)
        super().__init__(f"no temporary file could hold a copy of it ({why}; TMPDIR sets where)")


def read_seconds() -> float:
    """How long a read may take: READ_SECONDS, or LL_LOOP_READ_SECONDS when it is set
    (LoopRuntimeError when that is not a number of seconds above 0)."""
    given = os.environ.get(READ_SECONDS_ENV)
    if given is None:
        return READ_SECONDS
    try:
        seconds = float(given)
    except ValueError:
        seconds = math.nan
    if not 0 < seconds < math.inf:
        shown = one_line(given)[:40]
        raise LoopRuntimeError(f"{READ_SECONDS_ENV}={shown}: expected a number of seconds above 0")
    return seconds


@dataclass(frozen=True)
class Deadline:
    """When a read must have ended: the monotonic time *at*, *seconds* after it began (kept
    for the message, so the environment is read once, when the deadline is made)."""

    at: float
    seconds: float

    def left(self) -> float:
        """The seconds until the deadline (0 or less once it passed)."""
        return self.at - time.monotonic()

    def missed(self) -> str:
        """What a read that did not end by the deadline is told."""
        return f"not read within {self.seconds:g}s"


def read_deadline() -> Deadline:
    """The deadline of a read begun now (LoopRuntimeError when LL_LOOP_READ_SECONDS is
    not a number of seconds above 0)."""
    seconds = read_seconds()
    return Deadline(time.monotonic() + seconds, seconds)


def spool(fd: int, deadline: Deadline, cap: int) -> IO[bytes]:
    """What the pipe *fd* (open, non-blocking) gives until its writer ends (a FIFO no
    writer has opened yet is waited on), in an unnamed temporary file at its start;
    PipeRefused past *deadline* or past *cap* bytes, NoTempFile when the copy cannot be
    made or written. *fd* stays open: the caller closes it."""
    with temp_writes():  # no usable temporary folder
        copy = tempfile.TemporaryFile()  # noqa: SIM115 (handed back open: the caller closes it)
    poll = select.poll()
    poll.register(fd, select.POLLIN)
    size = 0
    try:
        while True:
            left = deadline.left()  # also for a writer that never stops
            if left <= 0:
                raise PipeRefused(deadline.missed(), late=True)
            # Waited on before each read: read at once, a FIFO no writer has opened yet
            # says it ended (as one whose writer is done); poll waits for a writer.
            if not poll.poll(min(left, 1.0) * 1000):
                continue
            try:
                data = os.read(fd, _CHUNK)
            except BlockingIOError:  # woken with nothing to read after all
                continue
            if not data:
                break
            size += len(data)
            if size > cap:
                raise PipeRefused(f"more than {cap:,} bytes", late=False)
            with temp_writes():  # a full disk
                copy.write(data)
        with temp_writes():
            copy.seek(0)  # (writes what is buffered first)
    except BaseException:
        # Closing flushes what a failed write left buffered: it fails the same way, and
        # must not put its bare OSError in the place of the error being raised.
        with suppress(OSError):
            copy.close()
        raise
    return copy


@contextmanager
def temp_writes() -> Iterator[None]:
    """A block that makes or writes a temporary copy: its OSError raised as NoTempFile (an
    error of reading the pipe, outside such a block, stays an OSError)."""
    try:
        yield
    except OSError as exc:
        raise NoTempFile(exc) from None
