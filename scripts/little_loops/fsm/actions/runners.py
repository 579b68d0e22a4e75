"""Run one action of any kind (registry.KINDS) as a request/result pair: the one runner."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from little_loops.fsm.actions.registry import KINDS
from little_loops.fsm.actions.request import ActionRequest, ActionResult
from little_loops.fsm.actions.spec import ActionKindSpec
from little_loops.fsm.actions.supervisor import (
    CANNOT_RUN_EXIT_CODE,
    DEFAULT_TAIL_BYTES,
    NOT_FOUND_EXIT_CODE,
    ProcessSupervisor,
    failed,
)
from little_loops.fsm.facts.layout import action_output_file, stderr_file
from little_loops.fsm.facts.runfile import NotOurFile, open_run_file


class DefaultActionRunner(ProcessSupervisor):
    """Run actions as real processes, each started and read as its kind's spec says.

    *commands* replaces the program of a kind (`spec.program`), by the kind's name. The
    process is run by `ProcessSupervisor` (own session, both pipes read together, at
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
        grace_seconds: float = 2.0,
        commands: Mapping[str, Sequence[str]] | None = None,
        kinds: Mapping[str, ActionKindSpec] = KINDS,
    ) -> None:
        super().__init__(tail_bytes, grace_seconds)
        programs = dict(commands or {})
        for name, program in programs.items():
            if not program:
                raise ValueError(f"the command of the {name} kind must name an executable")
        self.cwd = cwd
        self.output_dir = output_dir
        self.keep_output = keep_output
        self.kinds = kinds
        self.programs = {name: tuple(program) for name, program in programs.items()}

    def run(self, request: ActionRequest) -> ActionResult:
        """The `ActionRunner` protocol: run with this runner's directory and output settings."""
        return self.execute(request)

    def argv(self, request: ActionRequest) -> list[str]:
        """The command line *request*'s action runs as: its kind's, with this runner's
        program for the kind."""
        spec = self.kinds[request.kind]
        return spec.argv(request, self.programs.get(spec.name, spec.program))

    def execute(self, request: ActionRequest) -> ActionResult:
        """Run one action to completion, timeout, idle timeout or cancellation."""
        start = time.monotonic()
        if self._cancel_reason is not None:
            return self.stopped(start)
        spec = self.kinds[request.kind]
        argv = self.argv(request)
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
            return self._spawn_failure(exc, argv[0], cwd, spec.install_hint, start)
        except UnicodeEncodeError as exc:  # a lone surrogate (`\ud83d`): no bytes carry it
            bad = exc.object[exc.start : exc.end].encode("unicode_escape").decode("ascii")
            message = f"the action contains {bad}, a lone surrogate no encoding can carry"
            return failed(CANNOT_RUN_EXIT_CODE, message, start)
        except ValueError:  # "embedded null byte": a value with \0 interpolated in
            message = "the action contains a NUL byte, which a command line cannot carry"
            return failed(CANNOT_RUN_EXIT_CODE, message, start)
        finally:
            for fd in (out_fd, err_fd):
                if fd >= 0:
                    os.close(fd)
        return spec.finish(result, request)

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
        install_hint: str,
        start: float,
    ) -> ActionResult:
        if isinstance(exc, FileNotFoundError):
            if cwd is not None and not os.path.isdir(cwd):
                return failed(NOT_FOUND_EXIT_CODE, f"working directory not found: {cwd}", start)
            hint = f" ({install_hint})" if install_hint else ""
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
