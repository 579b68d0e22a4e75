"""Read a child's pipes without blocking: keep the tail of each, copy all of it to a file."""

from __future__ import annotations

import contextlib
import os
import select
import subprocess
import sys
import time

CHUNK = 64 * 1024
_HUNG_UP_EMPTY = select.POLLHUP | select.POLLIN
_POLL_SECONDS = 0.05  # only without pidfd (not Linux): how often to look for the child's exit


class Tail:
    """The last `limit` bytes of a stream, and how many bytes it had in all."""

    __slots__ = ("buf", "limit", "total")

    def __init__(self, limit: int) -> None:
        self.buf = bytearray()
        self.limit = limit
        self.total = 0

    def add(self, data: bytes) -> bytes:
        """Keep a chunk read; returns what of it goes on to the stream's file (all of it)."""
        self.total += len(data)
        self.buf += data
        # Trimming at twice the limit keeps the copying linear in the output size.
        if len(self.buf) > 2 * self.limit:
            del self.buf[: len(self.buf) - self.limit]
        return data

    def flush(self) -> bytes:
        """At end of file: what it held back that goes on to the file (nothing here)."""
        return b""

    @property
    def truncated(self) -> bool:
        return self.total > min(len(self.buf), self.limit)

    def text(self) -> str:
        data = self.buf[len(self.buf) - self.limit :] if len(self.buf) > self.limit else self.buf
        if self.truncated:
            # Do not start the tail in the middle of a UTF-8 sequence.
            skip = 0
            while skip < min(3, len(data)) and data[skip] & 0xC0 == 0x80:
                skip += 1
            data = data[skip:]
        return data.decode("utf-8", errors="replace")


class Sink:
    """Where all of stdout (or stderr) goes: its file, until writing it fails once."""

    __slots__ = ("file_fd", "write_error")

    def __init__(self, file_fd: int) -> None:
        self.file_fd = file_fd
        self.write_error: str | None = None

    def write(self, data: bytes) -> None:
        if self.file_fd < 0 or self.write_error is not None:
            return
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self.file_fd, view) :]
        except OSError as exc:  # e.g. a full disk: the child goes on, the file stops
            self.write_error = exc.strerror or str(exc)


def read_ready(poller: select.poll, fd: int, events: int, tail: Tail, sink: Sink) -> bool:
    """Read one chunk from a ready pipe; False (and stop watching it) at end of file.

    A hang-up without POLLIN is an empty pipe whose writers are all gone: end of file
    without the read() that would say so.
    """
    if (events & _HUNG_UP_EMPTY) == select.POLLHUP:
        data = b""
    else:
        try:
            data = os.read(fd, CHUNK)
        except OSError:
            data = b""
    if not data:
        poller.unregister(fd)
        sink.write(tail.flush())
        return False
    sink.write(tail.add(data))
    return True


def open_pidfd(pid: int) -> int:
    """A descriptor that becomes readable when `pid` exits, or -1 where there is none."""
    if sys.platform == "linux":
        try:
            return os.pidfd_open(pid)
        except OSError:  # kernels before 5.3, or a seccomp filter
            return -1
    return -1


def drain(fd: int) -> None:
    """Read a non-blocking descriptor (a wake-up pipe) until it is empty."""
    with contextlib.suppress(BlockingIOError, InterruptedError):
        while os.read(fd, 512):
            pass


class Watch:
    """A running child's stdout and stderr pipes, its exit (a pidfd) and a wake-up pipe,
    polled together; each chunk read goes to its `Tail` and its `Sink`."""

    __slots__ = ("exited", "last_output", "open_pipes", "pidfd", "poller", "process", "readers")

    def __init__(
        self,
        process: subprocess.Popen[bytes],
        pipes: tuple[int, int],
        readers: tuple[tuple[Tail, Sink], tuple[Tail, Sink]],
        wake: int,
    ) -> None:
        self.process = process
        self.readers = dict(zip(pipes, readers, strict=True))
        self.poller = select.poll()
        for fd in (*pipes, wake):
            self.poller.register(fd, select.POLLIN)
        self.pidfd = open_pidfd(process.pid)
        if self.pidfd >= 0:
            self.poller.register(self.pidfd, select.POLLIN)
        self.open_pipes = len(pipes)
        self.exited = False
        self.last_output = time.monotonic()

    def wait(self, seconds: float | None) -> bool:
        """Wait up to *seconds* (None: until something happens) and take in what happened;
        True when the child's exit was seen just now."""
        if self.pidfd < 0 and not self.exited:
            seconds = _POLL_SECONDS if seconds is None else min(seconds, _POLL_SECONDS)
        exited_now = False
        for fd, events in self.poller.poll(None if seconds is None else seconds * 1000):
            if fd == self.pidfd:
                self.exited = exited_now = True
                self.poller.unregister(fd)
            elif fd not in self.readers:
                drain(fd)  # the wake-up pipe
            elif read_ready(self.poller, fd, events, *self.readers[fd]):
                self.last_output = time.monotonic()
            else:
                self.open_pipes -= 1
        if self.pidfd < 0 and not self.exited:
            self.exited = exited_now = self.process.poll() is not None
        return exited_now

    def drain_for(self, seconds: float) -> None:
        """Read what is left for up to *seconds*: after SIGKILL, a process that left the
        group (setsid) may hold a pipe open forever."""
        until = time.monotonic() + seconds
        while self.open_pipes and (left := until - time.monotonic()) > 0:
            self.wait(left)

    def close(self) -> None:
        """Stop watching; what a tail still holds goes to its file (a pipe still open: a
        process the child left holds it, so its end of file never came)."""
        for tail, sink in self.readers.values():
            sink.write(tail.flush())
        if self.pidfd >= 0:
            os.close(self.pidfd)
            self.pidfd = -1
