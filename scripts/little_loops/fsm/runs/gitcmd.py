"""Run one git command (no shell, no prompt) and turn its failure into a one-line error."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from little_loops.fsm.errors import LoopRuntimeError

GIT_TIMEOUT = 120.0  # seconds; a git command that takes longer is stuck (a lock, a hook)


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


def git_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment for git: never ask on a terminal or open an editor, and
    English messages (they are matched nowhere, but users search for them)."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_MERGE_AUTOEDIT": "no", "LC_ALL": "C"}
    env.pop("GIT_DIR", None)  # `git -C path` must find the repository of *path*
    env.pop("GIT_WORK_TREE", None)
    env.pop("GIT_INDEX_FILE", None)
    return {**env, **(extra or {})}


def git(
    where: Path, *args: str, check: bool = True, env: Mapping[str, str] | None = None
) -> GitResult:
    """`git -C where ARGS...` with output captured; LoopRuntimeError (one line naming the
    command and git's words) when it fails and *check*, or when git cannot be run at all."""
    argv = ("git", "-C", str(where), *args)
    try:
        done = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=GIT_TIMEOUT,
            env=git_env(env),
        )
    except FileNotFoundError:
        raise LoopRuntimeError("git is not installed (no `git` on PATH)") from None
    except subprocess.TimeoutExpired:
        raise LoopRuntimeError(
            f"`git {' '.join(args)}` in {where} did not finish in {GIT_TIMEOUT:.0f}s"
        ) from None
    except OSError as exc:
        raise LoopRuntimeError(f"git cannot be run: {exc.strerror or exc}") from None
    result = GitResult(argv, done.returncode, done.stdout, done.stderr)
    if check and not result.ok:
        raise LoopRuntimeError(f"`git {_shown(args)}` failed in {where}: {result.problem()}")
    return result


def _shown(args: Sequence[str]) -> str:
    """The git subcommand and its options as messages name them (no long values)."""
    return " ".join(arg for arg in args if len(arg) < 60)


def git_lines(where: Path, *args: str) -> list[str]:
    """The non-empty lines git prints for ARGS (it must succeed)."""
    return [line for line in git(where, *args).out.splitlines() if line]
