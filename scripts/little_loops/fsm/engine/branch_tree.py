"""A sub-loop state's `worktree:`: its child runs in a scratch git worktree of a branch."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from little_loops.fsm.facts.errors import LoopRuntimeError
from little_loops.fsm.processes.gitcmd import git

_UNSAFE = re.compile(r"[^A-Za-z0-9-]")


def attach(where: Path, branch: str) -> Path:
    """A new worktree of the existing *branch* of the repository at *where* (checked out
    there, as little-loops does), in a scratch folder; LoopRuntimeError in one line when git
    refuses (no such branch, checked out elsewhere, not a repository)."""
    top = git(where, "rev-parse", "--show-toplevel").out.strip()
    if not git(where, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}", check=False).ok:
        raise LoopRuntimeError(f"worktree: no branch '{branch}' in {top}")
    folder = Path(tempfile.mkdtemp(prefix=f"ll-subloop-{_UNSAFE.sub('-', branch)}-"))
    os.rmdir(folder)  # git makes it
    git(Path(top), "worktree", "add", str(folder), branch)
    return folder


def detach(where: Path, tree: Path) -> None:
    """Remove the worktree *tree* (its uncommitted changes with it); its branch stays."""
    git(where, "worktree", "remove", "--force", str(tree), check=False)
    git(where, "worktree", "prune", check=False)
