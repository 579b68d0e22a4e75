"""Run one action, a bash command or a Claude Code prompt, as a request/result pair."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from little_loops.fsm.actions.claude import CLAUDE_JSON_FLAGS, apply_report
from little_loops.fsm.runs.layout import action_output_file
from little_loops.fsm.timefmt import format_duration

TIMEOUT_EXIT_CODE = 124
CANNOT_RUN_EXIT_CODE = 126
NOT_FOUND_EXIT_CODE = 127
INTERRUPTED_EXIT_CODE = 130
STOPPED_EXIT_CODE = 143
DEFAULT_TAIL_BYTES = 4 * 1024 * 1024
CLAUDE_FLAGS: tuple[str, ...] = ("--dangerously-skip-permissions", "-p")
CLAUDE_INSTALL_HINT = "install Claude Code: npm install -g @anthropic-ai/claude-code"
CLAUDE_ROOT_ERROR = (
    "claude refuses --dangerously-skip-permissions as root; "
    "set IS_SANDBOX=1 in a sandbox, or run as a normal user"
)
# What Claude Code (2.1.x) prints on stderr, exit 1, when run as root without IS_SANDBOX=1:
# "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons"
_CLAUDE_ROOT_REFUSAL = "cannot be used with root/sudo privileges"

_CHUNK = 64 * 1024
_FINAL_DRAIN_SECONDS = 0.25  # after SIGKILL, how long to read what is left before giving up
_POLL_SECONDS = 0.05  # only without pidfd (not Linux): how often to look for the child's exit
_NEVER = float("inf")


@dataclass
class ActionResult:
    """What an action did. The first four fields are the executor's original contract.

    `output`/`stderr` hold at most the runner's tail of each stream; `truncated` says the
    real output was longer and `output_path` names the file that has all of stdout.
    `error` is a one-line explanation when the action could not run properly (missing
    executable, claude refusing root, timeout, idle timeout, stop); it means an error verdict.
    """

    output: str
    stderr: str
    exit_code: int
    duration_ms: int
    truncated: bool = False
    output_path: str | None = None
    timed_out: bool = False
    error: str | None = None
    cost_usd: float | None = None  # Claude Code's total_cost_usd for a prompt action
    usage: dict[str, int] | None = None  # Claude Code's token counters


class ActionRunner(Protocol):
    """The narrow interface the executor needs; test doubles implement only this."""

    def run(self, action: str, timeout: int | float, is_slash_command: bool) -> ActionResult:
        """Run `action` (bash, or claude when `is_slash_command`) within `timeout` seconds."""
        ...


@dataclass
class ActionRequest:
    """Everything `DefaultActionRunner.execute` can be told about one action.

    `timeout`/`idle_timeout` are seconds (None: no limit); `cwd` overrides the runner's
    directory; `env` is laid over the current environment; `output_file` receives all of
    stdout (instead of the runner's `output_dir` default).
    """

    action: str
    timeout: float | None
    is_slash_command: bool
    idle_timeout: float | None = None
    cwd: Path | None = None
    env: Mapping[str, str] | None = None
    output_file: Path | None = None


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


class DefaultActionRunner:
    """Run actions as real processes: `bash -c` or `claude --dangerously-skip-permissions -p`.

    Each child gets its own session (process group). Stdout and stderr are read together in
    the calling thread; at most `tail_bytes` of each stay in memory, all of stdout goes to
    the output file when `keep_output`. A timeout, idle timeout or `cancel()` sends SIGTERM to
    the whole group and SIGKILL `grace_seconds` later; processes an action leaves behind are
    ended the same way when it exits. One action at a time per runner.
    """

    def __init__(
        self,
        cwd: Path | None = None,
        output_dir: Path | None = None,
        keep_output: bool = True,
        tail_bytes: int = DEFAULT_TAIL_BYTES,
        claude_command: Sequence[str] = ("claude",),
        grace_seconds: float = 2.0,
    ) -> None:
        if tail_bytes < 1:
            raise ValueError("tail_bytes must be at least 1")
        if not claude_command:
            raise ValueError("claude_command must name an executable")
        self.cwd = cwd
        self.output_dir = output_dir
        self.keep_output = keep_output
        self.tail_bytes = tail_bytes
        self.claude_command = tuple(claude_command)
        self.grace_seconds = grace_seconds
        self._pgid: int | None = None
        self._cancel_reason: str | None = None
        self._cancel_code = STOPPED_EXIT_CODE
        self._wake_r = -1
        self._wake_w = -1
        self._devnull = -1

    def run(self, action: str, timeout: int | float, is_slash_command: bool) -> ActionResult:
        """The `ActionRunner` protocol: run with this runner's directory and output settings."""
        return self.execute(ActionRequest(action, timeout, is_slash_command))

    def argv(self, action: str, is_slash_command: bool) -> list[str]:
        """The command line an action runs as."""
        if is_slash_command:
            return [
                *self.claude_command,
                CLAUDE_FLAGS[0],
                *CLAUDE_JSON_FLAGS,
                CLAUDE_FLAGS[1],
                action,
            ]
        return ["bash", "-c", action]

    def execute(self, request: ActionRequest) -> ActionResult:
        """Run one action to completion, timeout, idle timeout or cancellation."""
        start = time.monotonic()
        if self._cancel_reason is not None:
            return self._stopped_result(_Tail(1), _Tail(1), start, None)
        argv = self.argv(request.action, request.is_slash_command)
        cwd = request.cwd if request.cwd is not None else self.cwd
        env = None if request.env is None else {**os.environ, **request.env}
        out_path = self._output_path(request)
        out_fd = -1
        if out_path is not None:
            try:
                out_path.parent.mkdir(parents=True, exist_ok=True)
                out_fd = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            except OSError as exc:
                msg = f"cannot write action output to {out_path}: {exc.strerror}"
                return _failed(CANNOT_RUN_EXIT_CODE, msg, start)
        if self._wake_r < 0:
            self._wake_r, self._wake_w = os.pipe()
            os.set_blocking(self._wake_r, False)
            os.set_blocking(self._wake_w, False)
            self._devnull = os.open(os.devnull, os.O_RDONLY)
        # Bare pipes and a kept /dev/null: Popen's file objects cost ~7% of a `true` action.
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        try:
            try:
                proc = subprocess.Popen(
                    argv,
                    stdin=self._devnull,
                    stdout=out_w,
                    stderr=err_w,
                    cwd=cwd,
                    env=env,
                    start_new_session=True,
                )
            except OSError as exc:
                return self._spawn_failure(exc, argv[0], cwd, request.is_slash_command, start)
            except ValueError:  # "embedded null byte": a value with \0 interpolated in
                message = "the action contains a NUL byte, which a command line cannot carry"
                return _failed(CANNOT_RUN_EXIT_CODE, message, start)
            finally:
                os.close(out_w)
                os.close(err_w)
            self._pgid = proc.pid
            result = self._supervise(proc, request, out_r, err_r, out_fd, out_path, start)
            return apply_report(result) if request.is_slash_command else result
        finally:
            os.close(out_r)
            os.close(err_r)
            if out_fd >= 0:
                os.close(out_fd)

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

    def __enter__(self) -> DefaultActionRunner:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _output_path(self, request: ActionRequest) -> Path | None:
        if not self.keep_output:
            return None
        if request.output_file is not None:
            return request.output_file
        if self.output_dir is not None:
            return action_output_file(self.output_dir)
        return None

    def _supervise(
        self,
        proc: subprocess.Popen[bytes],
        request: ActionRequest,
        out_r: int,
        err_r: int,
        out_fd: int,
        out_path: Path | None,
        start: float,
    ) -> ActionResult:
        """Read both pipes until the child and its group are done; enforce the limits."""
        out, err = _Tail(self.tail_bytes), _Tail(self.tail_bytes)
        tails = {out_r: out, err_r: err}
        sink = _Sink(out_r, out_fd)
        poller = select.poll()
        for fd in (out_r, err_r, self._wake_r):
            poller.register(fd, select.POLLIN)
        pidfd = _open_pidfd(proc.pid)
        if pidfd >= 0:
            poller.register(pidfd, select.POLLIN)
        open_pipes, exited = 2, False
        deadline = start + request.timeout if request.timeout is not None else _NEVER
        idle = request.idle_timeout
        last_output = time.monotonic()
        stop: str | None = None  # "timeout", "idle" or "cancel" once a limit hits
        kill_at: float | None = None  # set when the group got SIGTERM
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
                        # in its group goes too.
                        _signal_group(proc.pid, signal.SIGTERM)
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
                wait = None if wake_at == _NEVER else max(0.0, wake_at - now)
                if pidfd < 0 and not exited:
                    wait = _POLL_SECONDS if wait is None else min(wait, _POLL_SECONDS)
                for fd, _ in poller.poll(None if wait is None else wait * 1000):
                    if fd == self._wake_r:
                        _drain_wake(fd)
                    elif fd == pidfd:
                        exited = True
                        poller.unregister(fd)
                    elif _read(poller, fd, tails[fd], sink):
                        last_output = time.monotonic()
                    else:
                        open_pipes -= 1
                if pidfd < 0 and not exited:
                    exited = proc.poll() is not None
            # The unreaped leader keeps the group id ours, so this cannot hit a stranger.
            _signal_group(proc.pid, signal.SIGKILL)
            # A process that left the group (setsid) may hold a pipe forever: read briefly.
            drain_until = time.monotonic() + _FINAL_DRAIN_SECONDS
            while open_pipes and (left := drain_until - time.monotonic()) > 0:
                for fd, _ in poller.poll(left * 1000):
                    if fd == self._wake_r:
                        _drain_wake(fd)
                    elif fd != pidfd and not _read(poller, fd, tails[fd], sink):
                        open_pipes -= 1
        finally:
            # Also on KeyboardInterrupt & co: never wait for a child that may still run.
            _signal_group(proc.pid, signal.SIGKILL)
            self._pgid = None
            if pidfd >= 0:
                os.close(pidfd)
            returncode = proc.wait()
        write_note = ""
        if stop is None and self._cancel_reason is not None:
            stop = "cancel"  # it ended while cancel() was already killing it
        if stop == "cancel":
            return self._stopped_result(out, err, start, out_path)
        if stop is not None:
            limit = request.timeout if stop == "timeout" else idle
            span = format_duration((limit or 0) * 1000)
            if stop == "timeout":
                message = f"action timed out after {span}"
            else:
                message = f"action printed nothing for {span} (idle_timeout)"
            return _result(out, err, TIMEOUT_EXIT_CODE, start, out_path, message, timed_out=True)
        if sink.write_error is not None:
            # The action is not at fault; its tail is still good, only the file is incomplete.
            write_note = f"cannot write action output to {out_path}: {sink.write_error}"
            out_path = None
        exit_code = 128 - returncode if returncode < 0 else returncode
        error = None
        if (
            request.is_slash_command
            and exit_code != 0
            and (_CLAUDE_ROOT_REFUSAL in err.text() or _CLAUDE_ROOT_REFUSAL in out.text())
        ):
            error = CLAUDE_ROOT_ERROR
        return _result(out, err, exit_code, start, out_path, error, note=write_note)

    def _stopped_result(
        self, out: _Tail, err: _Tail, start: float, out_path: Path | None
    ) -> ActionResult:
        message = f"action cancelled ({self._cancel_reason})"
        return _result(out, err, self._cancel_code, start, out_path, message)

    def _spawn_failure(
        self,
        exc: OSError,
        program: str,
        cwd: Path | None,
        is_slash_command: bool,
        start: float,
    ) -> ActionResult:
        if isinstance(exc, FileNotFoundError):
            if cwd is not None and not os.path.isdir(cwd):
                return _failed(NOT_FOUND_EXIT_CODE, f"working directory not found: {cwd}", start)
            hint = f" ({CLAUDE_INSTALL_HINT})" if is_slash_command else ""
            message = f"{program}: command not found on PATH{hint}"
            return _failed(NOT_FOUND_EXIT_CODE, message, start)
        if isinstance(exc, PermissionError):
            return _failed(CANNOT_RUN_EXIT_CODE, f"{program}: permission denied", start)
        return _failed(CANNOT_RUN_EXIT_CODE, f"{program}: cannot run: {exc.strerror}", start)


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


def _failed(exit_code: int, message: str, start: float) -> ActionResult:
    duration_ms = int((time.monotonic() - start) * 1000)
    return ActionResult("", f"ll-loop: {message}\n", exit_code, duration_ms, error=message)


def _read(poller: select.poll, fd: int, tail: _Tail, sink: _Sink) -> bool:
    """Read one chunk from a ready pipe; False (and stop watching it) at end of file."""
    try:
        data = os.read(fd, _CHUNK)
    except OSError:
        data = b""
    if not data:
        poller.unregister(fd)
        return False
    tail.add(data)
    if fd == sink.pipe_fd:
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
    """Where all of stdout goes: the output file, until writing it fails once."""

    __slots__ = ("file_fd", "pipe_fd", "write_error")

    def __init__(self, pipe_fd: int, file_fd: int) -> None:
        self.pipe_fd = pipe_fd
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
