"""Run one child process in its own session: read its pipes, enforce limits, kill its group."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from little_loops.fsm.actions import launch
from little_loops.fsm.actions.descendants import Children
from little_loops.fsm.actions.request import ActionResult
from little_loops.fsm.facts.timefmt import format_duration

TIMEOUT_EXIT_CODE = 124
CANNOT_RUN_EXIT_CODE = 126
NOT_FOUND_EXIT_CODE = 127
INTERRUPTED_EXIT_CODE = 130
STOPPED_EXIT_CODE = 143
DEFAULT_TAIL_BYTES = 4 * 1024 * 1024

_CHUNK = 64 * 1024
_FINAL_DRAIN_SECONDS = 0.25  # after SIGKILL, how long to read what is left before giving up
_POLL_SECONDS = 0.05  # only without pidfd (not Linux): how often to look for the child's exit
_NEVER = float("inf")
_HUNG_UP_EMPTY = select.POLLHUP | select.POLLIN


class _Tail:
    """The last `limit` bytes of a stream, and how many bytes it had in all."""

    __slots__ = ("buf", "limit", "total")

    def __init__(self, limit: int) -> None:
        self.buf = bytearray()
        self.limit = limit
        self.total = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        self.buf += data
        # Trimming at twice the limit keeps the copying linear in the output size.
        if len(self.buf) > 2 * self.limit:
            del self.buf[: len(self.buf) - self.limit]

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


class ProcessSupervisor:
    """Run children one at a time, each in its own session (process group).

    Stdout and stderr are read together in the calling thread; at most `tail_bytes` of
    each stay in memory, all of stdout and stderr go to the files given. A timeout, idle
    timeout or `cancel()` sends SIGTERM to the whole group and SIGKILL `grace_seconds`
    later; processes a child leaves behind are ended the same way when it exits.
    """

    def __init__(self, tail_bytes: int = DEFAULT_TAIL_BYTES, grace_seconds: float = 2.0) -> None:
        if tail_bytes < 1:
            raise ValueError("tail_bytes must be at least 1")
        self.tail_bytes = tail_bytes
        self.grace_seconds = grace_seconds
        self._pgid: int | None = None
        self._cancel_reason: str | None = None
        self._cancel_code = STOPPED_EXIT_CODE
        self._wake_r = -1
        self._wake_w = -1
        self._devnull = -1
        self._programs = launch.ProgramPaths()

    def spawn(
        self,
        argv: Sequence[str],
        cwd: Path | None,
        env: Mapping[str, str] | None,
        limits: tuple[float | None, float | None],
        out_fd: int,
        out_path: Path | None,
        start: float,
        err_fd: int = -1,
    ) -> ActionResult:
        """Run *argv* to its end or a limit (`limits`: timeout and idle timeout, seconds).

        Raises OSError when it cannot start and ValueError for a NUL byte in *argv*.
        """
        if self._wake_r < 0:
            self._wake_r, self._wake_w = os.pipe()
            os.set_blocking(self._wake_r, False)
            os.set_blocking(self._wake_w, False)
            self._devnull = os.open(os.devnull, os.O_RDONLY)
        # Bare pipes and a kept /dev/null: Popen's file objects cost ~7% of a `true` action.
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        children = Children.now()
        try:
            try:
                proc = launch.start(argv, cwd, env, (self._devnull, out_w, err_w), self._programs)
            finally:
                os.close(out_w)
                os.close(err_w)
            self._pgid = proc.pid
            if children is not None:
                children.leader = proc.pid
            fds = (out_fd, err_fd)
            return self._supervise(proc, limits, out_r, err_r, fds, out_path, start, children)
        finally:
            os.close(out_r)
            os.close(err_r)

    def stopped(self, start: float) -> ActionResult:
        """The result of an action not started because `cancel()` was called."""
        return self._stopped_result(_Tail(1), _Tail(1), start, None)

    def cancel(self, reason: str = "stopped", exit_code: int | None = None) -> None:
        """Stop the running action, and refuse new ones until `reset()`.

        Safe to call from another thread or a signal handler: it takes no locks, sends
        SIGTERM to the child's process group and wakes the reading thread, which escalates
        to SIGKILL after the grace period. The action's result gets `exit_code` (default 130
        for reason "interrupted", else 143) and `error` naming the reason.
        """
        if self._cancel_reason is None:
            if exit_code is None:
                interrupted = reason == "interrupted"
                exit_code = INTERRUPTED_EXIT_CODE if interrupted else STOPPED_EXIT_CODE
            self._cancel_code = exit_code
            self._cancel_reason = reason
        pgid = self._pgid
        if pgid is not None:
            with contextlib.suppress(OSError):
                os.killpg(pgid, signal.SIGTERM)
        if self._wake_w >= 0:
            with contextlib.suppress(OSError):
                os.write(self._wake_w, b"\0")

    @property
    def cancelled(self) -> str | None:
        """The reason given to `cancel()`, or None."""
        return self._cancel_reason

    def reset(self) -> None:
        """Accept actions again after `cancel()`."""
        self._cancel_reason = None
        if self._wake_r >= 0:
            _drain_wake(self._wake_r)

    def close(self) -> None:
        """Release the runner's file descriptors; do not call while an action runs."""
        for fd in (self._wake_r, self._wake_w, self._devnull):
            if fd >= 0:
                os.close(fd)
        self._wake_r = self._wake_w = self._devnull = -1

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()

    def _supervise(
        self,
        proc: subprocess.Popen[bytes],
        limits: tuple[float | None, float | None],
        out_r: int,
        err_r: int,
        file_fds: tuple[int, int],
        out_path: Path | None,
        start: float,
        children: Children | None,
    ) -> ActionResult:
        """Read both pipes until the child and its group are done; enforce the limits.

        With `children` (descendants are adopted), what the child detached from its group
        is signalled with the group and reaped at the end.
        """
        out, err = _Tail(self.tail_bytes), _Tail(self.tail_bytes)
        tails = {out_r: out, err_r: err}
        sinks = {out_r: _Sink(file_fds[0]), err_r: _Sink(file_fds[1])}
        poller = select.poll()
        for fd in (out_r, err_r, self._wake_r):
            poller.register(fd, select.POLLIN)
        pidfd = _open_pidfd(proc.pid)
        if pidfd >= 0:
            poller.register(pidfd, select.POLLIN)
        open_pipes, exited = 2, False
        timeout, idle = limits
        deadline = start + timeout if timeout is not None else _NEVER
        last_output = time.monotonic()
        stop: str | None = None  # "timeout", "idle" or "cancel" once a limit hits
        kill_at: float | None = None  # set when the group got SIGTERM
        killed = False  # the group got SIGKILL
        try:
            while True:
                now = time.monotonic()
                if kill_at is None:
                    if self._cancel_reason is not None:
                        stop = "cancel"
                    elif now >= deadline:
                        stop = "timeout"
                    elif idle is not None and now >= last_output + idle:
                        stop = "idle"
                    if stop is not None or exited:
                        # On a limit, or when the action is over: whatever it left running
                        # in its group, or detached from it, goes too.
                        _signal_group(proc.pid, signal.SIGTERM)
                        if children is not None:
                            children.signal_strays(signal.SIGTERM, action_exited=exited)
                        kill_at = now + self.grace_seconds
                elif now >= kill_at:
                    break
                if exited and not open_pipes:
                    break
                if kill_at is not None:
                    wake_at = kill_at
                elif idle is not None:
                    wake_at = min(deadline, last_output + idle)
                else:
                    wake_at = deadline
                if children is not None:
                    if now >= children.reap_at:  # adopted orphans that ended: no zombies
                        children.reap_ended()
                    wake_at = min(wake_at, children.reap_at)
                wait = None if wake_at == _NEVER else max(0.0, wake_at - now)
                if pidfd < 0 and not exited:
                    wait = _POLL_SECONDS if wait is None else min(wait, _POLL_SECONDS)
                for fd, events in poller.poll(None if wait is None else wait * 1000):
                    if fd == self._wake_r:
                        _drain_wake(fd)
                    elif fd == pidfd:
                        exited = True
                        poller.unregister(fd)
                        if kill_at is not None and children is not None:
                            # What it detached is ours now: it goes the same way.
                            children.signal_strays(signal.SIGTERM, action_exited=True)
                    elif _read(poller, fd, events, tails[fd], sinks[fd]):
                        last_output = time.monotonic()
                    else:
                        open_pipes -= 1
                if pidfd < 0 and not exited:
                    exited = proc.poll() is not None
            # The unreaped leader keeps the group id ours, so this cannot hit a stranger.
            _signal_group(proc.pid, signal.SIGKILL)
            if children is not None and not children.settled:
                children.signal_strays(signal.SIGKILL, action_exited=exited)
            killed = True
            # A process that left the group (setsid) may hold a pipe forever: read briefly.
            drain_until = time.monotonic() + _FINAL_DRAIN_SECONDS
            while open_pipes and (left := drain_until - time.monotonic()) > 0:
                for fd, events in poller.poll(left * 1000):
                    if fd == self._wake_r:
                        _drain_wake(fd)
                    elif fd != pidfd and not _read(poller, fd, events, tails[fd], sinks[fd]):
                        open_pipes -= 1
        finally:
            # Also on KeyboardInterrupt & co: never wait for a child that may still run.
            if not killed:
                _signal_group(proc.pid, signal.SIGKILL)
            self._pgid = None
            if pidfd >= 0:
                os.close(pidfd)
            returncode = proc.wait()
            if children is not None:
                children.end_strays()
        write_note = ""
        if stop is None and self._cancel_reason is not None:
            stop = "cancel"  # it ended while cancel() was already killing it
        if stop == "cancel":
            return self._stopped_result(out, err, start, out_path)
        if stop is not None:
            limit = timeout if stop == "timeout" else idle
            span = format_duration((limit or 0) * 1000)
            if stop == "timeout":
                message = f"action timed out after {span}"
            else:
                message = f"action printed nothing for {span} (idle_timeout)"
            return _result(out, err, TIMEOUT_EXIT_CODE, start, out_path, message, timed_out=True)
        write_error = sinks[out_r].write_error or sinks[err_r].write_error
        if write_error is not None:
            # The action is not at fault; its tail is still good, only the file is incomplete.
            write_note = f"cannot write action output to {out_path}: {write_error}"
            out_path = None
        exit_code = 128 - returncode if returncode < 0 else returncode
        return _result(out, err, exit_code, start, out_path, None, note=write_note)

    def _stopped_result(
        self, out: _Tail, err: _Tail, start: float, out_path: Path | None
    ) -> ActionResult:
        message = f"action cancelled ({self._cancel_reason})"
        return _result(out, err, self._cancel_code, start, out_path, message)


