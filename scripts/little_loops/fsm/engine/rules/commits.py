"""The checkpoint rule of a worktree run: `commit:` after an action, `rollback:` before it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from little_loops.fsm.definition.model.typed import FSMLoop, StateConfig
from little_loops.fsm.engine import events
from little_loops.fsm.engine.commits import MAX_LISTED, Git, GitFailed, commit_message
from little_loops.fsm.engine.records import ExecutorSnapshot
from little_loops.fsm.facts.events import Event

Emit = Callable[[Event, Mapping[str, object]], None]


class Commits:
    """Commits and rolls back the worktree of a worktree run (nothing outside one)."""

    def __init__(self, fsm: FSMLoop, emit: Emit, worktree: Path | None) -> None:
        self.fsm = fsm
        self.emit = emit
        self.worktree = worktree

    def dump(self) -> dict[str, Any]:
        return {}  # git keeps what it did

    def restore(self, snap: ExecutorSnapshot) -> None:
        return None

    def after(self, name: str, state: StateConfig, output: str | None, pass_number: int) -> None:
        """Commit the worktree after state *name*'s action (*output*), if it changed."""
        if self.worktree is None or not self.fsm.commits_after(state):
            return
        git = Git(self.worktree)
        payload = events.Checkpoint({"state": name, "pass": pass_number})
        try:
            git.refuse_main_checkout()
            if not git.changes():
                return
            git("add", "-A")
            message = commit_message(self.fsm.name, name, pass_number, output)
            paragraphs = [arg for text in message for arg in ("-m", text)]
            git("commit", "-q", *paragraphs, config=git.identity())
            payload["sha"] = git("rev-parse", "HEAD").strip()
        except GitFailed as exc:
            # The run goes on: its changes stay in the worktree, for the next commit.
            payload["error"] = str(exc)
        self.emit(Event.CHECKPOINT, payload)

    def before(self, name: str, state: StateConfig) -> None:
        """Return the worktree to its last commit before state *name*'s action."""
        if self.worktree is None or not state.rollback:
            return
        git = Git(self.worktree)
        payload = events.Rollback(state=name)
        try:
            git.refuse_main_checkout()
            files = git.changes()
            git("reset", "-q", "--hard", "HEAD")
            git("clean", "-q", "-f", "-d")
            payload["sha"] = git("rev-parse", "HEAD").strip()
            payload["count"] = len(files)
            payload["files"] = files[:MAX_LISTED]
        except GitFailed as exc:
            payload["error"] = str(exc)
        self.emit(Event.ROLLBACK, payload)
