"""Run one git command (no shell, no prompt) and turn its failure into a one-line error."""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from little_loops.fsm.facts.errors import LoopRuntimeError
from little_loops.fsm.facts.layout import LOCK_SUFFIX
from little_loops.fsm.processes.containment import CONTAINMENT

GIT_TIMEOUT = 120.0  # seconds; a git command that takes longer is stuck (a lock, a hook)
LOCK_WAIT = 10.0  # seconds a git command is tried again while another git holds its lock
# How git says another git holds a lock file (`.git/config.lock`, `packed-refs.lock`).
# In the repository's common git dir, never deleted: `ll-loop-worktrees.lock`.
REPO_LOCK = f"ll-loop-worktrees{LOCK_SUFFIX}"
_held: set[str] = set()  # the repository locks this process holds (so they nest)
_LOCKED = r"could not lock|Unable to create '[^']*': File exists"  # compiled if a git fails


@dataclass(frozen=True)
class GitResult:
    """What one git command returned."""

    argv: tuple[str, ...]
    code: int
    out: str
    err: str

    @property
    def ok(self) -> bool:
        return self.code == 0

    def problem(self) -> str:
        """Git's own words for the failure, on one line (`fatal: ` and hints left out)."""
        lines = [line.strip() for line in self.err.splitlines() if line.strip()]
        lines = [line for line in lines if not line.startswith("hint:")] or ["(no message)"]
        for prefix in ("fatal: ", "error: "):
            lines = [line.removeprefix(prefix) for line in lines]
        return "; ".join(lines[:3])


# Set by git for its hooks: they name one checkout's repository, work tree and index.
GIT_LOCATION = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE")
# For every `status`/`diff` ll-loop runs in a working tree: never run git inside a submodule
# to see whether it is dirty. A step (sandboxed, too) can plant a repository in the tree and
# stage it as a submodule; its own config (core.fsmonitor, a clean filter) would run outside
# any sandbox. On the command line, so a `.gitmodules` `ignore = none` cannot undo it.
NO_SUBMODULE_RUN = "--ignore-submodules=dirty"


def git_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment for git: never ask on a terminal or open an editor, and
    English messages (they are matched nowhere, but users search for them)."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_MERGE_AUTOEDIT": "no", "LC_ALL": "C"}
    for name in GIT_LOCATION:  # `git -C path` must find the repository of *path*
        env.pop(name, None)
    return {**env, **(extra or {})}


def forget_git_location() -> None:
    """Drop GIT_LOCATION from this process's environment, so the actions of a worktree run
    (and the git they run) use the worktree's repository and index, not the main one's."""
    for name in GIT_LOCATION:
        os.environ.pop(name, None)


def git(
    where: Path, *args: str, check: bool = True, env: Mapping[str, str] | None = None
) -> GitResult:
    """`git -C where ARGS...` with output captured; LoopRuntimeError (one line naming the
    command and git's words) when it fails and *check*, or when git cannot be run at all."""
    argv = ("git", "-C", str(where), *args)
    deadline = time.monotonic() + LOCK_WAIT
    while True:
        result = _run(argv, where, env)
        # Runs started together write the same `.git/config` (or packed-refs): git gives
        # up at once on a lock another git holds, having changed nothing, so try again.
        if result.ok or not re.search(_LOCKED, result.err) or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    if check and not result.ok:
        raise LoopRuntimeError(f"`git {_shown(args)}` failed in {where}: {result.problem()}")
    return result


def git_bytes(where: Path, *args: str) -> tuple[int, bytes]:
    """`git -C where ARGS...`: its exit code and its standard output as bytes, unchanged (for
    hashing a tree); LoopRuntimeError only when git cannot be run or is stuck."""
    code, out, _ = _run_raw(("git", "-C", str(where), *args), where, None)
    return code, out


def _run(argv: tuple[str, ...], where: Path, env: Mapping[str, str] | None) -> GitResult:
    code, out, err = _run_raw(argv, where, env)
    return GitResult(argv, code, _text(out), _text(err))


def _run_raw(
    argv: tuple[str, ...], where: Path, env: Mapping[str, str] | None
) -> tuple[int, bytes, bytes]:
    # In our session, as before: a Ctrl-C at the terminal reaches git too.
    streams = (subprocess.DEVNULL, subprocess.PIPE, subprocess.PIPE)
    try:
        child = CONTAINMENT.start(argv, env=git_env(env), streams=streams, session=False)
    except FileNotFoundError:
        raise LoopRuntimeError("git is not installed (no `git` on PATH)") from None
    except OSError as exc:
        raise LoopRuntimeError(f"git cannot be run: {exc.strerror or exc}") from None
    with child.process as proc:
        try:
            out, err = proc.communicate(timeout=GIT_TIMEOUT)
        except subprocess.TimeoutExpired:
            child.end(0.0)
            raise LoopRuntimeError(
                f"`git {_shown(argv[3:])}` in {where} did not finish in {GIT_TIMEOUT:.0f}s"
            ) from None
        except BaseException:  # e.g. Ctrl-C: never leave git running
            child.end(0.0)
            raise
    return proc.returncode, out, err


def _text(data: bytes) -> str:
    """Git's output as text (as `text=True` reads it: undecodable bytes replaced, newlines
    made \\n)."""
    return data.decode(errors="replace").replace("\r\n", "\n").replace("\r", "\n")


def _shown(args: Sequence[str]) -> str:
    """The git subcommand and its options as messages name them (no long values)."""
    return " ".join(arg for arg in args if len(arg) < 60)


def git_lines(where: Path, *args: str) -> list[str]:
    """The non-empty lines git prints for ARGS (it must succeed)."""
    return [line for line in git(where, *args).out.splitlines() if line]


def status_lines(where: Path, *, untracked: bool = True) -> list[str]:
    """`git status --porcelain` of the checkout *where*, a line per changed path: new files
    too (whatever `status.showUntrackedFiles` says), unless not *untracked*."""
    shown = "normal" if untracked else "no"
    argv = ("status", "--porcelain", f"--untracked-files={shown}", NO_SUBMODULE_RUN)
    return git_lines(where, *argv)


@contextlib.contextmanager
def repo_lock(top: Path) -> Iterator[None]:
    """Hold the exclusive flock of the repository *top* (for every checkout of it) while git
    worktrees are added, listed or removed: `git worktree add` reads every other worktree and
    fails on one that another git is making or removing. Nested uses hold it once."""
    common = Path(git(top, "rev-parse", "--git-common-dir").out.strip())
    path = str((common if common.is_absolute() else Path(top) / common) / REPO_LOCK)
    if path in _held:
        yield
        return
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        _held.add(path)
        yield
    finally:
        _held.discard(path)
        os.close(fd)  # closing the descriptor releases the flock
