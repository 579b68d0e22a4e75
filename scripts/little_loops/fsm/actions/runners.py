"""Run one action, a bash command or a Claude Code prompt, as a request/result pair."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from little_loops.fsm.actions.claude import CLAUDE_JSON_FLAGS, apply_report, with_tool_calls
from little_loops.fsm.actions.claude_options import claude_flags
from little_loops.fsm.actions.request import ActionRequest, ActionResult
from little_loops.fsm.actions.supervisor import (
    CANNOT_RUN_EXIT_CODE,
    DEFAULT_TAIL_BYTES,
    NOT_FOUND_EXIT_CODE,
    ProcessSupervisor,
    failed,
)
from little_loops.fsm.facts.layout import action_output_file, stderr_file
from little_loops.fsm.facts.runfile import NotOurFile, open_run_file

CLAUDE_FLAGS: tuple[str, ...] = ("--dangerously-skip-permissions", "-p")
CLAUDE_INSTALL_HINT = "install Claude Code: npm install -g @anthropic-ai/claude-code"
CLAUDE_ROOT_ERROR = (
    "claude refuses --dangerously-skip-permissions as root; "
    "set IS_SANDBOX=1 in a sandbox, or run as a normal user"
)
# What Claude Code (2.1.x) prints on stderr, exit 1, when run as root without IS_SANDBOX=1:
# "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons"
_CLAUDE_ROOT_REFUSAL = "cannot be used with root/sudo privileges"


class DefaultActionRunner(ProcessSupervisor):
    """Run actions as real processes: `bash -c` or `claude --dangerously-skip-permissions -p`.

    The process is run by `ProcessSupervisor` (own session, both pipes read together, at
    most `tail_bytes` of each kept, TERM then KILL to the whole group on a limit or
    `cancel()`); all of stdout goes to the output file and all of stderr to the file next
    to it (`layout.stderr_file`) when `keep_output`. One action at a time per runner.
    """

    streams_output = True

    def __init__(
        self,
        cwd: Path | None = None,
        output_dir: Path | None = None,
        keep_output: bool = True,
        tail_bytes: int = DEFAULT_TAIL_BYTES,
        claude_command: Sequence[str] = ("claude",),
        grace_seconds: float = 2.0,
    ) -> None:
        super().__init__(tail_bytes, grace_seconds)
        if not claude_command:
            raise ValueError("claude_command must name an executable")
        self.cwd = cwd
        self.output_dir = output_dir
        self.keep_output = keep_output
        self.claude_command = tuple(claude_command)

    def run(self, action: str, timeout: int | float, is_slash_command: bool) -> ActionResult:
        """The `ActionRunner` protocol: run with this runner's directory and output settings."""
        return self.execute(ActionRequest(action, timeout, is_slash_command))

    def argv(
        self,
        action: str,
        is_slash_command: bool,
        claude: Mapping[str, Any] | None = None,
        resume_session: str | None = None,
    ) -> list[str]:
        """The command line an action runs as (*claude*: its `claude:` options, and
        *resume_session*: the Claude Code session it continues)."""
        if is_slash_command:
            flags = claude_flags(claude or {})
            resume = ["--resume", resume_session] if resume_session else []
            # `-p` ends the (variadic) option values: the prompt cannot be taken for one; `--`
            # ends the options, so a prompt starting with `-` (`--settings=...`) is no flag.
            return [*self.claude_command, *flags, *CLAUDE_JSON_FLAGS, *resume, "-p", "--", action]
        return ["bash", "-c", action]

    def execute(self, request: ActionRequest) -> ActionResult:
        """Run one action to completion, timeout, idle timeout or cancellation."""
        start = time.monotonic()
        if self._cancel_reason is not None:
            return self.stopped(start)
        argv = self.argv(
            request.action, request.is_slash_command, request.claude, request.resume_session
        )
        cwd = request.cwd if request.cwd is not None else self.cwd
        env = None if request.env is None else {**os.environ, **request.env}
        out_path = self._output_path(request)
        out_fd = err_fd = -1
        if out_path is not None:
            err_path = stderr_file(out_path)
            try:
                out_fd = _open_output(out_path)
                err_fd = _open_output(err_path)
            except OSError as exc:
                if out_fd >= 0:
                    os.close(out_fd)
                where = err_path if out_fd >= 0 else out_path
                msg = f"cannot write action output to {where}: {exc.strerror}"
                return failed(CANNOT_RUN_EXIT_CODE, msg, start)
            except NotOurFile as exc:  # a planted link or FIFO: the action does not run
                if out_fd >= 0:
                    os.close(out_fd)
                return failed(CANNOT_RUN_EXIT_CODE, str(exc), start)
        try:
            result = self.spawn(
                argv,
                cwd,
                env,
                (request.timeout, request.idle_timeout),
                out_fd,
                out_path,
                start,
                err_fd,
            )
        except OSError as exc:
            return self._spawn_failure(exc, argv[0], cwd, request.is_slash_command, start)
        except ValueError:  # "embedded null byte": a value with \0 interpolated in
            message = "the action contains a NUL byte, which a command line cannot carry"
            return failed(CANNOT_RUN_EXIT_CODE, message, start)
        finally:
            for fd in (out_fd, err_fd):
                if fd >= 0:
                    os.close(fd)
        if not request.is_slash_command:
            return result
        if (
            result.error is None
            and result.exit_code != 0
            and (_CLAUDE_ROOT_REFUSAL in result.stderr or _CLAUDE_ROOT_REFUSAL in result.output)
        ):
            result.error = CLAUDE_ROOT_ERROR
        transcript = result.output  # apply_report replaces it with Claude's answer
        return with_tool_calls(apply_report(result), transcript)

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
                return failed(NOT_FOUND_EXIT_CODE, f"working directory not found: {cwd}", start)
            hint = f" ({CLAUDE_INSTALL_HINT})" if is_slash_command else ""
            message = f"{program}: command not found on PATH{hint}"
            return failed(NOT_FOUND_EXIT_CODE, message, start)
        if isinstance(exc, PermissionError):
            return failed(CANNOT_RUN_EXIT_CODE, f"{program}: permission denied", start)
        return failed(CANNOT_RUN_EXIT_CODE, f"{program}: cannot run: {exc.strerror}", start)


def _open_output(path: Path) -> int:
    """Open the output file for writing, creating its folder only when opening fails."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    try:
        return open_run_file(path, flags, regular_only=False)
    except FileNotFoundError:
        pass
    # The first action of a run (or a folder removed since): raise what creating it raises.
    path.parent.mkdir(parents=True, exist_ok=True)
    return open_run_file(path, flags, regular_only=False)
