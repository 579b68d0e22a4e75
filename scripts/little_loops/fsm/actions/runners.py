"""Run one action of any kind (registry.KINDS) as a request/result pair: the one runner."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from little_loops.fsm.actions.registry import KINDS
from little_loops.fsm.actions.request import ActionRequest, ActionResult
from little_loops.fsm.actions.spec import ActionKindSpec, PromptInput
from little_loops.fsm.actions.supervisor import (
    CANNOT_RUN_EXIT_CODE,
    DEFAULT_TAIL_BYTES,
    NOT_FOUND_EXIT_CODE,
    ProcessSupervisor,
    failed,
)
from little_loops.fsm.facts.layout import (
    OUTPUT_SUFFIX,
    PROMPT_SUFFIX,
    action_output_file,
    stderr_file,
)
from little_loops.fsm.facts.runfile import NotOurFile, open_run_file
from little_loops.fsm.facts.spend import reported_cost, unpriced
from little_loops.fsm.processes.launch import Overlay

# Where an agent that reads its prompt from a file (`prompt_input` FILE) finds it.
PROMPT_FILE_VARIABLE = "LL_PROMPT_FILE"


def _spend_read(result: ActionResult, spec: ActionKindSpec) -> ActionResult:
    """*result* with its reported cost read once for every kind: an implausible one is an
    error of its output, and an agent's tokens with no cost and no price are uncounted."""
    cost, implausible = reported_cost(result.cost_usd)
    if implausible is not None:  # any agent's: never counted, an error of its output
        error = result.error or f"{spec.name} {implausible}"
        return dataclasses.replace(result, cost_usd=None, error=error)
    if cost != result.cost_usd:  # below nothing: nothing
        result = dataclasses.replace(result, cost_usd=cost)
    if cost is None and spec.agent is not None:
        # An agent's tokens with no cost said and no price known: spent, not counted.
        why = result.uncounted or unpriced(result.usage)
        if why is not None:
            result = dataclasses.replace(result, uncounted=why)
    return result


