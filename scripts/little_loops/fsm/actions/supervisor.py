"""Run one action's process to its end: read its pipes, enforce its limits, end all it started."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from little_loops.fsm.actions.request import ActionResult
from little_loops.fsm.actions.retry_watch import HeardTail, RetryWatch
from little_loops.fsm.actions.spec import GAVE_WAY
from little_loops.fsm.facts.timefmt import format_duration
from little_loops.fsm.processes import launch
from little_loops.fsm.processes.containment import CONTAINMENT, Contained
from little_loops.fsm.processes.pipes import Sink, Tail, Watch, drain

if TYPE_CHECKING:
    from little_loops.fsm.actions.spec import OwnRetry

TIMEOUT_EXIT_CODE = 124
CANNOT_RUN_EXIT_CODE = 126
NOT_FOUND_EXIT_CODE = 127
INTERRUPTED_EXIT_CODE = 130
STOPPED_EXIT_CODE = 143
GAVE_WAY_EXIT_CODE = 1  # ended when it began retrying a refused call itself
DEFAULT_TAIL_BYTES = 4 * 1024 * 1024

_FINAL_DRAIN_SECONDS = 0.25  # after SIGKILL, how long to read what is left before giving up
_NEVER = float("inf")


class ProcessSupervisor:
    """Run children one at a time, each started and ended through processes/containment.py.

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
        self._child: Contained | None = None
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
        in_fd: int = -1,
        own_retry: OwnRetry | None = None,
    ) -> ActionResult:
        """Run *argv* to its end or a limit (`limits`: timeout and idle timeout, seconds);
        its stdin is *in_fd* (a file: nothing to feed, so no pipe to deadlock on), else
        /dev/null. With *own_retry*, it is ended when its stderr says it retries a
        refused call itself (more than `allowed` times, or one `at_once` names); the error is
        what it said.

        Raises OSError when it cannot start and ValueError for a NUL byte in *argv*.
        """
        if self._wake_r < 0:
            self._wake_r, self._wake_w = os.pipe()
            os.set_blocking(self._wake_r, False)
            os.set_blocking(self._wake_w, False)
            self._devnull = os.open(os.devnull, os.O_RDONLY)
        # Bare pipes and a kept /dev/null: file objects for them cost ~7% of a `true` action.
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        try:
            try:
                child = CONTAINMENT.start(
                    argv,
                    cwd=cwd,
                    env=env,
                    streams=(in_fd if in_fd >= 0 else self._devnull, out_w, err_w),
                    programs=self._programs,
                )
            finally:
                os.close(out_w)
                os.close(err_w)
            self._child = child
            pipes, fds = (out_r, err_r), (out_fd, err_fd)
            return self._supervise(child, limits, pipes, fds, out_path, start, own_retry)
        finally:
            os.close(out_r)
            os.close(err_r)

    def stopped(self, start: float) -> ActionResult:
        """The result of an action not started because `cancel()` was called."""
        return self._stopped_result(Tail(1), Tail(1), start, None)

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
        child = self._child
        if child is not None:
            child.signal(signal.SIGTERM)
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
            drain(self._wake_r)

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
        child: Contained,
        limits: tuple[float | None, float | None],
        pipes: tuple[int, int],
        file_fds: tuple[int, int],
        out_path: Path | None,
        start: float,
        own_retry: OwnRetry | None = None,
    ) -> ActionResult:
        """Read both pipes until the child and all it started are done; enforce the limits."""
        heard = RetryWatch(own_retry) if own_retry is not None else None
        out, err = Tail(self.tail_bytes), Tail(self.tail_bytes)
        if heard is not None:
            out = HeardTail(self.tail_bytes, heard, stdout=True)
            err = HeardTail(self.tail_bytes, heard)
        sinks = (Sink(file_fds[0]), Sink(file_fds[1]))
        watch = Watch(child.process, pipes, ((out, sinks[0]), (err, sinks[1])), self._wake_r)
        try:
            stop = self._watch(child, watch, limits, start, heard)
        finally:
            # Also on KeyboardInterrupt & co: never wait for a child that may still run.
            self._child = None
            watch.close()
            returncode = child.reap()
        if stop is None and self._cancel_reason is not None:
            stop = "cancel"  # it ended while cancel() was already killing it
        if stop == "cancel":
            return self._stopped_result(out, err, start, out_path)
        if stop == "gave_way" and heard is not None:
            message = f"{GAVE_WAY}{heard.heard}"
            return _result(out, err, GAVE_WAY_EXIT_CODE, start, out_path, message)
        if stop is not None:
            limit = limits[0] if stop == "timeout" else limits[1]
            span = format_duration((limit or 0) * 1000)
            if stop == "timeout":
                message = f"action timed out after {span}"
            else:
                message = f"action printed nothing for {span} (idle_timeout)"
            return _result(out, err, TIMEOUT_EXIT_CODE, start, out_path, message, timed_out=True)
        write_note = ""
        write_error = sinks[0].write_error or sinks[1].write_error
        if write_error is not None:
            # The action is not at fault; its tail is still good, only the file is incomplete.
            write_note = f"cannot write action output to {out_path}: {write_error}"
            out_path = None
        exit_code = 128 - returncode if returncode < 0 else returncode
        return _result(out, err, exit_code, start, out_path, None, note=write_note)

    def _watch(
        self,
        child: Contained,
        watch: Watch,
        limits: tuple[float | None, float | None],
        start: float,
        heard: RetryWatch | None = None,
    ) -> str | None:
        """Read until the child's pipes close and it has exited, or a limit hits; then
        SIGTERM all of it, SIGKILL it `grace_seconds` later (or when the pipes close).
        Returns the limit that stopped it ("timeout", "idle", "cancel" or "gave_way": it
        said it retries a refused call itself), or None."""
        timeout, idle = limits
        deadline = start + timeout if timeout is not None else _NEVER
        stop: str | None = None
        kill_at: float | None = None  # set when everything got SIGTERM
        while True:
            now = time.monotonic()
            if kill_at is None:
                stop = self._limit_hit(now, deadline, idle, watch.last_output)
                if stop is None and not watch.exited and heard is not None and heard.expire(now):
                    stop = "gave_way"
                if stop is not None or watch.exited:
                    # On a limit, or when the action is over: whatever it left running
                    # in its group, or detached from it, goes too.
                    child.signal(signal.SIGTERM)
                    child.signal_detached(signal.SIGTERM, exited=watch.exited)
                    kill_at = now + self.grace_seconds
            elif now >= kill_at:
                break
            if watch.exited and not watch.open_pipes:
                break
            if kill_at is not None:
                wake_at = kill_at
            elif idle is not None:
                wake_at = min(deadline, watch.last_output + idle)
            else:
                wake_at = deadline
            if kill_at is None and heard is not None and heard.due is not None:
                wake_at = min(wake_at, max(heard.due, now))
            wake_at = min(wake_at, child.housekeep())
            wait = None if wake_at == _NEVER else max(0.0, wake_at - now)
            if watch.wait(wait) and kill_at is not None:
                # What it detached is ours now: it goes the same way.
                child.signal_detached(signal.SIGTERM, exited=True)
        child.signal(signal.SIGKILL)
        child.signal_detached(signal.SIGKILL, exited=watch.exited)
        watch.drain_for(_FINAL_DRAIN_SECONDS)
        return stop

    def _limit_hit(
        self, now: float, deadline: float, idle: float | None, last_output: float
    ) -> str | None:
        if self._cancel_reason is not None:
            return "cancel"
        if now >= deadline:
            return "timeout"
        if idle is not None and now >= last_output + idle:
            return "idle"
        return None

    def _stopped_result(
        self, out: Tail, err: Tail, start: float, out_path: Path | None
    ) -> ActionResult:
        message = f"action cancelled ({self._cancel_reason})"
        return _result(out, err, self._cancel_code, start, out_path, message)


def _result(
    out: Tail,
    err: Tail,
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
