"""Git for the checkpoints of a worktree run: commit messages, the worktree check, history text."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from little_loops.fsm.definition.model.typed import COMMIT_EACH_PASS, FSMLoop
from little_loops.fsm.facts.errors import LoopRuntimeError
from little_loops.fsm.facts.events import Event
from little_loops.fsm.facts.safetext import one_line
from little_loops.fsm.processes.gitcmd import git

SUMMARY_WIDTH = 100  # the action's one-line summary in a commit message
# Fallback identity, used only when the repository has none (its own is never replaced).
FALLBACK_NAME = "ll-loop"
FALLBACK_EMAIL = "ll-loop@localhost"
SHORT_SHA = 7  # the characters of a sha `history` shows
MAX_LISTED = 100  # the discarded files a rollback event names (`count` has them all)


class GitFailed(Exception):
    """A git command failed: its one-line reason."""


@dataclass(frozen=True)
class Git:
    """Runs git in one worktree, never through a shell and never prompting."""

    worktree: Path

    def __call__(self, *args: str, config: Sequence[str] = ()) -> str:
        """`git [CONFIG] ARGS` in the worktree (gitcmd.git: its environment, timeout and
        lock retries); its stdout, or GitFailed with git's last line."""
        try:
            done = git(self.worktree, *config, *args, check=False)
        except LoopRuntimeError as exc:  # git is not there, or it hung past GIT_TIMEOUT
            raise GitFailed(f"git {args[0]}: {exc}") from None
        if not done.ok:
            why = last_line(done.err) or last_line(done.out) or f"exit {done.code}"
            raise GitFailed(f"git {args[0]} failed: {why}")
        return done.out

    def identity(self) -> list[str]:
        """`-c user.name=... -c user.email=...` for what the repository does not configure
        (git's own environment variables still come first)."""
        config: list[str] = []
        for key, fallback in (("user.name", FALLBACK_NAME), ("user.email", FALLBACK_EMAIL)):
            try:
                configured = self("config", key).strip()
            except GitFailed:  # `git config KEY` exits 1 when the key is not set
                configured = ""
            if key == "user.email" and os.environ.get("EMAIL"):
                configured = os.environ["EMAIL"]  # git reads it when user.email is not set
            if not configured:
                config += ["-c", f"{key}={fallback}"]
        return config

    def refuse_main_checkout(self) -> None:
        """A checkpoint commits and resets only a linked worktree, never a main checkout."""
        out = self("rev-parse", "--git-dir", "--git-common-dir").splitlines()
        dirs = {(self.worktree / line).resolve() for line in out}  # relative to the worktree
        if len(out) == 2 and len(dirs) == 1:
            raise GitFailed(f"{self.worktree} is a main checkout, not a worktree: left untouched")

    def changes(self) -> list[str]:
        """The paths `git status` lists (changed, staged, untracked), one per file."""
        out = self("status", "--porcelain=v1", "-z", "--untracked-files=all")
        entries = out.split("\0")
        paths: list[str] = []
        i = 0
        while i < len(entries):
            entry = entries[i]
            i += 1
            if len(entry) < 4:
                continue
            paths.append(entry[3:])
            if entry[0] in "RC":  # a rename or copy: its source path follows
                i += 1
        return paths


def last_line(text: str) -> str:
    """The last non-empty line of *text*, stripped (empty when there is none)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def summary_line(output: str | None) -> str:
    """An action's one-line summary: its last non-empty output line, cut to SUMMARY_WIDTH."""
    line = one_line(last_line(output or ""))
    return line if len(line) <= SUMMARY_WIDTH else line[: SUMMARY_WIDTH - 1].rstrip() + "…"


def commit_message(loop: str, state: str, pass_number: int, output: str | None) -> list[str]:
    """The commit's title, then the action's summary when it has one (a paragraph each)."""
    title = f"ll-loop {loop}: {state} (pass {pass_number})"
    summary = summary_line(output)
    return [title, summary] if summary else [title]


def uses_checkpoints(fsm: FSMLoop) -> tuple[str, str] | None:
    """The first checkpoint key *fsm* (or a sub-loop of it) uses and where, else None."""
    if fsm.commit == COMMIT_EACH_PASS:
        return f"commit: {COMMIT_EACH_PASS}", ""
    for name, state in fsm.states.items():
        if state.commit or state.rollback:
            return ("commit:" if state.commit else "rollback:"), f"state '{name}'"
    for child in fsm.children.values():
        found = uses_checkpoints(child)
        if found is not None:
            key, where = found
            return key, f"{where + ' of ' if where else ''}sub-loop '{child.name}'"
    return None


def checkpoint_problem(fsm: FSMLoop, in_worktree: bool) -> str | None:
    """Why *fsm* cannot run outside a worktree (None when it can, or *in_worktree*):
    its checkpoints commit and reset a working tree, never the one a person works in."""
    found = None if in_worktree else uses_checkpoints(fsm)
    if found is None:
        return None
    key, where = found
    return (
        f"loop '{fsm.name}' uses {key}{f' ({where})' if where else ''}; checkpoints need a "
        "worktree: run it with --worktree or set worktree: true"
    )


def commit_text(event: Mapping[str, Any]) -> str:
    """A `checkpoint` or `rollback` event as history shows it, after the state's name."""
    rollback = event.get("event") == Event.ROLLBACK
    if event.get("error"):
        return f"{'rollback' if rollback else 'commit'}: {event['error']}"
    sha = str(event.get("sha") or "?")[:SHORT_SHA]
    if rollback:
        count = event.get("count", 0)
        return f"rollback to {sha}: {count} file{'' if count == 1 else 's'} discarded"
    return f"commit {sha} (pass {event.get('pass')})"