class DefaultActionRunner(ProcessSupervisor):
    """Run actions as real processes, each started and read as its kind's spec says.

    *kinds* are the kinds it knows by name (a request may carry its own: `request.spec`);
    *commands* replaces the program of a kind (`spec.program`), by the kind's name. An
    agent that takes its prompt on stdin or in a file gets it written beside its output
    file (`layout.prompt_file`), its stdin that file or `$LL_PROMPT_FILE` its path. The
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

    def spec(self, request: ActionRequest) -> ActionKindSpec:
        """The kind of *request*: the one it carries, else this runner's of its name."""
        return request.spec if request.spec is not None else self.kinds[request.kind]

    def argv(self, request: ActionRequest) -> list[str]:
        """The command line *request*'s action runs as: its kind's, with this runner's
        program for the kind."""
        spec = self.spec(request)
        return spec.argv(request, self.programs.get(spec.name, spec.program))

    def _sets_pwd(self, request: ActionRequest) -> bool:
        """Whether *request*'s program sets $PWD itself (bash, unconfined, as its kind runs
        it): handing it our environment as is spares encoding every variable at each step."""
        spec = self.spec(request)
        return spec.sets_pwd and request.confinement is None and spec.name not in self.programs

    def execute(self, request: ActionRequest) -> ActionResult:
        """Run one action to completion, timeout, idle timeout or cancellation."""
        start = time.monotonic()
        if self._cancel_reason is not None:
            return self.stopped(start)
        spec = self.spec(request)
        refused = spec.refuses(request)
        if refused is not None:
            return failed(CANNOT_RUN_EXIT_CODE, refused, start)
        argv = self.argv(request)
        cwd = request.cwd if request.cwd is not None else self.cwd
        extra = dict(request.env or {})  # laid over our environment (launch.Overlay)
        for name, value in spec.retry_env.items():  # its own retries capped, unless set
            if name not in os.environ and name not in extra:
                extra[name] = value
        if request.confinement is not None:
            if request.confinement.sandbox.command is None:  # bubblewrap's own
                extra.update(spec.home.env)
            argv = request.confinement.argv(argv, cwd, Overlay(extra))
        folder = None if cwd is None else os.path.abspath(cwd)
        if folder is not None and os.environ.get("PWD") != folder and not self._sets_pwd(request):
            # As a shell does: a program that asks $PWD (opencode) gets the folder it runs in.
            extra["PWD"] = folder
        out_path = self._output_path(request)
        out_fd = err_fd = in_fd = -1
        prompt = None
        if spec.prompt_input is not PromptInput.ARGUMENT:
            try:
                prompt = _write_prompt(request.action, out_path)
            except OSError as exc:
                return failed(CANNOT_RUN_EXIT_CODE, f"cannot write the prompt: {exc}", start)
            except UnicodeEncodeError:
                message = "the prompt contains a lone surrogate no encoding can carry"
                return failed(CANNOT_RUN_EXIT_CODE, message, start)
            if spec.prompt_input is PromptInput.STDIN:
                in_fd = os.open(prompt.path, os.O_RDONLY)
            else:
                extra[PROMPT_FILE_VARIABLE] = str(prompt.path)
        if out_path is not None:
            opened = _open_outputs(out_path, start)
            if isinstance(opened, ActionResult):
                return opened
            out_fd, err_fd = opened
        try:
            result = self.spawn(
                argv,
                cwd,
                Overlay(extra) if extra else None,
                (request.timeout, request.idle_timeout),
                out_fd,
                out_path,
                start,
                err_fd,
                in_fd,
                spec.own_retry if spec.own_retry_for is None else spec.own_retry_for(request),
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
            for fd in (out_fd, err_fd, in_fd):
                if fd >= 0:
                    os.close(fd)
            if prompt is not None:
                prompt.done()
        # What it printed as it ran (an agent's tool results too), before its kind reads it.
        note = _sandbox_note(request, result, extra)
        result = _spend_read(spec.finish(result, request), spec)
        if note is not None:
            _note_refusal(result, note, None if out_path is None else stderr_file(out_path))
        return result

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


@dataclass(frozen=True)
class _PromptFile:
    """The prompt of an agent that reads it from stdin or a file: beside the action's
    output file (kept, like it), else a temporary file (removed when the action is done)."""

    path: Path
    temporary: bool

    def done(self) -> None:
        if self.temporary:
            with contextlib.suppress(OSError):
                self.path.unlink()


def _sandbox_note(
    request: ActionRequest, result: ActionResult, extra: Mapping[str, str]
) -> str | None:
    """What the confined step of *request* (run with *extra* over our environment) met in
    its sandbox, for its tail (None: it is not confined, or met nothing). The sandbox's
    modules load for a confined step only."""
    if request.confinement is None:
        return None
    from little_loops.fsm.actions.refusals import step_note

    return step_note(request.confinement, result.output, result.stderr, Overlay(extra))


def _write_prompt(prompt: str, out_path: Path | None) -> _PromptFile:
    data = prompt.encode("utf-8")
    if out_path is None:
        import tempfile  # a prompt run without an output file (a library caller's)

        fd, name = tempfile.mkstemp(prefix="ll-loop-", suffix=PROMPT_SUFFIX)
        made = _PromptFile(Path(name), temporary=True)
    else:
        # Beside the output file: `x.out` → `x.prompt` (kept and archived with it).
        name = out_path.name.removesuffix(OUTPUT_SUFFIX) + PROMPT_SUFFIX
        path = out_path.with_name(name).absolute()
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = open_run_file(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, regular_only=False)
        made = _PromptFile(path, temporary=False)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
    return made


def _note_refusal(result: ActionResult, note: str, err_path: Path | None) -> None:
    """Say in a confined step's stderr (its tail and its file) that it hit its sandbox."""
    result.stderr = f"{result.stderr.rstrip()}\n{note}\n".lstrip("\n")
    if err_path is not None:
        with contextlib.suppress(OSError, NotOurFile):
            fd = open_run_file(err_path, os.O_WRONLY | os.O_APPEND, regular_only=False)
            try:
                os.write(fd, f"{note}\n".encode())
            finally:
                os.close(fd)


def _open_outputs(out_path: Path, start: float) -> tuple[int, int] | ActionResult:
    """The descriptors of the action's stdout and stderr files, or the failed result that
    says why they cannot be written (a planted link or FIFO: the action does not run)."""
    out_fd = -1
    err_path = _stderr_file(out_path)
    try:
        out_fd = _open_output(out_path)
        return out_fd, _open_output(err_path)
    except OSError as exc:
        if out_fd >= 0:
            os.close(out_fd)
        where = err_path if out_fd >= 0 else out_path
        return failed(
            CANNOT_RUN_EXIT_CODE, f"cannot write action output to {where}: {exc.strerror}", start
        )
    except NotOurFile as exc:
        if out_fd >= 0:
            os.close(out_fd)
        return failed(CANNOT_RUN_EXIT_CODE, str(exc), start)


@functools.lru_cache(maxsize=256)
def _stderr_file(out_path: Path) -> Path:
    """`layout.stderr_file`, worked out once per output file (a run's steps reuse theirs)."""
    return stderr_file(out_path)


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