def _result(
    out: _Tail,
    err: _Tail,
    exit_code: int,
    start: float,
    out_path: Path | None,
    error: str | None,
    *,
    timed_out: bool = False,
    note: str | None = None,
) -> ActionResult:
    """The result; `note` (default: the error) is appended to the action's real stderr."""
    stderr = err.text()
    note = error if note is None else note
    if note:
        sep = "\n" if stderr and not stderr.endswith("\n") else ""
        stderr = f"{stderr}{sep}ll-loop: {note}\n"
    return ActionResult(
        output=out.text(),
        stderr=stderr,
        exit_code=exit_code,
        duration_ms=int((time.monotonic() - start) * 1000),
        truncated=out.truncated or err.truncated,
        output_path=None if out_path is None else str(out_path),
        timed_out=timed_out,
        error=error,
    )


def failed(exit_code: int, message: str, start: float) -> ActionResult:
    duration_ms = int((time.monotonic() - start) * 1000)
    return ActionResult("", f"ll-loop: {message}\n", exit_code, duration_ms, error=message)


def _read(poller: select.poll, fd: int, events: int, tail: _Tail, sink: _Sink) -> bool:
    """Read one chunk from a ready pipe; False (and stop watching it) at end of file.

    A hang-up without POLLIN is an empty pipe whose writers are all gone: end of file
    without the read() that would say so.
    """
    if (events & _HUNG_UP_EMPTY) == select.POLLHUP:
        data = b""
    else:
        try:
            data = os.read(fd, _CHUNK)
        except OSError:
            data = b""
    if not data:
        poller.unregister(fd)
        return False
    tail.add(data)
    sink.write(data)
    return True


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _open_pidfd(pid: int) -> int:
    """A descriptor that becomes readable when `pid` exits, or -1 where there is none."""
    if sys.platform == "linux":
        try:
            return os.pidfd_open(pid)
        except OSError:  # kernels before 5.3, or a seccomp filter
            return -1
    return -1


def _drain_wake(fd: int) -> None:
    with contextlib.suppress(BlockingIOError, InterruptedError):
        while os.read(fd, 512):
            pass


class _Sink:
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
        except OSError as exc:  # e.g. a full disk: the action goes on, the file stops
            self.write_error = exc.strerror or str(exc)
